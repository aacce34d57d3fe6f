#pragma once

// What a sweep knows of each trial, and what to run next. The decisions are functions of the
// trial records alone, so a sweep read back from its sweep.jsonl decides as it would have.

#include "sweep/sweepconfig.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace tandem {

struct TrialRecord {
    enum class Status {
        Pending, // waits for a device (new, requeued, or promoted to its next rung)
        Running,
        Waiting, // finished a rung below the last; asha may promote it
        Done,    // trained through the last rung
        Stopped, // asha stopped it early: never promoted
        Failed,  // its run failed (a diverged loss, a model error): not retried
    };
    int id = 0; // 0-based; the trial's folder is trials/NNN
    QJsonObject params;
    int rung = 0;          // the rung it trains to, or last trained to
    QList<double> metrics; // the metric at the end of each rung it finished
    Status status = Status::Pending;
    QString device;         // where it runs or last ran
    QString error;          // Failed: why
    double seconds = 0;     // training wall time, all rungs
    double samplesPerS = 0; // the last rung's, as the engine measured it
    int64_t steps = 0;
    int requeues = 0; // times its device left mid-rung

    bool finishedRung(int r) const { return metrics.size() > r; }
    QJsonObject toJson() const;
    static std::optional<TrialRecord> fromJson(const QJsonObject& o);
    static QString statusName(Status s);
};

// A job for a free device: train `trial` to the end of `rung`.
struct TrialJob {
    int trial = 0;
    int rung = 0;
};

class TrialScheduler {
public:
    explicit TrialScheduler(const SweepConfig& config);

    // The next job for a device that is free now. `fast`: the device is among the fastest the
    // sweep has measured, and asha's promoted trials, which train longest, go to such devices
    // first; a slower device starts new trials while there are any. Marks the trial Running.
    // nullopt: nothing to start until a running trial reports.
    std::optional<TrialJob> next(QList<TrialRecord>& trials, bool fast) const;
    // A job's rung ended with `metric`.
    void report(QList<TrialRecord>& trials, int trial, double metric) const;
    // Nothing runs and nothing is left to start: trials still waiting for a promotion are
    // stopped early. Returns true when the sweep is over.
    bool finish(QList<TrialRecord>& trials) const;
    // Whether `a` is a better metric than `b`.
    bool better(double a, double b) const;
    // The trial with the best metric at its highest finished rung, preferring higher rungs;
    // -1 when none has finished one.
    int best(const QList<TrialRecord>& trials) const;
    // Asha's rule: may the trial be promoted from `rung`, given every result at that rung?
    bool promotable(const QList<TrialRecord>& trials, const TrialRecord& t, int rung) const;

private:
    std::optional<TrialJob> promotion(QList<TrialRecord>& trials) const;
    std::optional<TrialJob> fresh(QList<TrialRecord>& trials) const;

    SweepConfig m_config;
};

} // namespace tandem
