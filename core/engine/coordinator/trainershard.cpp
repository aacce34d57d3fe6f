// A sharded sync run (RunConfig::shard) as the Trainer drives it: the conductor the hub reports
// to, the setup of every machine's range once the workers have joined, and the optimizer's state
// gathered for a checkpoint (shardconductor.h).

#include "engine/coordinator/trainer.h"

#include "common/failpoint.h"
#include "engine/devices.h"
#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "model/tensormemory.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QScopeGuard>

#include <algorithm>
#include <utility>

namespace tandem {

Status Trainer::shardHub(HubConfig& hc) {
    // The ranges cut the trainable values only (ModelTensors::params): a frozen weight reaches
    // every machine inside the model, as in any run, and no owner keeps or sends it.
    m_shards = std::make_unique<ShardConductor>();
    hc.sharded = true;
    hc.shardReport = [c = m_shards.get()](const QString& id, const wire::ShardReport& r) {
        c->onReport(id, r);
    };
    hc.shardLost = [c = m_shards.get()](const QString& id, const QString& why) {
        c->onLost(id, why);
    };
    hc.shardState = [c = m_shards.get()](const QString& id, int64_t steps,
                                         const RangeState& state) { c->onState(id, steps, state); };
    // A range's state of gigabytes waits on the disk, not in this machine's memory: in a folder
    // of the run's own, emptied of what a killed run left there.
    hc.stateDir = arrivingDir();
    if (!hc.stateDir.isEmpty())
        QDir(hc.stateDir).removeRecursively();
    return success();
}

Expected<std::vector<int64_t>> Trainer::planShardRanges(const std::vector<size_t>& remotes,
                                                        bool* byLink) {
    // Each machine's range follows what its memory holds beside its own worker: in proportion
    // to its link where the handshakes timed every worker's (shardLinkSpeeds), else equal, and
    // smaller where a machine has less room (planShardedRun).
    (void)TANDEM_FAILPOINT("shard.plan"); // a stall stands in for a loaded machine
    std::vector<ShardMachine> machines;
    ShardMachine self;
    self.name = QStringLiteral("this machine");
    auto device = chooseDevice(m_devices, m_cfg.device);
    self.device = device ? *device : m_devices.value(0);
    self.computes = m_cfg.localWorker;
    // This machine keeps the model (the masters' run-long copy), whether or not it computes,
    // and the archive a worker that joins is sent where it could not go to a file. Where its own
    // worker's replica reads those weights in place (ModelReplica::takeWeights), the worker's
    // need counts them already.
    const bool readInPlace = self.computes && device &&
                             mastersBeside(*device, m_masterOnDevice, m_cfg) == MasterCopy::Shared;
    self.keptBytes =
        (readInPlace ? 0
                     : memoryNeed(m_module, m_data->train, m_cfg, MasterCopy::None).weightBytes) +
        m_hub->config().modelArchive->bytesKept();
    machines.push_back(self);
    std::vector<LinkFacts> links;
    for (size_t w : remotes) {
        machines.push_back(
            {m_pool.at(w).stats.name, m_pool.at(w).link->device(), !m_pool.at(w).holdsOnly(), 0});
        links.push_back(m_pool.linkOf(m_pool.at(w).stats.name));
    }
    const std::vector<double> speeds = shardLinkSpeeds(links);
    for (size_t i = 0; i < machines.size(); ++i)
        machines[i].linkBytesPerS = speeds[i];
    *byLink = speeds[0] > 0;
    auto plan = planShardedRun(m_module, m_data->train, m_cfg, machines);
    if (!plan)
        return makeError(plan.error().code,
                         QStringLiteral("the sharded run does not fit on its machines: %1")
                             .arg(plan.error().message));
    std::vector<int64_t> ends;
    for (const ShardPlan::Shard& s : plan->shards)
        ends.push_back(s.end);
    for (size_t i = 0; i < machines.size(); ++i)
        if (!plan->shardOf(int(i)))
            return makeError(ErrorCode::OutOfMemory,
                             QStringLiteral("%1 has no room for a range of the run's state beside "
                                            "its own worker; leave it out of the sharded run, or "
                                            "give it more memory")
                                 .arg(machines[i].name));
    return ends;
}

Trainer::Dropped Trainer::dropShardMembers(const QStringList& gone, const Error& why,
                                           const QString& consequence) {
    Dropped out;
    for (size_t w = 0; w < m_pool.size(); ++w) {
        PoolMember& m = m_pool.at(w);
        if (!m.remote || !gone.contains(m.link->deviceId()))
            continue;
        out.names << m.stats.name;
        if (m.alive()) {
            m_pool.drop(w, why, consequence, m_state.step);
            ++out.dropped;
            // Still connected: a link between members was lost, not the machine.
            if (m.remote->alive())
                m_sentAway.push_back({w, true});
        }
    }
    return out;
}

Status Trainer::startShards() {
    // A worker lost while the run is set up: it is set up again on the others, from the same
    // state, which is still here.
    for (;;) {
        const Status st = setUpShards();
        if (st)
            return st;
        QStringList gone = m_shards->lost();
        gone.removeAll(QString());
        if (dropShardMembers(gone, st.error(), QStringLiteral("the run is set up without it"))
                .dropped == 0)
            return st;
        m_shards->stop();
    }
}

Status Trainer::setUpShards() {
    // The blocks the ranges were cut in go back to the system: no step takes them again, and the
    // tensor cache would keep them through the run (548 MB for 226 M values, bench/README.md).
    const auto release = qScopeGuard([] { releaseCachedTensorMemory(); });
    std::vector<QString> workers;
    std::vector<size_t> remotes;
    QSet<QString> holders;
    size_t computing = m_cfg.localWorker ? 1 : 0;
    for (const std::vector<size_t>& members : {m_pool.live(), m_pool.holders()})
        for (size_t w : members)
            if (m_pool.at(w).remote) {
                workers.push_back(m_pool.at(w).link->deviceId());
                remotes.push_back(w);
                computing += m_pool.at(w).holdsOnly() ? 0 : 1;
                if (m_pool.at(w).holdsOnly())
                    holders.insert(workers.back());
            }
    if (workers.empty())
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("no worker joined the sharded run; it needs at least one "
                                        "beside this machine"));
    if (computing == 0)
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("no machine of the sharded run computes: every worker "
                                        "that came only holds (--hold-only), and this machine "
                                        "has no worker of its own (--no-local-worker); start a "
                                        "worker without --hold-only"));
    bool byLink = false;
    auto ends = planShardRanges(remotes, &byLink);
    if (!ends)
        return ends.error();
    QElapsedTimer clock;
    clock.start();
    QHash<QString, QString> names; // device ID → the worker's name in the run
    for (size_t w : remotes)
        names.insert(m_pool.at(w).link->deviceId(), m_pool.at(w).stats.name);
    if (m_cfg.shardLog)
        m_shards->setBackup(
            QFileInfo(m_recorder.checkpointPath()).dir().filePath(QStringLiteral("shard-logs")));
    m_shards->setComputing(computing);
    m_shards->setHolders(holders);
    m_shards->setNames(names);
    // Local-SGD's owners keep the outer optimizer's state: its momentum over the rounds' deltas.
    m_shards->setOuterStep(m_cfg.mode == TrainMode::LocalSgd);
    m_shards->setFragments(m_cfg.mode == TrainMode::LocalSgd ? m_cfg.fragments : 1);
    m_shards->setSpillDir(m_cfg.outDir);
    m_shards->setProgress([this](const QString& line) { m_obs.onMessage(line); });
    // A resumed run's state is read from its checkpoint a range at a time, as the ranges are
    // cut (restore() left it there); after that, from the optimizer, which holds it between
    // setups.
    const bool fromFile = m_ckpt && !m_ckpt->optimizerState.isEmpty();
    StateParts state;
    if (m_setupState) {
        auto spilled = m_setupState->tensors();
        if (!spilled)
            return spilled.error();
        state = StateParts::of(*spilled);
    } else {
        state = fromFile ? StateParts::of(m_ckpt->optimizerState)
                         : StateParts::of(m_optimizer->stateTensors());
    }
    if (auto st =
            m_shards->start(m_hub.get(), workers, *ends, &m_master.params, storageDtype(m_cfg.wire),
                            m_policy->serverOptimizer(m_cfg, m_runOptimizer), m_state.step,
                            m_optimizer->stepCount(), state, kShardSetupMs);
        !st)
        return st;
    if (fromFile)
        m_ckpt->optimizerState.clear(); // and the file goes
    m_setupState.reset();               // and its files go
    // The owners hold the state from now on (a resumed run's, cut into their ranges). Emptying
    // it cannot fail: there is nothing to check. This machine computes, as every other does, on
    // the weights as the wire carries them.
    (void)m_optimizer->restore(m_optimizer->stepCount(), QList<TensorRecord>{});
    m_shards->roundReplica();
    QStringList held;
    for (const ShardRange& r : m_shards->ranges())
        held << QStringLiteral("%1: values %2 to %3")
                    .arg(r.owner == m_shards->selfId() ? QStringLiteral("this machine")
                                                       : names.value(r.owner, r.owner))
                    .arg(r.begin)
                    .arg(r.end);
    m_obs.onMessage(
        QStringLiteral("sharded the optimizer across %1 machines in %2 s (%3), each "
                       "range sized by its machine's %4")
            .arg(workers.size() + 1)
            .arg(clock.elapsed() / 1000.0, 0, 'f', 1)
            .arg(held.join(QStringLiteral("; ")),
                 byLink ? QStringLiteral("link and memory") : QStringLiteral("memory")));
    return success();
}

Status Trainer::gatherShardState(bool keepState) {
    if (!m_shards)
        return success();
    // What the gathering held for a moment (each range's owner rebuilt here, the state in the
    // one-owner names) goes back to the system, not to the tensor cache: no step follows soon
    // that would take it, and the cache would keep up to an eighth of the machine's memory.
    const auto release = qScopeGuard([] { releaseCachedTensorMemory(); });
    // The owners hold the optimizer's state and the fp32 weights: they come here for the
    // checkpoint, the state in the one-owner run's names, so that the run resumes on any set of
    // machines, and go again once written.
    auto gathered = m_shards->gatherState(kShardSetupMs, keepState);
    if (!gathered) {
        // A machine lost while the state came: the machines left take the run over from the step
        // just finished, and give theirs.
        if (auto st = reformShards(gathered.error(), {}); !st)
            return st;
        gathered = m_shards->gatherState(kShardSetupMs, keepState);
        if (!gathered)
            return gathered.error();
    }
    // The optimizer takes the gathered tensors themselves (none without `keepState`).
    return m_optimizer->restore(gathered->first, gathered->second);
}

Expected<std::pair<int64_t, std::unique_ptr<SpilledState>>>
Trainer::spillShards(const QString& dir) {
    auto spilled = m_shards->spillState(dir, kShardSetupMs);
    if (spilled)
        return spilled;
    // A machine lost while the state came: the machines left take the run over from the step
    // just finished, and give theirs.
    if (auto st = reformShards(spilled.error(), {}); !st)
        return st.error();
    return m_shards->spillState(dir, kShardSetupMs);
}

Status Trainer::spillShardState() {
    const auto release = qScopeGuard([] { releaseCachedTensorMemory(); });
    auto spilled = spillShards(m_cfg.outDir);
    if (!spilled) {
        if (!m_shards->lost().isEmpty())
            return spilled.error(); // a machine lost that the run could not do without
        // A disk that cannot take it: the state comes here whole, as it used to.
        m_obs.onMessage(QStringLiteral("the owners' state could not wait in files in %1 (%2); it "
                                       "comes into this machine's memory")
                            .arg(QDir::toNativeSeparators(m_cfg.outDir), spilled.error().message));
        return gatherShardState();
    }
    // The count the run goes on from; the state waits in the files for the next setup.
    (void)m_optimizer->restore(spilled->first, QList<TensorRecord>{});
    m_setupState = std::move(spilled->second);
    return success();
}

Status Trainer::checkpointShards() {
    const auto release = qScopeGuard([] { releaseCachedTensorMemory(); });
    auto spilled = spillShards(QFileInfo(m_recorder.checkpointPath()).absolutePath());
    if (!spilled)
        return spilled.error();
    const auto& [steps, state] = *spilled;
    // The count the checkpoint keeps and the run goes on from; the state stays with the owners.
    (void)m_optimizer->restore(steps, QList<TensorRecord>{});
    auto tensors = state->tensors();
    if (!tensors)
        return tensors.error();
    Status st = m_recorder.checkpoint(m_module, *tensors, steps, m_state);
    if (!st && !state->failure().isEmpty())
        return makeError(st.error().code,
                         QStringLiteral("%1 (%2)").arg(st.error().message, state->failure()));
    return st;
}

Status Trainer::admitToShards() {
    const auto later = qScopeGuard([this] { holdBackDropped(); });
    if (m_ctx)
        m_ctx->admitWaiting = false;
    if (!m_shards || !m_pool.anyJoined()) {
        if (m_probe && m_shards)
            m_shards->endProbe();
        m_probe.reset();
        m_probeAnswered.reset();
        m_pool.admitJoined();
        return success();
    }
    // One that cannot reach a member would fail the setup after every machine stopped to wait
    // for its links: it is asked first, while the run trains on, and waits to be tried again.
    if (!m_probeAnswered)
        m_probeAnswered = probeJoined();
    if (!m_probeAnswered)
        return success(); // the next step boundary looks again
    // A setup ends every step under way: streaming collects its rounds first, and asks again.
    if (m_ctx && m_ctx->inFlight > 0) {
        m_ctx->admitWaiting = true;
        return success();
    }
    auto [unreached, probed] = *std::exchange(m_probeAnswered, std::nullopt);
    QElapsedTimer clock;
    clock.start();
    const size_t before = m_pool.size();
    m_pool.admitJoined(false, &probed);
    if (stillIn(before).isEmpty())
        return success(); // those that came were sent home (the memory plan says why)
    if (dropUnreached(before, unreached) == 0)
        return success();
    const QStringList names = stillIn(before);
    if (auto st = spillShardState(); !st)
        return st;
    m_shards->stop();
    // Where a link between one that comes and one that trained is lost, the one that comes
    // goes: a link still cut does not cost the run a machine it had.
    QSet<QString> newcomers;
    for (size_t w = before; w < m_pool.size(); ++w)
        newcomers.insert(m_pool.at(w).link->deviceId());
    m_shards->setNewcomers(newcomers);
    bool noRoom = false;
    const auto settled = qScopeGuard([&] {
        m_shards->setNewcomers({});
        // One that did not make it in waits before it is tried again; one with no room for a
        // range stays out, as it would again.
        if (noRoom)
            return;
        for (size_t w = before; w < m_pool.size(); ++w) {
            const bool queued = std::any_of(m_sentAway.begin(), m_sentAway.end(),
                                            [&](const SentAway& s) { return s.member == w; });
            if (!m_pool.at(w).alive() && !queued)
                m_sentAway.push_back({w, m_pool.at(w).remote->alive()});
        }
    });
    if (auto st = startShards(); !st) {
        // A machine with no room for a range, say: the run goes on as it was, without it.
        noRoom = true;
        const QString consequence = QStringLiteral("the sharded run goes on without it");
        for (size_t w = before; w < m_pool.size(); ++w)
            if (m_pool.at(w).alive())
                m_pool.drop(w, st.error(), consequence, m_state.step);
        m_shards->stop();
        if (auto again = startShards(); !again)
            return again;
        m_obs.onMessage(QStringLiteral("the sharded run could not take in %1 (%2); it goes on "
                                       "as it was")
                            .arg(names.join(QStringLiteral(", ")), st.error().message));
        return success();
    }
    // One lost while the run was set up (its link to another machine, say) is not in it.
    const QStringList in = stillIn(before);
    if (in.isEmpty())
        m_obs.onMessage(QStringLiteral("the sharded run could not take in %1; it goes on as it "
                                       "was")
                            .arg(names.join(QStringLiteral(", "))));
    else
        m_obs.onMessage(QStringLiteral("the sharded run took in %1 from step %2 in %3 s")
                            .arg(in.join(QStringLiteral(", ")))
                            .arg(m_state.step + 1)
                            .arg(clock.elapsed() / 1000.0, 0, 'f', 1));
    return success();
}

void Trainer::dropShardState(bool keepWeights) {
    if (!m_shards)
        return;
    // Emptying the state cannot fail: there is nothing to check. This machine computes on the
    // weights as the wire carries them again.
    (void)m_optimizer->restore(m_optimizer->stepCount(), QList<TensorRecord>{});
    if (!keepWeights)
        m_shards->roundReplica();
    releaseCachedTensorMemory(); // the state's blocks: no step of the run would take them
}

Status Trainer::compactShardLogs() {
    if (!m_shards || !m_cfg.shardLog)
        return success();
    if (const QString why = m_shards->logFailure(); !why.isEmpty()) {
        // Said once: the run goes on, and would stop at its checkpoint if it lost a machine.
        if (!m_shardLogWarned)
            m_obs.onMessage(QStringLiteral("%1; a machine lost from now on stops the run at its "
                                           "last checkpoint")
                                .arg(why));
        m_shardLogWarned = true;
        return success();
    }
    static const qint64 set = qEnvironmentVariableIntValue("TANDEM_SHARD_LOG_BYTES");
    const qint64 limit =
        set > 0 ? set : std::max<qint64>(qint64(2) << 30, 4 * 4 * m_master.trainableCount());
    if (m_shards->logBytes() < limit)
        return success();
    if (auto st = m_shards->rebaseLogs(kShardSetupMs); !st)
        return reformShards(st.error(), {}); // a machine lost meanwhile
    return success();
}

Status Trainer::reformShards(const Error& failure, const QStringList& lost) {
    QStringList gone = lost;
    for (const QString& id : m_shards->lost())
        if (!gone.contains(id))
            gone << id;
    gone.removeAll(QString()); // this machine's own worker: its part failing ends the run
    if (gone.isEmpty() || !m_shards->backedUp())
        return failure;
    const QStringList names =
        dropShardMembers(gone, failure,
                         QStringLiteral("the machines left take over its range from step %1")
                             .arg(m_state.step + 1))
            .names;
    // The step under way is lost on every machine: the run goes on from the one before, which
    // each range's log holds, on the machines left.
    m_shards->stop();
    QElapsedTimer clock;
    clock.start();
    auto rebuilt = m_shards->rebuild(m_state.step - 1);
    if (!rebuilt)
        return makeError(failure.code,
                         QStringLiteral("%1; the run's state could not be rebuilt without it: %2")
                             .arg(failure.message, rebuilt.error().message));
    {
        at::NoGradGuard noGrad;
        for (size_t i = 0; i < m_master.params.size(); ++i)
            m_master.params[i].copy_(rebuilt->masters[i]);
    }
    QList<TensorRecord> records;
    for (const auto& [name, t] : rebuilt->state)
        records << toRecord(name, t);
    if (auto st = m_optimizer->restore(rebuilt->steps, records); !st)
        return st;
    if (auto st = startShards(); !st)
        return makeError(st.error().code,
                         QStringLiteral("%1; the machines left could not take the run over: %2")
                             .arg(failure.message, st.error().message));
    m_obs.onMessage(QStringLiteral("the sharded run goes on without %1 from step %2: its state "
                                   "after step %3 was rebuilt in %4 s")
                        .arg(names.isEmpty() ? gone.join(QStringLiteral(", "))
                                             : names.join(QStringLiteral(", ")))
                        .arg(m_state.step + 1)
                        .arg(m_state.step)
                        .arg(clock.elapsed() / 1000.0, 0, 'f', 1));
    return success();
}

Error Trainer::shardedFailure(Error e) const {
    // The owners' state since then is gone with the run; the checkpoint holds a one-machine
    // run's, which resumes on any set of machines.
    if (e.message.endsWith(QLatin1Char('.')))
        e.message.chop(1);
    if (m_checkpointStep >= 0)
        e.message += QStringLiteral(". Its last checkpoint, %1, holds step %2: resume from it on "
                                    "the machines that are left (tandem train --resume %1)")
                         .arg(m_recorder.checkpointPath())
                         .arg(m_checkpointStep);
    else if (!m_resumeFrom.isEmpty())
        e.message += QStringLiteral(". It wrote no checkpoint since it resumed from %1, step %2: "
                                    "resume from that again (tandem train --resume %1); "
                                    "--checkpoint-every N keeps one every N steps")
                         .arg(m_resumeFrom)
                         .arg(m_ckpt ? m_ckpt->state.step : 0);
    else
        e.message += QStringLiteral(". It wrote no checkpoint, so it starts again from the "
                                    "beginning; --checkpoint-every N keeps one every N steps");
    return e;
}

void Trainer::summarizeShards(RunSummary& sum) {
    QHash<QString, QString> names; // device ID → the worker's name in the run
    for (size_t w = 0; w < m_pool.size(); ++w) {
        const PoolMember& m = m_pool.at(w);
        names.insert(m.remote ? m.link->deviceId() : m_shards->selfId(), m.stats.name);
    }
    const auto traffic = m_shards->traffic();
    QStringList said;
    for (size_t i = 0; i < traffic.size(); ++i) {
        const ShardConductor::Traffic& t = traffic[i];
        RunSummary::Shard s;
        s.deviceId = t.range.owner;
        s.machine = names.value(s.deviceId, s.deviceId == m_shards->selfId()
                                                ? QStringLiteral("this machine")
                                                : s.deviceId);
        s.begin = t.range.begin;
        s.end = t.range.end;
        s.heldBytes = m_shards->holding(s.deviceId).bytes;
        s.stepsMeasured = t.steps;
        s.sentPerStep = t.sentPerStep;
        s.receivedPerStep = t.receivedPerStep;
        s.fullSteps = t.fullSteps;
        s.sentPerFullStep = t.sentPerFullStep;
        s.receivedPerFullStep = t.receivedPerFullStep;
        sum.shards << s;
        QString line = QStringLiteral("%1 held shard %2 of %3, %4")
                           .arg(s.machine)
                           .arg(i + 1)
                           .arg(traffic.size())
                           .arg(bytesText(s.heldBytes));
        if (t.steps > 0)
            line +=
                QStringLiteral(", and sent %1 and received %2 a step")
                    .arg(bytesText(qint64(t.sentPerStep)), bytesText(qint64(t.receivedPerStep)));
        said << line;
    }
    m_obs.onMessage(QStringLiteral("sharded run: %1").arg(said.join(QStringLiteral("; "))));
}

} // namespace tandem
