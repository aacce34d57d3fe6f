#pragma once

#include "engine/internal.h"

// Engine-internal: how workers' results become optimizer steps. Each training mode is a file
// of its own under modes/ (sync.cpp, async.cpp, localsgd.cpp and streaming.cpp, local-SGD's
// streamed form) that holds both its sides: the StepPolicy here, and the round its workers run
// where the mode needs more of them than one gradient (worker.h's LocalRound). The Trainer owns
// the state a policy works on and hands it over as a StepContext. Adding a mode is its line in
// TANDEM_TRAIN_MODES (common/runenums.h), its file, defining makeMode<Value>(), and its entry
// in the New run form's list.

#include "common/expected.h"
#include "engine/coordinator/workerpool.h"
#include "engine/step/optimizer.h"
#include "engine/step/sampler.h"
#include "engine/training.h"
#include "model/model.h"

#include <functional>
#include <memory>

namespace tandem {

// Where a sync step's time went (RunConfig::stepSplit), each phase timed to the device's end of
// it: the local worker's forward and backward pass; packing weights for remote workers and
// combining their results; waiting for them beyond the local pass; the optimizer's update.
struct StepSplit {
    double localMs = 0, wireMs = 0, waitMs = 0, optimizerMs = 0;
    bool measured = false;
};

// One applied optimizer step, as the policy saw it; the Trainer makes StepMetrics of it.
struct StepOutcome {
    int64_t samples = 0; // in the step's batch
    double lossSum = 0;  // summed over those samples
    int64_t correct = 0;
    int64_t counted = 0; // what `correct` is out of (WorkResult::counted)
    PairFigures pairs;   // preference tuning's
    // What of the figures is still on a device (WorkResult::figures): the Trainer reads them
    // when a figure is due.
    DeviceFigures figures;
    double lr = 0;
    double stepMs = 0; // training time the step took
    QList<WorkerStepStats> workers;
    // The samples whose results the update used, where the mode keeps them apart (sync, local
    // SGD, streaming).
    std::vector<int64_t> indices;
    // Samples fewer than the step was meant to hold, left for later steps of the epoch (a
    // streaming round that times a new worker on one batch): the epoch takes more steps.
    int64_t shortBy = 0;
    StepSplit split; // RunConfig::stepSplit, in sync
};

// What the Trainer answers between steps.
enum class Gate { Go, Stop };
enum class EpochEnd { Complete, Stopped };

class ShardConductor;

// The run's state, owned by the Trainer, as a policy works on it.
struct StepContext {
    const RunConfig& cfg;
    ModelTensors& master;
    Optimizer& optimizer;
    EpochSampler& sampler;
    WorkerPool& pool;
    DType wire = DType::F32;
    const int64_t& step; // optimizer steps so far; applied() advances it
    int64_t totalSteps = 0;
    int64_t staleDropped = 0; // async: gradients dropped for staleness
    // Before each step: pause, resume and stop for every mode, the step limit, and workers
    // that joined. Stop means: take no new step.
    std::function<Gate()> gate;
    // After the optimizer step: counts it, records it and checkpoints when due.
    std::function<Status(const StepOutcome&)> applied;
    // Every worker is gone: waits a while for one to join; fails (the run saved) otherwise.
    std::function<Status()> waitForAnyWorker;
    // Runs a large part of a step's own work where the run computes, with the run's threads
    // (Trainer::onComputeThread); only while nothing computes there. Empty: runs it here.
    std::function<void(const std::function<void()>&)> onComputeThread;
    // A sharded run (RunConfig::shard): the owners of the ranges step, not `optimizer`.
    ShardConductor* shards = nullptr;
    // A sharded step failed, and the machines `lost` (device IDs; the conductor knows of more)
    // went: sets the run up again on the machines left, from the state after the last step
    // (Trainer::reformShards). The step is then taken again from its start.
    std::function<Status(const Error&, const QStringList&)> reformShards;
    // The step whose weights (and buffers) the model archive holds that every worker is admitted
    // with, in fp32; -1 where it holds none (a base travels apart). Until that step is taken, a
    // worker's replica is the model's.
    int64_t archiveStep = -1;
    // Rounds under way as the policy asks gate() (streaming's, two deep): a sharded run admits
    // the machines that joined only when none is, since a setup ends every step under way.
    int inFlight = 0;
    // Set by gate() while machines that joined a sharded run are ready to be taken in and rounds
    // are under way: the policy hands out no new round until those are collected, and asks
    // gate() again with none in flight.
    bool admitWaiting = false;

    // The scheduled learning rate for the next step.
    double lr() const;
    // A per-step, per-worker seed for dropout and other randomness.
    uint64_t seedFor(size_t worker, uint64_t round = 0) const;
};

class StepPolicy {
public:
    virtual ~StepPolicy() = default;
    // Samples one step (a round, in local-SGD) consumes.
    virtual int64_t samplesPerStep(const RunConfig& cfg) const { return cfg.batch; }
    // The optimizer the coordinator applies results with, given the run's own.
    virtual OptimizerConfig serverOptimizer(const RunConfig&, const OptimizerConfig& run) const {
        return run;
    }
    // Takes steps until this epoch's samples are used, or the gate says stop.
    virtual Expected<EpochEnd> runEpoch(StepContext& ctx) = 0;
};

// Local-SGD's inner learning rate for a round whose samples are split as `counts`. Each worker
// takes steps on its own share only, and the outer step averages the deltas weighted by share:
// with k equal workers a round moves the model about 1/k as far as one machine taking all the
// round's steps (Adam's step is about lr whatever the gradient's size, and SGD's is in
// proportion to lr). Scaling lr by (sum n)^2 / sum n^2, the workers taking part weighted by
// their shares, restores it: k for k equal shares, 1 for one worker, about 1.55 for a
// 77/23 split.
double innerLrScale(const RunConfig& cfg, const std::vector<int64_t>& counts);

// Says in the log what the inner learning rate is when the number of workers sharing a
// round changes (each local-SGD policy keeps one).
class InnerLrNote {
public:
    void observe(WorkerPool& pool, const RunConfig& cfg, const std::vector<int64_t>& counts,
                 double lr, double scale);

private:
    size_t m_workers = 0;
};

std::unique_ptr<StepPolicy> makeSyncPolicy();
std::unique_ptr<StepPolicy> makeLocalSgdPolicy();
std::unique_ptr<StepPolicy> makeAsyncPolicy();
std::unique_ptr<StepPolicy> makeStreamingPolicy();
// Each mode's policy for a run, defined in the mode's file.
#define TANDEM_MODE_FACTORY(value, name)                                                           \
    std::unique_ptr<StepPolicy> makeMode##value(const RunConfig& cfg);
TANDEM_TRAIN_MODES(TANDEM_MODE_FACTORY)
#undef TANDEM_MODE_FACTORY
// The run's mode's policy (the mode resolved: never Auto).
std::unique_ptr<StepPolicy> makeStepPolicy(const RunConfig& cfg);
// Local-SGD's outer optimizer: Nesterov momentum (DiLoCo's), at the run's outer settings.
OptimizerConfig outerOptimizer(const RunConfig& cfg);

// Cuts `indices` into consecutive slices of the given sizes.
std::vector<std::vector<int64_t>> sliceBatch(const std::vector<int64_t>& indices,
                                             const std::vector<int64_t>& counts);
// Slice `i`'s part of all of them (0 when there are none).
double shareOf(const std::vector<int64_t>& counts, size_t i);

} // namespace tandem
