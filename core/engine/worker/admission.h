#pragma once

// A worker's admission of a run: the coordinator's run description and model read and checked
// whole before anything computes. A description this worker cannot honour is refused, naming
// what, never trained with defaults.

#include "engine/internal.h"

#include "common/expected.h"
#include "engine/step/replica.h"
#include "engine/training.h"
#include "engine/wire/outerwire.h"
#include "engine/wire/wiretensors.h"
#include "formats/datasetcache.h"
#include "wire/messages.h"

#include <memory>
#include <optional>

namespace tandem {

// What a worker computes a run with, as it read the coordinator's RunSpec.
struct AdmittedRun {
    wire::RunSpec spec;
    ReplicaOptions options;
    DType wire = DType::F32;        // the gradient and weight bundles' element type
    ModelLayout layout;             // the model's tensors in bundle order
    std::optional<OuterWire> outer; // local-SGD: the outer updates' format
    Model module; // until the replica is started from it (startReplica): then empty

    // The largest tensor bundle either side sends in this run: the cap for its blobs.
    qint64 bundleCap() const;
};

// How a worker computes from the run's settings. Settings it cannot honour (a value outside the
// run description's limits, a loss left to resolve) are refused, naming what is wrong, rather
// than trained with defaults.
Expected<ReplicaOptions> replicaOptions(const wire::WorkerSettings& settings);

// Reads the run description and loads the model archive that came with it. Fails with
// ErrorCode::Corrupt for a description that does not read, ErrorCode::Incompatible for settings
// this worker cannot honour, and ErrorCode::Incompatible with ErrorSubject::Model when the model
// here does not have the schema the coordinator announced. `base`: the frozen weights the
// archive leaves out (the run's base, from this worker's cache), when the spec names one.
// `memoryBytes` (0: no limit): this machine's memory, which a model it is sent cannot exceed.
Expected<AdmittedRun> admitRun(const wire::RunSpec& spec, const QByteArray& modelArchive,
                               const NamedTensors* base = nullptr, int64_t memoryBytes = 0);

// The run's dataset when this worker has it already: the cached copy of the same content, or the
// same spec read here when its hash matches. Null when it must be received.
std::shared_ptr<DatasetSplits> localDataset(const wire::RunSpec& spec, const DatasetCache& cache);

// The replica the run computes on, on `device`. Fails naming the device when it cannot start
// there (out of memory, a model the device cannot run). `note` gets what the worker's log
// should say of how it computes (a frozen bf16 base widened, or why not); `plan`, what the
// memory plan counts on.
Expected<std::unique_ptr<ModelReplica>> startReplica(const DeviceInfo& device,
                                                     const AdmittedRun& run,
                                                     const std::shared_ptr<DatasetSplits>& data,
                                                     QString* note = nullptr,
                                                     MemoryPlanFigures* plan = nullptr);

} // namespace tandem
