#pragma once

#include "engine/internal.h"

// Engine-internal: the model's copy on one device that turns sample indices into gradients (or
// runs a local mode's round): what the in-process worker and a worker process both compute
// through (coordinator/localworker.h, worker/computeloop.h).

#include "common/expected.h"
#include "engine/devices.h"
#include "engine/step/batch.h"
#include "engine/step/objective.h"
#include "engine/step/optimizer.h"
#include "engine/step/precision.h"
#include "engine/work.h"
#include "formats/dataset.h"
#include "model/model.h"

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace tandem {

struct ReplicaOptions {
    // Local-SGD's inner steps; the optimizer keeps its state across rounds, as DiLoCo's inner
    // optimizer does.
    OptimizerConfig innerOptimizer;
    Precision precision = Precision::Fp32;  // asked for; the device may fall back to fp32
    LossKind loss = LossKind::CrossEntropy; // as the coordinator resolved it
    double beta = 0.1;                      // dpo and orpo: RunConfig::beta
    // DPO on every weight: Objective::reference, the training pairs' reference
    // log-probabilities, two a pair (a worker process is sent its samples' with each request).
    std::shared_ptr<const std::vector<float>> reference;
    // A forward pass over more than this many samples fails as the device's allocator does when
    // memory runs out (0: never). Tests set it, or TANDEM_FAULT_OOM_ABOVE in the environment.
    int64_t faultOomAbove = 0;
    // A step costs this much more on purpose, counted as compute: fixed milliseconds a step plus
    // milliseconds a sample, until the run's step `costUntilStep` (0: every step). Tests and
    // benchmarks make a fixed-cost "GPU" or a slow-per-sample "CPU" of this machine with it, or
    // TANDEM_FAULT_STEP_COST=FIXED_MS,PER_SAMPLE_MS[,UNTIL_STEP] in the environment.
    double costFixedMs = 0, costPerSampleMs = 0;
    int64_t costUntilStep = 0;
    // Loss scaling starts here (0: at LossScaler's 2^16, and only for fp16). Tests set it to
    // force gradient overflows in any precision.
    double lossScale = 0;
    // Passes over more samples than this are computed in parts, their gradients accumulated
    // (0: no limit): what the device's memory holds (memoryplan.h).
    int64_t samplesPerPass = 0;
    // The in-process worker of a run whose weights live on this replica's device: gradients
    // and buffers stay on the device for the coordinator to use in place, rather than going
    // to the CPU as a worker process's must for the wire.
    bool resultsOnDevice = false;
    // The training set is kept whole on the replica's accelerator (memoryplan.h's
    // keepDataOnDevice): a step copies its sample indices there and nothing else.
    bool dataOnDevice = false;
    // The in-process worker of a run whose steps hand it the coordinator's own weights, which it
    // reads in place (takeWeights): it reads them so from the start, and its copy of the model's
    // weights goes as it is made, so that the run holds them once while it sets up, not twice
    // until its first step.
    bool sharesWeights = false;
};

// A private copy of the model on one device that turns sample indices into gradients. The
// in-process worker and a worker process both compute through it.
//
// Out of memory: a pass over n samples that runs out of device memory is retried at once in
// parts of n/2 (halving again if need be), with the gradients accumulated over the parts, so
// the step's result is the same mean gradient. The replica remembers the size that worked and
// reports it (WorkResult::memoryCap), and the coordinator never gives it more.
class ModelReplica {
public:
    ModelReplica(DeviceInfo device, const Model& model, std::shared_ptr<const Dataset> data,
                 ReplicaOptions options = {});
    ~ModelReplica();

    const DeviceInfo& device() const { return m_device; }
    Precision precision() const { return m_precision; }
    // Why the precision asked for is not the one in use; empty when it is.
    const QString& precisionNote() const { return m_precisionNote; }
    // The replica's own tensors, on its device; a worker process writes received weights here.
    std::vector<at::Tensor>& params() { return m_params; }
    std::vector<at::Tensor>& buffers() { return m_buffers; }
    const Model& module() const { return m_model; }

    // Copies the request's weights in (when it carries any), runs forward and backward on the
    // request's samples and returns the mean gradient, or runs the request's local round.
    // `roundState` keeps the round's state from one round to the next (a round of its own
    // when null). Never throws: LibTorch errors (out of memory, a model that fails) come back
    // as values.
    Expected<WorkResult> compute(const WorkRequest& req, const QString& workerName,
                                 std::unique_ptr<RoundState>* roundState = nullptr);

private:
    // Forward and backward over `samples`, leaving their mean gradient in the parameters' .grad
    // (unscaled). Retries in smaller parts on out-of-memory and, for fp16, at a smaller loss
    // scale on overflow.
    // `referenceRows`: DPO on every weight, the reference's log-probabilities, two a sample.
    void accumulate(const std::vector<int64_t>& samples, WorkResult& out,
                    const std::function<void(size_t, const at::Tensor&)>* sink = nullptr,
                    const float* referenceRows = nullptr);
    void clearGrads();
    // A streamed pass's gradients live in the sink's copy only: each parameter's .grad, which
    // the autograd engine stores just after the parameter's hook, goes once a later hook runs on
    // the same thread (the engine has stored it by then), and the rest as the pass ends
    // (`all`). Without this, a model's gradients would be held twice at the pass's end.
    void releaseStreamed(bool all);
    // The batches of `samples` in parts of `part`, on the device, each passed to `pass` with
    // the positions its loss counts (countedRows, on the device; undefined: all of them): from
    // the resident rows, or gathered on the host a part ahead of the one computing.
    using PartPass = std::function<void(const at::Tensor& x, const at::Tensor& y,
                                        const at::Tensor& rows, int64_t samples)>;
    void forEachPart(const std::vector<int64_t>& samples, int64_t part, const PartPass& pass);
    // A pass's figures into the result: kept on the device (resultsOnDevice), or read.
    void keepFigures(const DeviceFigures& figures, WorkResult& out) const;
    // The request's weights into the replica: shared, not copied, where they already live on
    // this replica's device and nothing here writes to them.
    void takeWeights(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& buffers,
                     bool writesParams);

    DeviceInfo m_device;
    c10::Device m_torchDevice;
    Model m_model;
    std::vector<at::Tensor> m_params;
    std::vector<at::Tensor> m_buffers;
    std::shared_ptr<const Dataset> m_data;
    std::unique_ptr<ResidentRows> m_resident; // the training set on the device, when kept there
    ReplicaOptions m_options;
    Objective m_objective;
    std::unique_ptr<Optimizer> m_inner;
    Precision m_precision = Precision::Fp32;
    QString m_precisionNote;
    std::optional<LossScaler> m_scaler; // fp16 only
    int64_t m_chunkCap = 0;             // the most samples per pass since an out-of-memory error
    // Where the parameters' gradient hooks pass gradients during a streamed pass; null outside.
    const std::function<void(size_t, const at::Tensor&)>* m_sink = nullptr;
    // The parameters whose gradient the sink took in this pass, .grad not yet released, and the
    // thread whose hook took it.
    std::vector<std::pair<size_t, std::thread::id>> m_streamed;
    std::mutex m_streamedMutex;
};

} // namespace tandem
