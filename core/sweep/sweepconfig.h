#pragma once

// A sweep description: a run description (the base every trial starts from) with a "sweep"
// object that says what to search, how many trials, what to optimise and how to schedule:
//
//   { "model": "mnist-cnn", "data": "fashion-mnist", "epochs": 9,
//     "sweep": { "space": { "lr": {"log_uniform": [1e-4, 1e-2]},
//                           "batch": {"choice": [32, 64, 128]},
//                           "optimizer": {"choice": ["adam", "sgd"]} },
//                "trials": 16, "metric": "test_accuracy",
//                "scheduler": {"kind": "asha", "reduction": 3, "rungs": [1, 3, 9]},
//                "seed": 1 } }
//
// Plain C++/Qt: nothing here trains.

#include "common/expected.h"
#include "engine/training.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <cstdint>

namespace tandem {

// One searched run field and the values it may take.
struct SearchParam {
    enum class Kind { Uniform, LogUniform, Int, Choice };
    QString key; // a run description key: "lr", "batch", "optimizer", …
    Kind kind = Kind::Uniform;
    double lo = 0; // Uniform, LogUniform, Int: the closed range
    double hi = 0;
    QJsonArray choices; // Choice: numbers or names, as the run description takes them

    // The value at u in [0, 1): the same u always gives the same value.
    QJsonValue at(double u) const;
    // `points` values spread over the range (log-spaced for LogUniform, each whole number once
    // for Int), or every choice: the grid scheduler's axis.
    QJsonArray axis(int points) const;
    QJsonObject toJson() const;
};

enum class SchedulerKind { Random, Grid, Asha };

struct SweepConfig {
    QJsonObject base;  // the run description every trial starts from, without "sweep"
    RunConfig baseRun; // the same, read
    QList<SearchParam> space;
    int trials = 0;
    // test_accuracy, test_loss, test_perplexity, test_r2 or test_mae
    QString metric = QStringLiteral("test_accuracy");
    bool maximize = true;
    SchedulerKind scheduler = SchedulerKind::Random;
    int reduction = 3;  // asha: the best 1/reduction of a rung is promoted
    QList<int> rungs;   // the epochs each rung trains to; random and grid: the base's epochs
    int gridPoints = 3; // grid: values per numeric axis
    uint64_t seed = 0;

    // Reads and checks a whole sweep file's object; errors name the field ("sweep.space.lr: …").
    static Expected<SweepConfig> fromJson(const QJsonObject& o);
    // Reads a sweep file; errors name the file, then the field.
    static Expected<SweepConfig> readFile(const QString& path);
    QJsonObject toJson() const;

    // The parameters of trial `index` (0-based). Random and asha draw them from the seed and
    // the index alone, so the same sweep draws the same trials in any order; grid takes the
    // index-th point of the grid.
    QJsonObject trialParams(int index) const;
    // How many trials the sweep runs: `trials`, or for grid the size of the grid when smaller.
    int trialCount() const;
    // The run description of a trial: the base with its parameters, checked.
    Expected<RunConfig> trialRun(const QJsonObject& params) const;
    // "lr=0.0031 batch=64 optimizer=adam"
    static QString paramsText(const QJsonObject& params);
};

QString nameOf(SchedulerKind kind);

} // namespace tandem
