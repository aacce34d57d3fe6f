#pragma once

#include "engine/internal.h"

// Engine-internal: a run's resumable state in Tandem's checkpoint container.

#include "common/expected.h"
#include "engine/step/basepack.h"
#include "engine/step/optimizer.h"
#include "engine/training.h"

#include "model/model.h"

namespace tandem {

struct RunState {
    RunConfig config;
    int64_t step = 0;     // optimizer steps taken
    int epoch = 0;        // the sampler's current epoch
    int64_t position = 0; // the sampler's position within it
    int completedEpochs = 0;
    // The current epoch's running training figures, so a resumed run reports them whole.
    double epochLossSum = 0;
    int64_t epochCorrect = 0;
    int64_t epochCounted = 0;
    int64_t epochSamples = 0;
    int64_t epochSteps = 0;
    TestMetrics lastTest;
    QString datasetHash;
    QString schemaHash;
    // A model with a frozen base (LoRA): the base's manifest and hash (basepack.h). The
    // checkpoint then holds what changes and names the base; resuming finds it by hash.
    QByteArray baseManifest;
    QString baseHash;
};

// Zoo models are stored by name and rebuilt; a user's TorchScript model is stored as its
// archive (its code), since nothing else can rebuild it. Weights, buffers and optimizer state
// are always Tandem's own tensor records. With a base (state.baseHash), its frozen weights are
// left out: loading finds them by hash in the folder the run was trained from, or in this
// machine's model cache, and refuses by name when neither holds them.
Status writeRunCheckpoint(const QString& path, const Model& module, const Optimizer& optimizer,
                          const RunState& state);
// The same with the optimizer's state given as tensors read when the writer reaches them (a
// sharded run's, SpilledState) after `optimizerSteps` steps.
Status writeRunCheckpoint(const QString& path, const Model& module,
                          const QList<LazyTensor>& optimizerState, int64_t optimizerSteps,
                          const RunState& state);

struct LoadedCheckpoint {
    RunState state;
    Model module;
    // Read from the checkpoint as each is taken (openCheckpoint): the state of a model of
    // gigabytes is never held twice.
    QList<LazyTensor> optimizerState;
    int64_t optimizerSteps = 0;
    // The base, when it was found in the run's folder: its parts are hashed already.
    std::shared_ptr<const BasePack> base;
};
Expected<LoadedCheckpoint> loadRunCheckpoint(const QString& path);

} // namespace tandem
