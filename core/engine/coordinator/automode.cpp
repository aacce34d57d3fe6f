// --mode auto: the Trainer's choice between sync and streaming local-SGD, made once the
// workers it waits for have had their links measured (hub.cpp) and before any has the run.

#include "engine/coordinator/modechoice.h"
#include "engine/coordinator/trainer.h"
#include "engine/step/memoryplan.h"
#include "engine/wire/outerwire.h"

#include <QElapsedTimer>

#include <algorithm>

namespace tandem {

// Forward and backward over one global batch on this machine's device, as a sync step alone
// would compute it: the best of two passes after one that warms the device up. `coldMs` gets
// what the first took with the copy of the model made for it: what a worker pays to start.
Expected<double> Trainer::timeOneStep(double& coldMs) {
    auto device = chooseDevice(m_devices, m_cfg.device);
    if (!device)
        return device.error();
    try {
        QElapsedTimer cold;
        cold.start();
        ReplicaOptions ro;
        ro.precision = m_cfg.precision;
        ro.loss = m_objective.loss;
        ro.beta = m_objective.beta;
        ro.reference = m_objective.reference;
        ModelReplica replica(*device, m_module,
                             std::shared_ptr<const Dataset>(m_data, &m_data->train), ro);
        WorkRequest req;
        const int64_t n = std::min<int64_t>(m_cfg.batch, m_data->train.count());
        for (int64_t i = 0; i < n; ++i)
            req.indices.push_back(i);
        req.params = &m_master.params;
        req.buffers = &m_master.buffers;
        double best = 0;
        Expected<double> out = best;
        onComputeThread([&] {
            for (int pass = 0; pass < 3; ++pass) {
                auto r = replica.compute(req, QStringLiteral("timing"));
                if (!r) {
                    out = r.error();
                    return;
                }
                if (pass == 0)
                    coldMs = double(cold.nsecsElapsed()) / 1e6;
                if (pass > 0) // the first warms the device up
                    best = pass == 1 ? r->computeMs : std::min(best, r->computeMs);
            }
            out = best;
        });
        return out;
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("cannot time a step on %1: %2")
                .arg(device->name, QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
    }
}

// Streaming as auto runs it: the fragments and outer wire asked for, else 4 and int4 (the
// measured best trade of bytes for accuracy, bench/README.md).
static RunConfig streamingOf(const RunConfig& cfg) {
    RunConfig streaming = cfg;
    streaming.mode = TrainMode::LocalSgd;
    if (streaming.fragments <= 1)
        streaming.fragments = std::min(4, streaming.localSteps);
    if (streaming.outerWire == OuterWire::Fp32)
        streaming.outerWire = OuterWire::Int4;
    return streaming;
}

Status Trainer::timeForMode() {
    if (m_timedStepMs > 0)
        return success();
    auto computeMs = timeOneStep(m_coldStepMs);
    if (!computeMs)
        return computeMs.error();
    m_timedStepMs = *computeMs;
    return success();
}

ModeFacts Trainer::modeFacts() const {
    const RunConfig streaming = streamingOf(m_cfg);
    const ModelLayout& layout = m_hub->config().layout; // fixed before the hub started
    ModeFacts f;
    f.computeMs = m_timedStepMs;
    f.coldStartMs = m_coldStepMs;
    f.localDevices = m_cfg.localWorker ? 1 : 0;
    f.links = m_pool.probedLinks();
    f.syncBytesPerStep = 2.0 * double(layout.bundleBytes(storageDtype(m_cfg.wire)));
    // Each parameter goes each way once every H inner steps, a fragment at a time.
    f.streamBytesPerStep = 2.0 * double(outerBundleBytes(layout, streaming.outerWire)) /
                           double(std::max(1, streaming.localSteps));
    f.steps = stepsLeft();
    f.localSteps = streaming.localSteps;
    // A worker that lacks the base receives it before it starts; whether it has it is known
    // only once it asks.
    f.startBytes = double(m_hub->config().modelArchive->size()) +
                   (m_base ? double(m_base->manifest().totalBytes) : 0.0);
    return f;
}

// A run too short to stream can only train alone or in sync, and sync takes workers at any
// step: such a run starts on this machine at once, and each worker takes part or is sent home
// once its link is measured (decideWhileTraining). Only a run that may stream waits for them.
bool Trainer::startsBeforeWorkers() const {
    const int64_t steps = stepsLeft();
    return m_cfg.localWorker && steps > 0 &&
           steps < int64_t(kMinStreamingRounds) * std::max(1, streamingOf(m_cfg).localSteps);
}

Status Trainer::startBeforeWorkers() {
    m_cfg.mode = TrainMode::Sync;
    m_cfg.fragments = 1;
    if (auto st = m_cfg.validate(); !st)
        return st;
    m_state.config = m_cfg;
    makePolicy();
    m_decideWhileTraining = true;
    // Counted as the progress counts them: a resumed run says what is left.
    const QString start = m_state.step == 0
                              ? QStringLiteral("this run of %1 step(s) starts on this machine")
                              : QStringLiteral("this run, resumed with %1 step(s) left, starts "
                                               "on this machine");
    m_obs.onMessage(start.arg(stepsLeft()) +
                    QStringLiteral("; each worker takes part, or is sent home, once its link is "
                                   "measured"));
    return success();
}

// At a step's start, once a worker's link is measured and this machine has timed two steps of
// its own: the same choice as before a run, over the steps left.
// Until then, at each step, it asks whether a worker as fast as this machine could make the
// run end sooner even over a perfect link; once none could, every worker is sent home as it
// comes, before its link is measured (a measurement that costs both machines time).
Status Trainer::decideWhileTraining() {
    if (!m_decideWhileTraining || m_stepsThisRun < 2)
        return success();
    m_timedStepMs = m_trainSeconds * 1e3 / double(m_stepsThisRun);
    m_coldStepMs = std::max(m_firstStepMs, m_timedStepMs);
    if (m_pool.probedLinks().isEmpty()) {
        ModeFacts best = modeFacts();
        LinkFacts perfect;
        perfect.bytesPerSecond = 1e15;
        best.links = {perfect};
        ModeChoice choice = chooseMode(best);
        if (!choice.alone)
            return success(); // a worker may yet pay off: wait for its link
        m_decideWhileTraining = false;
        choice.why = QStringLiteral("no worker has been measured yet, and none could make this "
                                    "run end sooner even over a perfect link: %1")
                         .arg(choice.why);
        return applyMode(choice);
    }
    m_decideWhileTraining = false;
    m_pool.flushNotes(); // the link's measurement first, then what it decided
    ModeChoice choice = chooseMode(modeFacts());
    choice.streaming = false; // too short to stream: chooseMode says so too
    return applyMode(choice);
}

Status Trainer::decideMode() {
    m_pool.flushNotes();
    if (auto st = timeForMode(); !st)
        return st;
    return applyMode(chooseMode(modeFacts()));
}

QString Trainer::streamingDoesNotFit(const RunConfig& streaming) const {
    if (!m_cfg.localWorker)
        return {};
    auto device = chooseDevice(m_devices, m_cfg.device);
    if (!device)
        return {};
    MemoryNeed need = memoryNeed(m_module, m_data->train, streaming,
                                 mastersBeside(*device, m_masterOnDevice, streaming));
    (void)keepDataOnDevice(m_data->train, *device, need);
    auto fits = samplesThatFit(need, *device, QStringLiteral("this machine"));
    return fits ? QString() : fits.error().message;
}

Status Trainer::applyMode(const ModeChoice& chosen) {
    // Auto mode planned this machine's worker for sync; streaming keeps more beside it.
    ModeChoice choice = chosen;
    if (choice.streaming && !choice.alone) {
        if (const QString cannot = streamingDoesNotFit(streamingOf(m_cfg)); !cannot.isEmpty()) {
            choice.streaming = false;
            choice.why += QStringLiteral(". Streaming would not fit on this machine, so the run "
                                         "trains in sync: %1")
                              .arg(cannot);
        }
    }
    m_obs.onMessage(choice.why);
    m_obs.onEvent(RunEvent{RunEvent::Kind::ModeChosen, {}, choice.why, 0});
    m_alone = choice.alone;
    if (choice.alone) {
        m_cfg.mode = TrainMode::Sync;
        m_cfg.fragments = 1;
    } else if (choice.streaming) {
        m_cfg = streamingOf(m_cfg);
    } else {
        m_cfg.mode = TrainMode::Sync;
        m_cfg.fragments = 1;
    }
    if (auto st = m_cfg.validate(); !st)
        return st;
    m_modePending = false;
    if (!m_policy) // a run that started before its workers keeps its sync policy and optimizer
        makePolicy();
    // --max-steps counted the global batch's steps, as the choice did (stepsLeft); a streaming
    // step is a round of several batches. Left as it was, the run would take that many times
    // the samples asked for.
    if (choice.streaming && m_cfg.maxSteps > 0) {
        const int64_t batches = std::max<int64_t>(1, m_policy->samplesPerStep(m_cfg) / m_cfg.batch);
        const int64_t left = std::max<int64_t>(0, m_cfg.maxSteps - m_state.step);
        const int64_t rounds = (left + batches - 1) / batches;
        m_obs.onMessage(QStringLiteral("the %1 step(s) asked for are %2 round(s) of %3 batches "
                                       "in streaming")
                            .arg(left)
                            .arg(rounds)
                            .arg(batches));
        m_cfg.maxSteps = m_state.step + rounds;
    }
    m_state.config = m_cfg;
    if (choice.streaming) {
        // Every worker from now on, this machine's too, is planned for what streaming keeps.
        planMemory();
        for (size_t i = 0; i < m_pool.size(); ++i)
            if (!m_pool.at(i).remote)
                if (auto st = m_pool.applyMemoryPlan(i); !st)
                    return st;
    }
    if (m_alone)
        m_hub->dismiss(QStringLiteral("this run is too short for more machines to pay off; the "
                                      "coordinator trains it alone"),
                       workerSettings(m_cfg));
    else
        m_hub->decide(m_cfg.mode, m_cfg.outerWire, m_cfg.fragments, workerSettings(m_cfg));
    return success();
}

// The optimizer steps the run has left, as the sync policy would take them: the epochs' steps
// of the global batch, or fewer under --max-steps.
int64_t Trainer::stepsLeft() const {
    const int64_t perEpoch = m_sampler->stepsPerEpoch(m_cfg.batch);
    int64_t total = perEpoch * m_cfg.epochs;
    if (m_cfg.maxSteps > 0)
        total = std::min(total, m_cfg.maxSteps);
    return std::max<int64_t>(0, total - m_state.step);
}

} // namespace tandem
