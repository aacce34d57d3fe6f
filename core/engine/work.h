#pragma once

#include "engine/internal.h"

// Engine-internal: the work both sides share. The coordinator owns the weights, the optimizer
// and the sampler; a worker computes gradients on its device for the sample indices it is given.
// Here is the work itself (WorkRequest, WorkResult, a local mode's LocalRound) and the
// WorkerLink the coordinator drives (its implementations are coordinator/localworker.h and
// coordinator/remoteworker.h). The replica that computes it is replica.h; its translation to and
// from the wire workwire.h.

#include "common/expected.h"
#include "engine/devices.h"
#include "engine/modes/fragments.h"
#include "engine/training.h"
#include "engine/wire/outerwire.h"
#include "wire/messages.h"

#include <ATen/ATen.h>

#include <QStringList>

#include <functional>
#include <memory>
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
    // A worker process of a sharded streaming run: the new values of the fragment the round
    // merges, as they landed on this machine (ShardNode::takeLanded: each of the fragment's
    // trainable tensors). Refused by a round that merges none.
    virtual Status takeLanded(const ModelLayout&, const std::vector<at::Tensor>&) {
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("values landed for a round that merges no fragment"));
    }
    // A worker process: the round's result in the outer-wire format. It may take r's tensors
    // (WorkResult::grads) to keep fewer copies of the model at once.
    virtual Expected<QByteArray> pack(OuterWorkerSide& outer, const ModelLayout& layout,
                                      WorkResult& r) const = 0;
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
    // The worker waits for its device before answering, so that its compute time is the
    // device's (the balancer shares steps by it). A lone worker whose results stay on the
    // device need not: the step then never waits for the device.
    bool timed = true;
    // Called with each parameter's gradient as the backward pass makes it final, before the
    // pass ends, so that it can be on its way while the rest is computed. Only for a step
    // computed in one pass; WorkResult::streamed says whether what it was given stands. It keeps
    // what it is given (a copy in a bundle): the replica keeps none, and the result's grads are
    // undefined for each parameter it was given.
    std::function<void(size_t param, const at::Tensor& grad)> onGradient;
    // DPO on every weight, in a worker process: the reference's log-probabilities of each
    // sample's chosen and rejected answer, two a sample in the order of `indices` (the in-process
    // worker looks them up in ReplicaOptions::reference instead).
    std::vector<float> referenceLogps;
};

// A step's training figures while they are still on the device that computed them: reading
// one waits for the device, so they are read when a figure is due, not each step.
struct DeviceFigures {
    at::Tensor lossSum;  // fp32, summed over the samples
    at::Tensor correct;  // int64; undefined where the task has no accuracy
    at::Tensor counted;  // int64
    at::Tensor pairSums; // fp32 [PairFigures::kCount]; undefined but for preference tuning
    bool defined() const { return lossSum.defined(); }
    void add(const DeviceFigures& o);
};

struct WorkResult {
    int64_t step = 0;
    int64_t samples = 0;
    double lossSum = 0;  // summed over this worker's samples
    int64_t correct = 0; // hits the task's accuracy counts (objective.h)
    int64_t counted = 0; // what they are counted of: samples, positions, labels
    PairFigures pairs;   // preference tuning's
    // The figures above, not yet read, where the result stays on the worker's device
    // (ReplicaOptions::resultsOnDevice); the doubles then count nothing of them.
    DeviceFigures figures;
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
    // The machine's device ID (its certificate's); empty for this machine's own worker.
    virtual QString deviceId() const { return {}; }
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

} // namespace tandem
