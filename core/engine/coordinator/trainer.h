#pragma once

#include "engine/internal.h"

// Engine-internal: one training run, from its inputs to its exports, as a sequence of phases.
// The Trainer owns the master weights, the optimizer, the sampler and the run's state; the
// WorkerPool owns the workers; a StepPolicy (the mode) turns workers' results into steps; the
// Recorder writes the run folder. Pause, resume and stop are answered in gate(), for every
// mode.

#include "engine/coordinator/hub.h"
#include "engine/coordinator/localworker.h"
#include "engine/coordinator/modechoice.h"
#include "engine/coordinator/shardconductor.h"
#include "engine/coordinator/steppolicy.h"
#include "engine/coordinator/workerpool.h"
#include "engine/record/recorder.h"
#include "engine/record/runcheckpoint.h"
#include "engine/step/objective.h"
#include "engine/step/optimizer.h"
#include "engine/step/sampler.h"
#include "engine/training.h"
#include "model/model.h"
#include "model/torchcompat.h"
#include "model/trafficledger.h"

#include <QElapsedTimer>

#include <functional>
#include <memory>
#include <optional>

namespace tandem {

class Trainer {
public:
    enum class Phase {
        Loading,
        Joining,
        Training,
        Paused,
        Evaluating,
        Exporting,
        Done,
        Failed,
        Stopped
    };
    static QString phaseName(Phase p);

    Trainer(RunConfig config, QString resumeFrom, RunObserver* observer, RunControl* control);
    ~Trainer();

    // Runs every phase in turn.
    Expected<RunSummary> run();
    Phase phase() const { return m_phase; }

private:
    // The running training figures of an epoch.
    struct Accum {
        double lossSum = 0;
        int64_t correct = 0;
        int64_t counted = 0;
        int64_t samples = 0;
        int64_t steps = 0;
        double loss() const { return samples ? lossSum / double(samples) : 0; }
        // NaN for a task without accuracy (nothing counted).
        double accuracy() const {
            return counted ? double(correct) / double(counted)
                           : std::numeric_limits<double>::quiet_NaN();
        }
    };

    // Loading: the data, the model (or the checkpoint to resume), the optimizer, the sampler,
    // the run folder and this machine's worker.
    Status load();
    Status loadModel();
    Status computeReference();
    // A frozen base (LoRA): its parts and hash, for the workers and the checkpoints.
    Status packBase();
    Status restore();
    void placeMaster();
    Status startLocalWorker();
    // Runs `job` where the run's compute happens: on the local worker's thread when this
    // thread's operators are kept serial (SerialTorchOps), else here.
    void onComputeThread(const std::function<void()>& job);
    // The step policy and the optimizer, for the mode m_cfg names.
    void makePolicy();
    // --mode auto: from the handshakes' link probes and one step timed here, sync or streaming
    // local-SGD; says which and why, and sends the run to the workers that wait for it.
    Status decideMode();
    // A run too short to stream starts before its workers and decides when one is measured.
    bool startsBeforeWorkers() const;
    Status startBeforeWorkers();
    Status decideWhileTraining();
    Status applyMode(const ModeChoice& choice);
    // Why this machine's own worker cannot hold what `streaming` keeps beyond sync (its own
    // optimizer, a copy of the weights, the outer state): the plan's refusal; empty where it can.
    QString streamingDoesNotFit(const RunConfig& streaming) const;
    ModeFacts modeFacts() const;
    Status timeForMode(); // m_timedStepMs and m_coldStepMs, once
    int64_t stepsLeft() const;
    Expected<double> timeOneStep(double& coldMs);
    // Joining: listens for workers, invites paired nodes, waits for those it was told to.
    Status join();
    Status startHub();
    Status waitForWorkers();
    // A sharded run (trainershard.cpp): the hub's part in it, then this machine and the workers
    // that came each take a range (shardconductor.h); before a checkpoint, the owners' optimizer
    // state comes into m_optimizer and their fp32 weights into m_master (the state leaves again
    // once written; the weights stay when the run ends, for the export).
    Status shardHub(HubConfig& hc);
    Status startShards();
    Status setUpShards(); // startShards() once, on the members the pool holds now
    // `keepState` false: the owners' fp32 weights alone, into m_master, for the export at the end
    // of a run over a 16-bit wire; m_optimizer keeps only the count.
    Status gatherShardState(bool keepState = true);
    // A sharded run's checkpoint: each range's state from its owner into a file beside the
    // checkpoint, then each tensor of it from there into the checkpoint (SpilledState), the
    // owners' fp32 weights into m_master.
    Status checkpointShards();
    // `keepWeights`: the replica keeps the fp32 weights gathered (the run ends); otherwise it
    // holds them as the wire carries them again.
    void dropShardState(bool keepWeights = false);
    // Between steps, where workers joined since the last: the owners' state comes here, as for
    // a checkpoint, and the run is set up again across every machine, theirs included. A
    // machine that came back after it was lost joins this way.
    Status admitToShards();
    // Between steps, before the run is set up again: the owners' state waits in files in the
    // run's folder, a range at a time, and the next setup cuts each range from them
    // (m_setupState), so that this machine never holds the whole state. Where the files cannot
    // be written (a full disk), the state comes into memory instead (gatherShardState).
    Status spillShardState();
    // The owners' state, a range at a time, into files in `dir`; where a machine is lost
    // meanwhile, the machines left take the run over and give theirs.
    Expected<std::pair<int64_t, std::unique_ptr<SpilledState>>> spillShards(const QString& dir);
    // Where the ranges' state is written as it comes (HubConfig::stateDir); empty without --out.
    QString arrivingDir() const;
    // Between steps: once the conductor's logs of the ranges' steps pass their limit (the larger
    // of 2 GiB and four steps of sums; TANDEM_SHARD_LOG_BYTES sets another), each begins again
    // from its range's state, which its owner sends (ShardConductor::rebaseLogs).
    Status compactShardLogs();
    // Where each member's range ends (this machine's first, then `remotes`' in their order), as
    // the memory plan places them; refused with the figures when the machines cannot hold it.
    // `byLink`: whether the ranges follow the machines' links (shardLinkSpeeds).
    Expected<std::vector<int64_t>> planShardRanges(const std::vector<size_t>& remotes,
                                                   bool* byLink);
    // A sharded run's ranges, what each machine kept and its bytes a step, for the summary and
    // the log.
    void summarizeShards(RunSummary& sum);
    // A sharded run that failed while training (a machine lost takes its range's state with
    // it): `e`, and where the run can go on from, the last checkpoint it wrote or resumed from,
    // or that there is none.
    Error shardedFailure(Error e) const;
    // A sharded step that `failure` stopped, where machines were lost (`lost`, device IDs, and
    // those the conductor names): the run's state after the last step every machine finished,
    // rebuilt from the conductor's logs, is set up again on the machines left, which then take
    // the step again. Fails with `failure` where it cannot.
    Status reformShards(const Error& failure, const QStringList& lost);
    // The workers among `gone` (device IDs) leave the pool, `why` and `consequence` said of
    // each: their names (those that had left already too), and how many were still in it.
    struct Dropped {
        QStringList names;
        int dropped = 0;
    };
    Dropped dropShardMembers(const QStringList& gone, const Error& why, const QString& consequence);
    // Between steps: each worker the sharded run went on without while it was still connected
    // (its link to another member was lost) is sent away, to connect again; it, and a worker
    // the run could not take in, is held back for a while when it comes back
    // (WorkerPool::holdBack).
    void holdBackDropped();
    struct SentAway {
        size_t member = 0; // in the pool
        // Still connected when the run went on without it: its connection is closed first.
        // One whose connection has closed by then (a crash noticed by its links first) is not
        // held back: started again, it joins at once.
        bool connected = false;
        // It could not reach every member (a probe): the machine is told so. Otherwise the run
        // went on without it.
        bool unreached = false;
    };
    std::vector<SentAway> m_sentAway;
    // The workers among the pool's members from `first` on that are still in it (their names).
    QStringList stillIn(size_t first) const;
    // Of the pool's members from `first` on, those a probe's answers (`unreached`, by device ID)
    // say cannot reach every machine of the sharded run are left out and sent away, to be tried
    // again later (m_sentAway). Returns how many reach every machine.
    size_t dropUnreached(size_t first, const QHash<QString, QString>& unreached);
    // Workers that joined a sharded run are asked whether each reaches every machine
    // (ShardConductor::sendProbe) while the run trains on, and taken in at the first step
    // boundary once every answer is in, or kProbeMs + kProbeAnswerMs have passed.
    struct Probe {
        QSet<QString> workers; // device IDs
        QElapsedTimer clock;
    };
    std::optional<Probe> m_probe;
    // A probe's outcome: which workers were asked (device IDs), and why each that cannot reach
    // every machine cannot (by device ID).
    struct ProbeAnswered {
        QHash<QString, QString> unreached;
        QSet<QString> probed;
    };
    // One answered while a streaming round was under way, kept until the rounds under way are
    // collected.
    std::optional<ProbeAnswered> m_probeAnswered;
    // Asks the workers that joined (m_probe), or looks at their answers: the outcome once every
    // answer is in or the wait is over, nothing before.
    std::optional<ProbeAnswered> probeJoined();
    // How long a probe's answers may take beyond a member's own wait (ShardPart::kProbeMs).
    static constexpr int kProbeAnswerMs = 5000;
    // How long the step boundary that sends a probe waits for the answers: where every link
    // answers, the machines are taken in at once.
    static constexpr int kProbeQuickMs = 1000;
    // How long the machines of a sharded run may take to link with each other.
    static constexpr int kShardSetupMs = 60000;
    // Waits for `count` workers (-1: m_cfg.workers) to be probed (or to join), within the join
    // timeout, and no longer than patienceMs when that is not 0.
    Status awaitWorkers(const QElapsedTimer& since, bool probed, qint64 patienceMs = 0,
                        int count = -1);
    // --mode auto: how long a run of known length waits for its workers before it goes on
    // alone (0: as long as the join timeout says).
    qint64 aloneWaitMs() const;
    // Training ⇄ Paused, epoch by epoch; Evaluating at each epoch's end.
    Expected<EpochEnd> train();
    Status test(EpochMetrics& em);
    Status evaluate();
    Status evaluateAtLimit();
    // What each worker's device must hold (memoryplan.h), for the pool.
    void planMemory();
    // Exporting: the final checkpoint (when stopped early), model.pt, model.safetensors.
    Status finish(bool stopped);
    RunSummary summarize(bool stopped);

    Gate gate();
    Status applied(const StepOutcome& outcome);
    Status waitForAnyWorker();
    // `last`: no step follows, so a sharded run keeps the fp32 weights it gathered (the export
    // writes them); the optimizer's state goes either way.
    Status saveCheckpoint(bool last = false);
    // Where the sampler and the epoch's figures stand, into m_state: what a checkpoint keeps.
    void noteEpochState();
    void announceStart();
    // Says goodbye to the workers; `reason` is what they are told.
    void shutdown(const QString& reason);
    Error fail(Error e);
    void setPhase(Phase p);

    RunConfig m_cfg;
    QString m_resumeFrom;
    int64_t m_checkpointStep = -1; // the step the last checkpoint written holds
    int64_t m_finalGather = -1;    // the step whose fp32 weights a sharded run's end gathered
    RunObserver m_nullObserver;
    RunObserver& m_obs;
    RunControl* m_control;
    Phase m_phase = Phase::Loading;

    int m_threads = 1;
    // Held from the start while this machine trains on its CPU with more than one thread:
    // this thread's operators then stay serial, and its large work goes to m_local's thread.
    std::optional<SerialTorchOps> m_serialOps;
    MemoryPlanFigures m_localPlan; // this machine's worker, as planned
    std::shared_ptr<LocalWorker> m_local;
    std::shared_ptr<DatasetSplits> m_data;
    Model m_module;
    std::shared_ptr<const BasePack> m_base; // null when every weight trains
    std::optional<LoadedCheckpoint> m_ckpt;
    std::unique_ptr<SpilledState> m_setupState; // spillShardState()'s, until the setup took it
    ModelTensors m_master;
    // The weights and the optimizer's state live on this machine's accelerator (placeMaster).
    bool m_masterOnDevice = false;
    Objective m_objective;
    int64_t m_parameterCount = 0; // trainable
    int64_t m_frozenCount = 0;
    std::unique_ptr<StepPolicy> m_policy;
    bool m_modePending = false; // --mode auto before the links are measured
    bool m_alone = false;       // --mode auto chose this machine alone: no worker is awaited
    double m_timedStepMs = 0, m_coldStepMs = 0; // --mode auto's timing of one step here
    bool m_decideWhileTraining = false;         // --mode auto started before its workers
    double m_firstStepMs = 0;                   // this run's first step
    bool m_statsNoted = false; // the log said why batch-norm statistics are gathered again
    // Forward passes that gather batch-norm statistics again before an evaluation: at
    // PyTorch's momentum of 0.1, 32 leave 3% of the old figures.
    static constexpr int kStatsBatches = 32;
    OptimizerConfig m_runOptimizer;
    std::unique_ptr<Optimizer> m_optimizer;
    std::unique_ptr<EpochSampler> m_sampler;
    RunState m_state;
    Accum m_epochAcc;
    Accum m_lastEpoch;
    Recorder m_recorder;
    QList<DeviceInfo> m_devices;
    WorkerPool m_pool;
    // A sharded run's control (RunConfig::shard); before the hub, whose thread calls it.
    std::unique_ptr<ShardConductor> m_shards;
    bool m_shardLogWarned = false;         // the logs stopped, and the run said so
    std::unique_ptr<CoordinatorHub> m_hub; // after the pool: it stops delivering first
    std::unique_ptr<StepContext> m_ctx;
    int64_t m_stepsPerEpoch = 0;
    int64_t m_totalSteps = 0;
    // This epoch: samples its steps held fewer than planned (StepOutcome::shortBy), and the
    // steps that adds.
    int64_t m_epochShortBy = 0;
    int64_t m_epochExtraSteps = 0;
    double m_trainSeconds = 0; // wall time of training steps in this process
    int64_t m_samplesThisRun = 0;
    int64_t m_stepsThisRun = 0;
    // RunConfig::trafficLedger: what was counted when the steps being reported began, and
    // what evaluations and checkpoints moved since (not a step's).
    void noteTraffic(bool last = false);
    // Applied steps whose figures are not reported yet (reportSteps()).
    struct PendingStep {
        StepMetrics metrics;
        double lossSum = 0;
        int64_t correct = 0, counted = 0;
        PairFigures pairs;
        DeviceFigures figures;
    };
    Status reportSteps();
    void summarizeTraffic(RunSummary& sum) const;
    std::vector<PendingStep> m_pendingSteps;
    QElapsedTimer m_sinceFigures;
    // Figures on a device are read at least this often, and every step of the first.
    static constexpr qint64 kFiguresEveryMs = 250;
    static constexpr size_t kMaxPendingSteps = 64;
    TrafficLedger m_trafficMark, m_trafficAside, m_trafficSteady;
    int64_t m_trafficFromStep = 0, m_trafficSteadySteps = 0;
    // The step whose weights the model archive every worker is admitted with holds (-1: it holds
    // none, a base travelling apart): StepContext::archiveStep.
    int64_t m_archiveStep = -1;
    // RunConfig::stepSplit: the phases' times of the steps after the first, since the last line
    // and over the run, and the steps' own.
    struct SplitSum {
        StepSplit phases;
        double stepMs = 0;
        int64_t steps = 0;
        void add(const StepSplit& s, double ms);
    };
    // `step` applied; null: the run's steps are over, and those since the last line are said.
    void noteSplit(const StepOutcome* step);
    void summarizeSplit(RunSummary& sum) const;
    SplitSum m_splitWindow, m_splitRun;
};

} // namespace tandem
