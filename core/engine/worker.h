#pragma once

#include "engine/internal.h"

// Engine-internal: the work both sides share. The coordinator owns the weights, the optimizer
// and the sampler; a worker computes gradients on its device for the sample indices it is
// given. Here are the work itself (WorkRequest, WorkResult, a local mode's LocalRound), the
// ModelReplica that computes it on one device, the WorkerLink the coordinator drives (its
// implementations are coordinator/localworker.h and coordinator/remoteworker.h), and the
// translation of work to and from the wire. A worker process runs the same replica
// (worker/computeloop.h).

#include "common/expected.h"
#include "engine/devices.h"
#include "engine/fragments.h"
#include "engine/objective.h"
#include "engine/optimizer.h"
#include "engine/outerwire.h"
#include "engine/precision.h"
#include "engine/training.h"
#include "formats/dataset.h"
#include "wire/messages.h"

#include <ATen/ATen.h>
#include <torch/script.h>

#include <QStringList>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace tandem {

class ModelReplica;
struct WorkRequest;
struct WorkResult;

// What a worker keeps from one local round to the next for its mode: where its weights stood
// when the round began (local-SGD), or each fragment's global values and where they were sent
// from (streaming).
class RoundState {
public:
    virtual ~RoundState() = default;
};

// The coordinator's record of one remote worker in a local mode: the weights it holds, as
// the coordinator mirrors them, and the model's cut into fragments.
struct RemoteRoundSide {
    WeightMirror mirror;
    int64_t mirrorVersion = -1;
    std::vector<Fragment> fragments;
    // What the result answering the request will carry: every parameter's delta (-1) or one
    // fragment's, and how many values that is.
    int awaitFragment = -1;
    int64_t awaitValues = -1;
};

// A local round: the worker takes `innerSteps` optimizer steps at `innerLr` over consecutive
// slices of the request's samples and returns what its mode sends back instead of a gradient.
// Each local mode defines its round, with the fields it needs, in its own file beside its
// StepPolicy (modes/localsgd.cpp, modes/streaming.cpp); the replica, the workers and the wire
// reach it only through this interface.
class LocalRound {
public:
    LocalRound(int innerSteps, double innerLr)
        : innerSteps(innerSteps)
        , innerLr(innerLr) {}
    virtual ~LocalRound() = default;

    int innerSteps = 1;
    double innerLr = 0;
    // A worker process put whole weights in place before this round.
    bool wholeWeights = false;

    // Rounds are handed out before the last one ends (streaming).
    virtual bool pipelined() const { return false; }
    // The state this kind of round keeps on a worker: `held` when it is of that kind, else a
    // new one.
    virtual std::unique_ptr<RoundState> adopt(std::unique_ptr<RoundState> held) const = 0;
    // With the request's weights in place (`tookWhole`: just taken whole), before the inner
    // steps. Throws std::runtime_error on an assignment that does not fit the model.
    virtual void begin(ModelReplica& replica, RoundState& state, bool tookWhole) const = 0;
    // After the inner steps: the result's tensors, one per parameter, on the CPU (undefined
    // where the round sends nothing back).
    virtual std::vector<at::Tensor> end(ModelReplica& replica, RoundState& state) const = 0;

    // The coordinator, for a remote worker: shapes the request's weights for what the worker
    // holds, and says what the result will carry.
    virtual void shapeForWire(RemoteRoundSide& side, WorkRequest& req, const ModelLayout& layout,
                              DType wire, OuterWire outer) = 0;
    // The round's fields on the wire.
    virtual void describe(wire::Assign& a) const = 0;
    // A worker process: takes the weight update the assignment came with.
    virtual Status takeUpdate(OuterWorkerSide& outer, const ModelLayout& layout,
                              const QByteArray& update, ModelReplica& replica) = 0;
    // A worker process: the round's result in the outer-wire format.
    virtual Expected<QByteArray> pack(OuterWorkerSide& outer, const ModelLayout& layout,
                                      const WorkResult& r) const = 0;
};

struct WorkRequest {
    int64_t step = 0;
    std::vector<int64_t> indices;
    // The coordinator's current parameters and buffers. They are not modified until every
    // result of this step is in, so a worker may read them without copying first. Null when
    // the weights are already in place (a worker process receives them separately).
    const std::vector<at::Tensor>* params = nullptr;
    const std::vector<at::Tensor>* buffers = nullptr;
    uint64_t seed = 0; // seeds dropout and other randomness for this step and worker
    // The same weights packed for the wire, shared by every remote worker of the step.
    std::shared_ptr<const QByteArray> packedWeights;
    bool weightsDelta = false; // packedWeights bring the worker's last weights up to date
    double share = 0;          // this worker's part of the step's samples (shown to it)
    int64_t weightsVersion = 0;
    // A local mode's round, in place of one gradient (null: sync and async).
    std::shared_ptr<LocalRound> local;
    // Called with each parameter's gradient as the backward pass makes it final, before the
    // pass ends, so that it can be on its way while the rest is computed. Only for a step
    // computed in one pass; WorkResult::streamed says whether what it was given stands.
    std::function<void(size_t param, const at::Tensor& grad)> onGradient;
};

struct WorkResult {
    int64_t step = 0;
    int64_t samples = 0;
    double lossSum = 0;              // summed over this worker's samples
    int64_t correct = 0;             // hits the task's accuracy counts (objective.h)
    int64_t counted = 0;             // what they are counted of: samples, positions, labels
    std::vector<at::Tensor> grads;   // mean over this worker's samples, on the CPU
    std::vector<at::Tensor> buffers; // after this step's forward pass, on the CPU
    double computeMs = 0;
    // The most samples the device computed at once without running out of memory, after it
    // once did (0: it never has). The coordinator never gives the worker more than this.
    int64_t memoryCap = 0;
    QStringList notes; // what the run's log should say about this step (an out-of-memory retry)
    // Every gradient passed to WorkRequest::onGradient is this result's. False when the step
    // was not streamed, or was computed again (out of memory, an fp16 overflow) after some
    // were: what was streamed must then be discarded.
    bool streamed = false;
    int64_t earlyBytes = 0; // a remote worker's: bytes of it sent while its backward pass ran
    // When the result reached the coordinator (arrivalClockNs()); 0 when not stamped. A policy
    // that collects results later than they arrive (streaming) times workers by this.
    int64_t arrivedNs = 0;
};

// The monotonic clock results are stamped with, in nanoseconds.
int64_t arrivalClockNs();

class WorkerLink {
public:
    virtual ~WorkerLink() = default;
    virtual QString name() const = 0;
    virtual DeviceInfo device() const = 0;
    // Starts work; returns at once. At most one request is outstanding per worker, except in
    // streaming local-SGD, which queues a second behind it: results come back in order.
    virtual void submit(WorkRequest request) = 0;
    // Blocks until the outstanding request's result (or its failure) is in.
    virtual Expected<WorkResult> wait() = 0;
    // True once wait() would return at once.
    virtual bool ready() const = 0;
    // Called (on any thread) when a result or a failure arrives: lets the async mode wait
    // for whichever worker finishes first.
    void setReadyCallback(std::function<void()> f) { m_onReady = std::move(f); }

protected:
    void notifyReady() {
        if (m_onReady)
            m_onReady();
    }

private:
    std::function<void()> m_onReady;
};

// Builds a batch from dataset rows: images as floats in [0,1], tables as stored floats, token ids
// and integer arrays as int64.
at::Tensor gatherInputs(const Dataset& data, const std::vector<int64_t>& indices);
// The rows' targets: int64 class indices [n] or ids [n, …], or floats [n, …].
at::Tensor gatherTargets(const Dataset& data, const std::vector<int64_t>& indices);

struct ReplicaOptions {
    // Local-SGD's inner steps; the optimizer keeps its state across rounds, as DiLoCo's inner
    // optimizer does.
    OptimizerConfig innerOptimizer;
    Precision precision = Precision::Fp32;  // asked for; the device may fall back to fp32
    LossKind loss = LossKind::CrossEntropy; // as the coordinator resolved it
    // A forward pass over more than this many samples fails as the device's allocator does when
    // memory runs out (0: never). Tests set it, or TANDEM_FAULT_OOM_ABOVE in the environment.
    int64_t faultOomAbove = 0;
    // Loss scaling starts here (0: at LossScaler's 2^16, and only for fp16). Tests set it to
    // force gradient overflows in any precision.
    double lossScale = 0;
    // Passes over more samples than this are computed in parts, their gradients accumulated
    // (0: no limit): what the device's memory holds (memoryplan.h).
    int64_t samplesPerPass = 0;
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
    void accumulate(const std::vector<int64_t>& samples, WorkResult& out,
                    const std::function<void(size_t, const at::Tensor&)>* sink = nullptr);
    void clearGrads();
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
    ReplicaOptions m_options;
    Objective m_objective;
    std::unique_ptr<Optimizer> m_inner;
    Precision m_precision = Precision::Fp32;
    QString m_precisionNote;
    std::optional<LossScaler> m_scaler; // fp16 only
    int64_t m_chunkCap = 0;             // the most samples per pass since an out-of-memory error
    // Where the parameters' gradient hooks pass gradients during a streamed pass; null outside.
    const std::function<void(size_t, const at::Tensor&)>* m_sink = nullptr;
};

// A worker process's side of an assignment: the request it computes (its local round, read
// from the wire by the round's mode), and what the Result message says about the step besides
// its tensors.
Expected<WorkRequest> requestFrom(const wire::Assign& a);
void describeResult(const WorkResult& r, wire::Result& res);
// The coordinator's side: what a Result message says, without its tensors.
WorkResult resultFrom(const wire::Result& res);
// Of the (ns into the step, bytes ready) points a streamed result was let go at, the bytes
// that were ready with at least a tenth of the step's compute still to go before the last
// gradient: those overlapped the backward pass. Gradients that all come in one burst at its
// end (as from a graph optimised into autodiff subgraphs) count for nothing.
qint64 bytesReleasedEarly(const std::vector<std::pair<qint64, qint64>>& released, qint64 stepNs);

} // namespace tandem
