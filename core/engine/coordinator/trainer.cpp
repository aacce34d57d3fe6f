#include "engine/coordinator/trainer.h"

#include "common/failpoint.h"
#include "common/files.h"
#include "common/ports.h"
#include "engine/runhistory.h"
#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "engine/step/modelcheck.h"
#include "engine/step/replica.h"
#include "engine/wire/wiretensors.h"
#include "engine/wire/workwire.h"
#include "model/tensormemory.h"

#include "model/openmodel.h"
#include <QLocale>

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QScopeGuard>

#include <cmath>

Q_LOGGING_CATEGORY(lcTrain, "tandem.train")

namespace tandem {

Expected<RunSummary> runTraining(const RunConfig& cfg, const QString& resumeFrom,
                                 RunObserver* observer, RunControl* control) {
    RunHistory::started(cfg);
    Expected<RunSummary> result = Trainer(cfg, resumeFrom, observer, control).run();
    // The run's tensors are gone: what the CPU's cache kept of them goes back (the app lives on).
    releaseCachedTensorMemory();
    RunHistory::ended(cfg.outDir, result);
    return result;
}

QString Trainer::phaseName(Phase p) {
    static const char* const names[] = {"loading",   "joining", "training", "paused", "evaluating",
                                        "exporting", "done",    "failed",   "stopped"};
    return QLatin1String(names[int(p)]);
}

Trainer::Trainer(RunConfig config, QString resumeFrom, RunObserver* observer, RunControl* control)
    : m_cfg(std::move(config))
    , m_resumeFrom(std::move(resumeFrom))
    , m_obs(observer ? *observer : m_nullObserver)
    , m_control(control)
    , m_recorder(m_cfg)
    , m_pool(m_obs) {}

QString Trainer::arrivingDir() const {
    return m_cfg.outDir.isEmpty() ? QString()
                                  : QDir(m_cfg.outDir).filePath(QStringLiteral(".arriving"));
}

Trainer::~Trainer() {
    // The folder the ranges' state came into, once nothing is left in it.
    if (m_shards && !arrivingDir().isEmpty())
        QDir().rmdir(arrivingDir());
}

void Trainer::setPhase(Phase p) {
    if (p != m_phase)
        qCDebug(lcTrain) << "phase" << phaseName(m_phase) << "->" << phaseName(p);
    m_phase = p;
}

Error Trainer::fail(Error e) {
    shutdown(QStringLiteral("the run failed: %1").arg(e.message)); // the workers hear why
    setPhase(Phase::Failed);
    return e;
}

Expected<RunSummary> Trainer::run() {
    if (auto st = load(); !st)
        return fail(st.error());
    if (auto st = join(); !st)
        return fail(st.error());
    announceStart();
    auto end = train();
    if (end)
        if (auto st = reportSteps(); !st)
            end = st.error();
    if (!end)
        return fail(m_shards ? shardedFailure(end.error()) : end.error());
    if (m_cfg.trafficLedger)
        noteTraffic(true);
    if (m_cfg.stepSplit)
        noteSplit(nullptr);
    const bool stopped = *end == EpochEnd::Stopped;
    if (auto st = finish(stopped); !st)
        return fail(st.error());
    RunSummary sum = summarize(stopped);
    m_recorder.summary(sum);
    setPhase(stopped ? Phase::Stopped : Phase::Done);
    return sum;
}

// --- Loading -------------------------------------------------------------------------------

Status Trainer::load() {
    setPhase(Phase::Loading);
    if (auto st = m_cfg.validate(); !st)
        return st;
    if (m_cfg.trafficLedger)
        enableTrafficLedger();
    if (m_cfg.outDir.isEmpty())
        return makeError(ErrorCode::InvalidArgument, QStringLiteral("no output folder given"));
    if (auto st = m_recorder.checkExports(); !st)
        return st;
    QString threadWarning;
    m_threads = setTorchThreads(m_cfg.threads, &threadWarning);
    if (!threadWarning.isEmpty())
        m_obs.onMessage(threadWarning);
    // Before any operator runs here: a team this thread formed would stay (torchcompat.h).
    if (m_cfg.localWorker && m_threads > 1)
        m_serialOps.emplace();

    const ModelSource source = ModelSource::parse(m_cfg.model);
    if (auto st = checkModelFolder(source); !st)
        return st;
    if (auto st = checkContext(source, m_cfg.data); !st)
        return st;
    auto loaded = loadDataset(m_cfg.data, source.isHf() ? source.path : QString());
    if (!loaded)
        return about(loaded.error(), ErrorSubject::Dataset);
    if (auto st = checkContext(source, m_cfg.data, &*loaded); !st)
        return st;
    m_data = std::make_shared<DatasetSplits>(std::move(*loaded));
    m_data->limitTrain(m_cfg.limitTrain);
    m_data->limitTest(m_cfg.limitTest);
    if (auto st = loadModel(); !st)
        return about(st.error(), ErrorSubject::Model);

    m_master = modelTensors(m_module);
    m_parameterCount = m_master.trainableCount();
    m_frozenCount = m_master.frozenCount();
    if (auto st = checkTrainable(m_master, m_cfg.model); !st)
        return about(st.error(), ErrorSubject::Model);
    if (auto st = packBase(); !st)
        return about(st.error(), ErrorSubject::Model);
    m_runOptimizer.kind = m_cfg.optimizer;
    m_runOptimizer.momentum = m_cfg.momentum;
    m_runOptimizer.weightDecay = m_cfg.effectiveWeightDecay();
    if (m_cfg.mode == TrainMode::Auto && m_ckpt) {
        // A checkpoint continues in the mode its run chose.
        m_cfg.mode = m_ckpt->state.config.mode;
        m_cfg.fragments = m_ckpt->state.config.fragments;
        m_cfg.outerWire = m_ckpt->state.config.outerWire;
    } else if (m_cfg.mode == TrainMode::Auto && m_cfg.listen.isEmpty()) {
        // This machine alone: there is nothing to choose, and nothing to say.
        m_cfg.mode = TrainMode::Sync;
        m_cfg.fragments = 1;
    }
    m_modePending = m_cfg.mode == TrainMode::Auto;
    m_devices = detectDevices();
    placeMaster();
    if (!m_modePending)
        makePolicy();
    m_sampler = std::make_unique<EpochSampler>(m_data->train.count(), m_cfg.seed);
    m_state.config = m_cfg;
    m_state.datasetHash = QString::fromLatin1(m_data->contentHash);
    m_state.schemaHash = QString::fromLatin1(schemaHash(m_master));
    if (m_base) {
        m_state.baseManifest = m_base->manifest().json();
        m_state.baseHash = m_base->manifest().hash;
    }
    if (auto st = restore(); !st)
        return st;
    if (auto st = m_recorder.open(m_ckpt.has_value(), m_ckpt ? m_ckpt->state.step : -1); !st)
        return st;
    planMemory();
    return startLocalWorker();
}

void Trainer::makePolicy() {
    m_policy = makeStepPolicy(m_cfg);
    m_optimizer = std::make_unique<Optimizer>(m_policy->serverOptimizer(m_cfg, m_runOptimizer),
                                              m_master.params);
}

// The model and, when resuming, the state to continue from.
Status Trainer::loadModel() {
    if (!m_resumeFrom.isEmpty()) {
        auto c = loadRunCheckpoint(m_resumeFrom);
        if (!c)
            return c.error();
        if (c->state.datasetHash != QString::fromLatin1(m_data->contentHash))
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 was trained on different data than %2 (content "
                                            "hash %3 against %4); resume with the same dataset")
                                 .arg(m_resumeFrom, m_cfg.data, c->state.datasetHash.left(12),
                                      QString::fromLatin1(m_data->contentHash.left(12))));
        m_module = c->module;
        m_ckpt = std::move(*c);
    } else {
        auto m = openModel(ModelSource::parse(m_cfg.model),
                           {m_cfg.lora, m_cfg.checkpointActivations, m_cfg.seed});
        if (!m)
            return m.error();
        m_module = *m;
    }
    // Resolved once: the checkpoint and every worker receive the loss chosen, never "auto".
    auto objective = resolveObjective(m_cfg.loss, m_module, *m_data, m_cfg.model);
    if (!objective)
        return objective.error();
    m_objective = *objective;
    m_objective.beta = m_cfg.beta;
    m_cfg.loss = m_objective.loss;
    if (m_objective.loss == LossKind::Dpo && !m_module.hasAdapters())
        return computeReference();
    return success();
}

Status Trainer::packBase() {
    if (m_module.kind() != ModelKind::Transformer || m_master.frozen.empty())
        return success();
    QElapsedTimer clock;
    clock.start();
    if (m_ckpt && m_ckpt->base) {
        m_base = m_ckpt->base; // resumed: found, and hashed, in the run's folder
    } else {
        auto pack = BasePack::of(m_module);
        if (!pack)
            return pack.error();
        m_base = *pack;
    }
    const BaseManifest& m = m_base->manifest();
    m_obs.onMessage(QStringLiteral("the base model is %1 in %2 part(s), hash %3 (%4 s)")
                        .arg(QLocale::c().formattedDataSize(m.totalBytes))
                        .arg(m.parts())
                        .arg(m.hash.left(12))
                        .arg(clock.elapsed() / 1000.0, 0, 'f', 1));
    return success();
}

// This machine's best device, or the one the run names. Remote workers join through the hub:
// both are WorkerLinks, which the step policies do not tell apart.
Status Trainer::startLocalWorker() {
    if (!m_cfg.localWorker)
        return success();
    auto device = chooseDevice(m_devices, m_cfg.device);
    if (!device)
        return device.error();
    if (device->kind != DeviceKind::Cpu)
        m_serialOps.reset(); // the optimizer's step on the CPU is then this thread's to run
    // Before the replica takes its memory: a model that cannot fit is refused with the figures.
    // A sharded run keeps only its range beside the replica, placed once the workers come, and
    // its worker is sized as every sharded machine that computes (planMemory's plan).
    MemoryNeed need = m_cfg.shard ? shardWorkerNeed(m_module, m_data->train, m_cfg)
                                  : memoryNeed(m_module, m_data->train, m_cfg,
                                               mastersBeside(*device, m_masterOnDevice, m_cfg));
    const bool dataOnDevice = keepDataOnDevice(m_data->train, *device, need);
    auto fits = samplesThatFit(need, *device, QStringLiteral("this machine"));
    if (!fits)
        return fits.error();
    m_localPlan = {need.on(*device).fixedBytes(), need.perSampleBytes, *fits};
    try {
        ReplicaOptions ro;
        ro.innerOptimizer = m_runOptimizer;
        ro.precision = m_cfg.precision;
        ro.loss = m_objective.loss;
        ro.beta = m_objective.beta;
        ro.reference = m_objective.reference;
        ro.samplesPerPass = *fits;
        ro.resultsOnDevice = m_masterOnDevice;
        ro.dataOnDevice = dataOnDevice;
        ro.sharesWeights = mastersBeside(*device, m_masterOnDevice, m_cfg) == MasterCopy::Shared;
        if (dataOnDevice)
            m_obs.onMessage(QStringLiteral("the training set (%1) is kept on %2: a step copies "
                                           "only its samples' indices there")
                                .arg(bytesText(need.dataBytes), device->name));
        auto train = std::shared_ptr<const Dataset>(m_data, &m_data->train);
        auto local =
            std::make_shared<LocalWorker>(QStringLiteral("local"), *device, m_module, train, ro);
        if (!local->replica().precisionNote().isEmpty())
            m_obs.onMessage(local->replica().precisionNote());
        else if (ro.precision != Precision::Fp32)
            m_obs.onMessage(QStringLiteral("computing in %1 autocast on %2, with fp32 weights")
                                .arg(nameOf(m_cfg.precision), device->name));
        m_local = local;
        m_pool.add(std::move(local));
        if (auto st = m_pool.applyMemoryPlan(m_pool.size() - 1); !st)
            return st;
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("cannot start a worker on %1: %2").arg(device->name, firstLine(e)));
    }
    return success();
}

void Trainer::onComputeThread(const std::function<void()>& job) {
    if (m_serialOps && m_local)
        m_local->call(job);
    else
        job();
}

// --- Training ------------------------------------------------------------------------------

Expected<EpochEnd> Trainer::train() {
    setPhase(Phase::Training);
    m_trafficMark = trafficLedger();
    m_trafficFromStep = m_state.step;
    m_sinceFigures.start();
    m_lastEpoch = m_epochAcc;
    m_ctx.reset(new StepContext{
        m_cfg, m_master, *m_optimizer, *m_sampler, m_pool, storageDtype(m_cfg.wire), m_state.step,
        m_totalSteps, 0, [this] { return gate(); },
        [this](const StepOutcome& o) { return applied(o); }, [this] { return waitForAnyWorker(); },
        [this](const std::function<void()>& job) { onComputeThread(job); }, m_shards.get(),
        [this](const Error& e, const QStringList& lost) { return reformShards(e, lost); }});
    if (!m_shards)
        m_ctx->reformShards = nullptr;
    m_ctx->archiveStep = m_archiveStep;
    while (m_sampler->epoch() < m_cfg.epochs) {
        auto end = m_policy->runEpoch(*m_ctx);
        if (!end)
            return end.error();
        // Every mode stops at the step limit (streaming counts its rounds in flight); a run
        // that reached it has finished, whatever else asked it to stop.
        const bool atLimit = m_cfg.maxSteps > 0 && m_state.step >= m_cfg.maxSteps;
        if (*end == EpochEnd::Stopped && atLimit) {
            if (auto st = evaluateAtLimit(); !st)
                return st.error();
            return EpochEnd::Complete;
        }
        if (*end == EpochEnd::Stopped)
            return EpochEnd::Stopped;
        if (auto st = evaluate(); !st)
            return st.error();
        setPhase(Phase::Training);
    }
    return EpochEnd::Complete;
}

Gate Trainer::gate() {
    if (m_control && (m_control->paused() || m_control->stopRequested()) && !m_pendingSteps.empty())
        if (auto st = reportSteps(); !st) {
            m_obs.onMessage(st.error().message);
            return Gate::Stop;
        }
    if (m_control && m_control->paused()) {
        setPhase(Phase::Paused);
        if (m_hub)
            m_hub->broadcast(wire::Control::Action::Pause);
        m_obs.onMessage(QStringLiteral("paused at step %1").arg(m_state.step));
        m_obs.onEvent(RunEvent{RunEvent::Kind::Paused, {}, {}, m_state.step});
        const bool go = m_control->waitWhilePaused();
        if (!go)
            return Gate::Stop;
        if (m_hub)
            m_hub->broadcast(wire::Control::Action::Resume);
        m_obs.onMessage(QStringLiteral("resumed at step %1").arg(m_state.step));
        m_obs.onEvent(RunEvent{RunEvent::Kind::Resumed, {}, {}, m_state.step});
        setPhase(Phase::Training);
    }
    if (m_control && m_control->stopRequested())
        return Gate::Stop;
    if (m_cfg.maxSteps > 0 && m_state.step >= m_cfg.maxSteps)
        return Gate::Stop;
    if (auto st = decideWhileTraining(); !st) {
        m_obs.onMessage(st.error().message);
        return Gate::Stop;
    }
    // Workers that joined since the last step take part from this one on.
    if (auto st = admitToShards(); !st) {
        m_obs.onMessage(st.error().message);
        return Gate::Stop;
    }
    return Gate::Go;
}

// Every applied step, in any mode: refuse a diverged loss (with a checkpoint of the last good
// state), log it, tell the observer, and checkpoint when due.
Status Trainer::applied(const StepOutcome& o) {
    (void)TANDEM_FAILPOINT("trainer.step");
    ++m_state.step;
    m_recorder.samples(m_state.step, m_sampler->epoch(), o.indices);
    ++m_stepsThisRun;
    if (m_stepsThisRun == 1)
        m_firstStepMs = o.stepMs;
    m_trainSeconds += o.stepMs / 1e3;
    m_samplesThisRun += o.samples;
    m_epochAcc.samples += o.samples;
    ++m_epochAcc.steps;
    if (o.shortBy > 0) {
        // The samples a short step left over make the epoch longer; what was shown as its
        // length follows. The learning-rate schedule keeps the planned length.
        m_epochShortBy += o.shortBy;
        const int64_t per = m_policy->samplesPerStep(m_cfg);
        const int64_t extra =
            (m_sampler->size() + m_epochShortBy + per - 1) / per - m_stepsPerEpoch;
        m_totalSteps += extra - m_epochExtraSteps;
        m_epochExtraSteps = extra;
    }

    StepMetrics sm;
    sm.step = m_state.step;
    sm.epoch = m_sampler->epoch();
    sm.epochStep = m_epochAcc.steps;
    sm.stepsPerEpoch = m_stepsPerEpoch + m_epochExtraSteps;
    sm.totalSteps = m_totalSteps;
    sm.epochs = m_cfg.epochs;
    sm.lr = o.lr;
    sm.samples = o.samples;
    sm.stepMs = o.stepMs;
    sm.elapsedS = m_trainSeconds;
    sm.samplesPerS = m_trainSeconds > 0 ? double(m_samplesThisRun) / m_trainSeconds : 0;
    sm.workers = o.workers;
    m_pendingSteps.push_back({std::move(sm), o.lossSum, o.correct, o.counted, o.pairs, o.figures});
    // Figures still on a device wait for the next figure that is due: reading them waits for
    // the device, which would otherwise be idle between every two steps.
    const bool checkpointDue =
        m_cfg.checkpointEvery > 0 && m_state.step % m_cfg.checkpointEvery == 0;
    if (!o.figures.defined() || checkpointDue || m_stepsThisRun == 1 ||
        m_pendingSteps.size() >= kMaxPendingSteps || m_sinceFigures.elapsed() >= kFiguresEveryMs)
        if (auto st = reportSteps(); !st)
            return st;
    if (m_cfg.trafficLedger)
        noteTraffic();
    if (o.split.measured)
        noteSplit(&o);
    Status st = checkpointDue ? saveCheckpoint() : compactShardLogs();
    if (!st)
        shutdown(QStringLiteral("the run failed"));
    return st;
}

// When every worker has left: wait a while for one to join rather than lose the run; failing
// that, keep what was trained and say how to continue.
Status Trainer::waitForAnyWorker() {
    m_obs.onMessage(QStringLiteral("no worker is left; waiting up to %1 s for one to join")
                        .arg(m_cfg.workerTimeoutS * 4));
    m_obs.onEvent(RunEvent{RunEvent::Kind::WorkersGone, {}, {}, m_state.step});
    if (m_pool.waitForJoined(1, m_cfg.workerTimeoutS * 4000,
                             [this] { return m_control && m_control->stopRequested(); }) >= 1) {
        m_pool.admitJoined(/*evenHeld=*/true); // no other is left to wait for it
        return success();
    }
    (void)saveCheckpoint();
    shutdown(QStringLiteral("no workers left"));
    // The code and subject of why the last one left: out of memory, or a machine that went.
    const Error& last = m_pool.lastDrop();
    return Error{last.code == ErrorCode::OutOfMemory ? ErrorCode::OutOfMemory : ErrorCode::Runtime,
                 QStringLiteral("every worker left at step %1 (the last: %2); progress is saved "
                                "in %3, resume with --resume")
                     .arg(m_state.step)
                     .arg(last.message)
                     .arg(m_recorder.checkpointPath()),
                 last.subject};
}

Status Trainer::saveCheckpoint(bool last) {
    if (auto st = reportSteps(); !st)
        return st;
    const TrafficLedger before = trafficLedger();
    const auto aside = qScopeGuard([&] {
        const TrafficLedger d = trafficLedger() - before;
        for (size_t i = 0; i < kLedgerPurposes; ++i)
            m_trafficAside.by[i] += d.by[i];
    });
    LedgerScope purpose(LedgerPurpose::Checkpoint);
    noteEpochState();
    const auto dropGathered = qScopeGuard([&] { dropShardState(/*keepWeights=*/last); });
    Status st =
        m_shards ? checkpointShards() : m_recorder.checkpoint(m_module, *m_optimizer, m_state);
    if (st && m_shards && last)
        m_finalGather = m_state.step;
    if (st) {
        m_checkpointStep = m_state.step;
        m_obs.onEvent(RunEvent{RunEvent::Kind::CheckpointWritten, {}, {}, m_state.step});
    }
    return st;
}

// --- Evaluating ----------------------------------------------------------------------------

// End of an epoch: evaluate on the test split (not counted as training time).
// The test split's figures for the weights as they are, into `em`.
Status Trainer::test(EpochMetrics& em) {
    if (auto st = reportSteps(); !st)
        return st;
    setPhase(Phase::Evaluating);
    const TrafficLedger before = trafficLedger();
    const auto aside = qScopeGuard([&] {
        const TrafficLedger d = trafficLedger() - before;
        for (size_t i = 0; i < kLedgerPurposes; ++i)
            m_trafficAside.by[i] += d.by[i];
    });
    em.epoch = m_sampler->epoch();
    em.trainLoss = m_epochAcc.loss();
    em.trainAccuracy = m_epochAcc.accuracy();
    try {
        // Local-SGD's outer step (unless it only takes the workers' weights as they are) leaves
        // batch normalisation's statistics behind the weights: gather them again first.
        const bool outerMoves = m_cfg.outerLr != 1.0 || m_cfg.outerMomentum != 0.0;
        if (m_cfg.mode == TrainMode::LocalSgd && outerMoves && hasRunningStats(m_module)) {
            if (!m_statsNoted)
                m_obs.onMessage(QStringLiteral(
                    "gathering batch-norm statistics for the weights before each evaluation "
                    "(local-SGD's outer step moves the weights past the ones they came from)"));
            m_statsNoted = true;
            onComputeThread(
                [&] { refreshRunningStats(m_module, m_data->train, m_cfg.batch, kStatsBatches); });
        }
        m_obs.onEvaluating(0, m_data->test.count());
        onComputeThread([&] {
            em.test = tandem::evaluate(
                m_module, m_objective, m_data->test, m_cfg.evalBatch,
                [this](int64_t done, int64_t total) { m_obs.onEvaluating(done, total); });
        });
    } catch (const std::exception& e) {
        shutdown(QStringLiteral("the run failed"));
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("evaluation failed: %1").arg(firstLine(e)));
    }
    m_state.lastTest = em.test;
    m_recorder.epoch(em);
    m_obs.onEpoch(em);
    return success();
}

Status Trainer::evaluate() {
    EpochMetrics em;
    if (auto st = test(em); !st)
        return st;
    m_lastEpoch = m_epochAcc;
    m_epochAcc = Accum{};
    m_epochShortBy = 0;
    m_epochExtraSteps = 0;
    ++m_state.completedEpochs;
    m_sampler->nextEpoch();
    if (auto st = saveCheckpoint(/*last=*/m_sampler->epoch() >= m_cfg.epochs); !st) {
        shutdown(QStringLiteral("the run failed"));
        return st;
    }
    return success();
}

// A run that reached its step limit has finished: its test figures and a checkpoint of where
// it stands (mid-epoch, which --resume goes on from), as at an epoch's end: the run's last.
Status Trainer::evaluateAtLimit() {
    EpochMetrics em;
    if (auto st = test(em); !st)
        return st;
    if (auto st = saveCheckpoint(/*last=*/true); !st) {
        shutdown(QStringLiteral("the run failed"));
        return st;
    }
    return success();
}

Status Trainer::finish(bool stopped) {
    // Where the run stands, unless the last checkpoint (at the step limit, say) holds it already.
    const bool checkpoint =
        (stopped || m_state.completedEpochs == 0) && m_checkpointStep != m_state.step;
    // A sharded run's state, and over a 16-bit wire its fp32 weights, come before machines go.
    const bool weightsHere = m_cfg.wire == WireDtype::Fp32 || m_finalGather == m_state.step;
    if (m_shards && (checkpoint || !weightsHere))
        if (auto st =
                checkpoint ? saveCheckpoint(/*last=*/true) : gatherShardState(/*keepState=*/false);
            !st) {
            shutdown(QStringLiteral("the run failed"));
            return st;
        }
    shutdown(stopped ? QStringLiteral("the run was stopped") : QStringLiteral("the run finished"));
    setPhase(Phase::Exporting);
    if (!m_shards && checkpoint)
        if (auto st = saveCheckpoint(); !st)
            return st;
    if (m_masterOnDevice) {
        // The run is over: its weights come back to the host's memory for the export, in place
        // (a copy on the device could run out of the device's memory at the very end).
        at::NoGradGuard noGrad;
        m_module.to(c10::Device(at::kCPU));
        m_masterOnDevice = false;
    }
    return m_recorder.exportModel(m_module, [this](const QString& line) { m_obs.onMessage(line); });
}

void Trainer::shutdown(const QString& reason) {
    if (m_hub)
        m_hub->finish(reason);
    m_pool.flushNotes();
}

} // namespace tandem
