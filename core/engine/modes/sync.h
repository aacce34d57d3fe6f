#pragma once

#include "engine/internal.h"

// Engine-internal: synchronous data parallelism. Every step's global batch is split among the
// workers by the balancer; each returns the mean gradient over its share, and the shares are
// combined weighted by size, which is the mean gradient over the whole batch: the same step
// as one machine would take. Local-SGD (modes/localsgd.cpp) is the same exchange with rounds
// of inner steps in place of one gradient.

#include "engine/coordinator/steppolicy.h"
#include "engine/wire/wiretensors.h"
#include "engine/work.h"

namespace tandem {

class SyncPolicy : public StepPolicy {
public:
    Expected<EpochEnd> runEpoch(StepContext& ctx) override;

protected:
    // Forward passes per worker per step (local-SGD's inner steps).
    virtual int64_t passes(const RunConfig&) const { return 1; }
    // Fills in what this mode asks of a worker beyond its samples, given the step's learning
    // rate and how its samples are split among the workers (`counts`, one per live worker).
    virtual void shapeRequest(WorkRequest&, StepContext&, double,
                              const std::vector<int64_t>& /*counts*/) {}
    // The learning rate the coordinator's optimizer applies the combined result with.
    virtual double serverLr(const StepContext&, double lr) const { return lr; }

private:
    struct Collected {
        std::vector<WorkResult> results;
        std::vector<size_t> from;       // each result's pool member
        std::vector<double> rttMs;      // per pool member
        std::vector<int64_t> took;      // samples, per pool member
        std::vector<double> computeMs;  // per pool member
        std::vector<int64_t> arrivedNs; // per pool member: its last result's (arrivalClockNs())
        double packMs = 0;              // weights packed for remote workers (stepSplit)
        QStringList lost;               // remote workers lost in the step, by device ID
    };
    Status step(StepContext& ctx);
    // The step's results, from dispatch(), and a sharded step's update. A sharded step that
    // loses a machine is taken again from its start on the machines left, where the run can
    // go on without it (StepContext::reformShards).
    Status collect(StepContext& ctx, const std::vector<int64_t>& indices, double lr, Collected& c);
    // Hands out the step's samples; whatever a worker that fails was holding goes to the
    // others, so no sample of the step is lost and none is used twice.
    Status dispatch(StepContext& ctx, const std::vector<int64_t>& indices, double lr, Collected& c);
    QList<WorkerStepStats> workerStats(StepContext& ctx, Collected& c, double stepMs) const;
    // A sharded run's step, as it starts: every owner is told which workers count and by how
    // much (their slices of `batch`), so that each steps its range once it holds theirs.
    void beginShardedStep(StepContext& ctx, const std::vector<size_t>& live,
                          const std::vector<std::vector<int64_t>>& slices, double batch, double lr);
    // Whether the step's remote workers take the weights whole: always, unless the run is
    // sharded, where they do with the first step after each setup only (from then on every owner
    // sends its range to every machine after each step).
    bool sendsWeights(StepContext& ctx);
    // This machine's worker hands each gradient to the owners as its backward pass makes it
    // final (ShardNode::gradientsReady takes whole ranges).
    void streamOwnGradients(StepContext& ctx, WorkRequest& req);
    // A sharded run's update, once every result is in: the rest of this machine's gradients go
    // to the owners, and the step ends when every machine's replica (this one's is the run's
    // weights) holds the result.
    Status shardedUpdate(StepContext& ctx, Collected& c, double batch);

    QByteArray m_packSpare; // the memory weights are packed into, step after step
    std::unique_ptr<GradientBundle> m_shardBundle; // this machine's gradients, sharded
    QByteArray m_shardOwn;                         // the step's bundle of them
    int64_t m_firstShardedStep = -1; // the first step since the sharded run's last setup
    int64_t m_setup = 0;             // that setup (ShardConductor::setups())
};

// The buffers of `results` into `master`, as combineResults() combines them.
void combineBuffers(ModelTensors& master, std::vector<WorkResult>& results, double batch);

// Sum over results of (b_i / B) * g_i: the mean gradient (or parameter delta) over the global
// batch B. Buffers: running statistics average by share; counters are the same on every worker
// and are taken from the first. Writes the buffers into `master`; returns the gradients.
std::vector<at::Tensor> combineResults(ModelTensors& master, std::vector<WorkResult>& results,
                                       double batch);

} // namespace tandem
