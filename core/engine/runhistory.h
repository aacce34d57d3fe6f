#pragma once

// A run's history record, one rule for every front end: each run, started from the app or from
// `tandem train`, writes record.json in its folder (its description, when it started, its
// status, and at the end its summary or its error) and lists its folder in the node home's
// history.list, so that the app's History shows command-line runs beside its own. Plain C++/Qt.

#include "common/expected.h"
#include "engine/training.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace tandem {

// What a run leaves in its folder, named here only: the engine writes them, the app, the
// sweep and the tests find them by these names.
struct RunFiles {
    static QString checkpoint() { return QStringLiteral("checkpoint.tandem"); }
    static QString metrics() { return QStringLiteral("metrics.jsonl"); }
    static QString torchScript() { return QStringLiteral("model.pt"); }
    static QString safetensors() { return QStringLiteral("model.safetensors"); }
    // A Hugging Face model's run: the model as a Hugging Face folder, and its adapters as PEFT
    // saves them.
    static QString hfModel() { return QStringLiteral("hf-model"); }
    static QString adapter() { return QStringLiteral("adapter"); }
    // A run that asked for it (RunConfig::gguf): the model for llama.cpp, with Ollama's
    // Modelfile beside it (model.Modelfile).
    static QString gguf() { return QStringLiteral("model.gguf"); }
    static QString record() { return QStringLiteral("record.json"); }
    // What a finished run leaves of its model, and under which name: model.pt and
    // model.safetensors for a TorchScript model; hf-model/ for a Hugging Face one, and adapter/
    // when it trained adapters.
    static QList<std::pair<ExportFormat, QString>> exportsOf(ModelKind kind, bool adapters) {
        if (kind == ModelKind::TorchScript)
            return {{ExportFormat::TorchScript, torchScript()},
                    {ExportFormat::Safetensors, safetensors()}};
        if (!adapters)
            return {{ExportFormat::Hf, hfModel()}};
        return {{ExportFormat::Hf, hfModel()}, {ExportFormat::Peft, adapter()}};
    }
};

// A run's curves as its folder keeps them, to chart a past run: its steps and epochs from
// metrics.jsonl (a resumed run's repeated steps once, as last written), and from its record
// what they mean (the task, the epochs planned, the tokens a sample where the speed is in
// tokens).
struct RunCurves {
    Task task = Task::Classification;
    int epochs = 1;
    int64_t tokensPerSample = 0;
    QList<StepMetrics> steps;
    QList<EpochMetrics> epochEnds;
};

class RunHistory {
public:
    // The record (RunFiles::record()). A folder from before it was named so holds run.json with
    // a "status"; that is read too.
    static QJsonObject read(const QString& runFolder);
    static void write(const QString& runFolder, const QJsonObject& record);

    // The record of a run that starts now (status "running"), keeping the start time of the
    // record a resumed run already has; lists the folder in `home`'s history unless the run
    // asks not to (a sweep's trials are shown by the sweep).
    static QJsonObject started(const RunConfig& config);
    // The name and notes a person gives the run (empty: none; the folder's name stands for it);
    // a resumed run keeps them.
    static void describe(const QString& runFolder, const QString& title, const QString& notes);
    // Marks the end: "finished" or "stopped" with the summary, or "failed" with the error.
    static void ended(const QString& runFolder, const Expected<RunSummary>& result);

    // The run folders listed in `home`'s history that still exist, newest last.
    static QStringList listed(const QString& home);

    // What `runFolder` holds of its curves; an error when it has no metrics.jsonl to read.
    static Expected<RunCurves> curves(const QString& runFolder);

private:
    static void list(const QString& home, const QString& runFolder);
};

} // namespace tandem
