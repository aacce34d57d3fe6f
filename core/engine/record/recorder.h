#pragma once

#include "engine/internal.h"

// Engine-internal: everything a run leaves in its folder. metrics.jsonl (a line per step and
// per epoch, and the summary), the run checkpoint, and the exports (TorchScript and
// safetensors). One component writes them all, so that each file's rules live in one place.

#include "engine/record/runcheckpoint.h"
#include "engine/step/optimizer.h"
#include "engine/training.h"

#include <QFile>

#include <functional>

#include "model/model.h"

namespace tandem {

class Recorder {
public:
    explicit Recorder(const RunConfig& config);

    // Whether the exports the run asks for beyond its model's own can be written: the GGUF file's
    // family, tokenizer and shapes, checked before the run loads anything, so that a model
    // llama.cpp cannot read is refused before it trains.
    Status checkExports() const;
    // Creates the folder and opens metrics.jsonl, appending when the run resumes. `savedStep`
    // is the step of the checkpoint already on disk (-1: none).
    Status open(bool resuming, int64_t savedStep);
    QString checkpointPath() const;
    int64_t savedStep() const { return m_savedStep; }

    // Writes the checkpoint. One that cannot be written (a full disk) never replaces the one
    // on disk, since only a complete file is renamed into place; the error says which is kept.
    Status checkpoint(const Model& module, const Optimizer& optimizer, const RunState& state);
    // The same with the optimizer's state as tensors read when the writer reaches them.
    Status checkpoint(const Model& module, const QList<LazyTensor>& optimizerState,
                      int64_t optimizerSteps, const RunState& state);
    // metrics.jsonl: each line reaches the file as it is written (it is small), so a run that
    // is killed keeps its log up to the last step. A failed write is reported once, through
    // the returned text; training goes on, since the checkpoint, not the log, is what a resume
    // needs.
    QString step(const StepMetrics& m);
    // The sample ledger, in builds with failpoints: with TANDEM_SAMPLE_LEDGER=FILE, a JSON line
    // per applied step with the indices of the samples its update used, after a line
    // {"from": S} saying that this process continues from step S. bench/faults.py reads it to
    // prove that no sample is lost or repeated within an epoch, across faults and resumes.
    void samples(int64_t step, int epoch, const std::vector<int64_t>& indices);
    void epoch(const EpochMetrics& m);
    void summary(const RunSummary& s);
    // model.pt (TorchScript, in eval mode, which is what inference wants) and
    // model.safetensors; a Hugging Face model's folder and adapters, and the GGUF file the run
    // asked for, its progress told to `log`.
    Status exportModel(const Model& module,
                       const std::function<void(const QString&)>& log = nullptr);

private:
    void write(const QJsonObject& o);
    // A checkpoint's write of `step`: noted when it succeeded, and a failure says which
    // checkpoint is kept.
    Status written(const Status& st, int64_t step);

    QString m_outDir;
    QString m_model;
    QString m_gguf;
    QFile m_log;
    QFile m_ledger;
    bool m_logFailed = false;
    QString m_logError;
    int64_t m_savedStep = -1;
};

} // namespace tandem
