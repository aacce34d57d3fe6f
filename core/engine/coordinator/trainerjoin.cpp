// The Trainer's joining phase: the hub that workers connect to, the invitations to paired
// machines, and the wait for the workers the run asked for; and, for a sharded run, the machines
// that join while it trains: asked whether each reaches every member, and held back a while
// where one was sent away.

#include "common/ports.h"
#include "engine/coordinator/trainer.h"
#include "engine/step/modelcheck.h"

#include <QDateTime>
#include <QElapsedTimer>

namespace tandem {

Status Trainer::join() {
    setPhase(Phase::Joining);
    if (m_cfg.listen.isEmpty())
        return success();
    if (auto st = startHub(); !st)
        return st;
    if (auto st = waitForWorkers(); !st)
        return st;
    return m_cfg.shard ? startShards() : success();
}

Status Trainer::startHub() {
    auto hp = parseHostPort(m_cfg.listen);
    if (!hp)
        return hp.error();
    HubConfig hc;
    hc.home = nodeHome(m_cfg.home);
    hc.name = m_cfg.name;
    const QString host = hp->first;
    // "::" means both IPv6 and IPv4, as for `serve`: invited peers connect back over whichever
    // kind of address they know this machine by.
    hc.address = host == QLatin1String("localhost") ? QHostAddress(QHostAddress::LocalHost)
                 : host == QLatin1String("::")      ? QHostAddress(QHostAddress::Any)
                                                    : QHostAddress(host);
    if (hc.address.isNull())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("--listen: \"%1\" is not an IP address").arg(host));
    hc.port = hp->second;
    hc.workerTimeoutMs = m_cfg.workerTimeoutS * 1000;
    hc.runId = m_state.schemaHash.left(8) + QStringLiteral("-") +
               QString::number(QDateTime::currentMSecsSinceEpoch());
    hc.settings = workerSettings(m_cfg);
    // A base travels apart, part by part, and only to a worker that lacks it.
    // Written to a file beside the run's record, not held in this machine's memory
    // (spilledbytes.h).
    auto archive = writeModelArchive(m_module, /*withWeights=*/!m_base, m_cfg.outDir);
    if (!archive)
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("cannot serialise the model for workers: %1")
                             .arg(archive.error().message));
    hc.modelArchive = std::move(*archive);
    m_archiveStep = m_base ? -1 : m_state.step;
    hc.base = m_base;
    hc.schemaHash = m_state.schemaHash;
    hc.datasetSpec = m_cfg.data;
    hc.datasetHash = m_state.datasetHash;
    hc.data = m_data;
    hc.reference = m_objective.reference;
    hc.mode = m_modePending ? TrainMode::Sync : m_cfg.mode;
    hc.modePending = m_modePending;
    hc.wire = storageDtype(m_cfg.wire);
    hc.outer = m_cfg.outerWire;
    hc.fragments = m_modePending ? 1 : m_cfg.fragments;
    hc.layout = ModelLayout::of(m_master.paramNames, m_master.params, m_master.bufferNames,
                                m_master.buffers);
    hc.trainSamples = m_data->train.count();
    hc.events = m_pool.hubSink();
    if (m_cfg.shard)
        if (auto st = shardHub(hc); !st)
            return st;
    m_pool.setHasHub(true);
    m_pool.setStepBytes(hc.layout.bundleBytes(hc.wire));
    m_hub = std::make_unique<CoordinatorHub>(hc);
    auto port = m_hub->start();
    if (!port)
        return port.error();
    for (const QString& inv : m_cfg.invites) {
        auto ihp = parseHostPort(
            inv.contains(QLatin1Char(':')) ? inv : inv + QStringLiteral(":%1").arg(kServePort));
        if (!ihp) {
            shutdown(QStringLiteral("bad invitation"));
            return ihp.error();
        }
        m_hub->invite(ihp->first, ihp->second);
    }
    m_obs.onMessage(QStringLiteral("listening on %1:%2 for %3 worker(s)")
                        .arg(hc.address.toString())
                        .arg(*port)
                        .arg(m_cfg.workers));
    return success();
}

Status Trainer::waitForWorkers() {
    QElapsedTimer joinClock;
    joinClock.start();
    if (m_modePending && startsBeforeWorkers())
        return startBeforeWorkers();
    int expected = m_cfg.workers;
    if (m_modePending) {
        // Timed while the workers start: the hub answers them on its own thread.
        if (auto st = timeForMode(); !st)
            return st;
        // A worker not there after a third of the run's time alone could not repay its start
        // (its wait is part of it, counted three times over): the run goes on without waiting.
        const qint64 patienceMs = aloneWaitMs();
        if (auto st = awaitWorkers(joinClock, true, patienceMs); !st)
            return st;
        // Those that came are the ones to wait for; the others join late, or are sent home.
        expected = std::min<int>(expected, int(m_pool.probedLinks().size()));
        if (patienceMs > 0 && expected == 0) {
            ModeChoice choice;
            choice.alone = true;
            choice.why = QStringLiteral("no worker had connected after %1 s, a third of this "
                                        "run's time on this machine alone: training on this "
                                        "machine alone")
                             .arg(double(joinClock.elapsed()) / 1e3, 0, 'f', 1);
            return applyMode(choice);
        }
        if (auto st = decideMode(); !st)
            return st;
        if (m_alone)
            return success();
    }
    if (auto st = awaitWorkers(joinClock, false, 0, expected); !st)
        return st;
    m_pool.admitJoined();
    return success();
}

qint64 Trainer::aloneWaitMs() const {
    if (!m_cfg.localWorker || m_timedStepMs <= 0 || stepsLeft() <= 0)
        return 0; // a coordinator that only leads, or a run of no known length, waits
    return std::max<qint64>(1, std::llround(double(stepsLeft()) * m_timedStepMs / kStartMargin));
}

Status Trainer::awaitWorkers(const QElapsedTimer& since, bool probed, qint64 patienceMs,
                             int count) {
    count = count < 0 ? m_cfg.workers : count;
    int joined = 0;
    QElapsedTimer patience;
    patience.start();
    auto slice = [&] {
        return patienceMs > 0 ? int(std::clamp<qint64>(patienceMs - patience.elapsed(), 1, 500))
                              : 500;
    };
    while ((joined = m_pool.waitForJoined(count, slice(), {}, probed)) < count) {
        if (patienceMs > 0 && patience.elapsed() >= patienceMs)
            break;
        m_pool.flushNotes();
        m_obs.onWaiting();
        if (m_cfg.joinTimeoutS > 0 && since.elapsed() > qint64(m_cfg.joinTimeoutS) * 1000 &&
            (joined > 0 || m_cfg.localWorker)) {
            if (!probed)
                m_obs.onMessage(QStringLiteral("%1 of %2 invited worker(s) joined within %3 s; "
                                               "training with them (late ones join as they come)")
                                    .arg(joined)
                                    .arg(m_cfg.workers)
                                    .arg(m_cfg.joinTimeoutS));
            break;
        }
        if (m_control && m_control->stopRequested()) {
            shutdown(QStringLiteral("the run was stopped before it started"));
            return makeError(ErrorCode::Cancelled,
                             QStringLiteral("stopped while waiting for workers"));
        }
    }
    return success();
}

QStringList Trainer::stillIn(size_t first) const {
    QStringList names;
    for (size_t w = first; w < m_pool.size(); ++w)
        if (m_pool.at(w).alive())
            names << m_pool.at(w).stats.name;
    return names;
}

void Trainer::holdBackDropped() {
    if (!m_hub)
        return;
    for (const SentAway& s : std::exchange(m_sentAway, {})) {
        const PoolMember& m = m_pool.at(s.member);
        if (s.connected && !m.remote->alive())
            continue;
        const qint64 waitMs =
            m_pool.holdBack(m.link->deviceId(), qint64(m_cfg.workerTimeoutS) * 1000);
        const QString when = QString::number(double(waitMs) / 1e3, 'f', 0);
        if (s.connected)
            m_hub->sendAway(m.remote->session(),
                            (s.unreached ? QStringLiteral("this machine could not link to every "
                                                          "machine of the sharded run")
                                         : QStringLiteral("the sharded run went on without this "
                                                          "machine")) +
                                QStringLiteral("; it may join again in %1 s").arg(when));
        m_obs.onMessage(QStringLiteral("%1 %2; the sharded run takes it in again when it comes "
                                       "back, in %3 s at the soonest")
                            .arg(m.stats.name,
                                 s.connected ? QStringLiteral("is sent away to connect again")
                                             : QStringLiteral("could not be taken in"),
                                 when));
    }
}

size_t Trainer::dropUnreached(size_t first, const QHash<QString, QString>& unreached) {
    size_t reached = 0;
    for (size_t w = first; w < m_pool.size(); ++w) {
        PoolMember& m = m_pool.at(w);
        if (!m.alive() || !m.remote)
            continue;
        const auto why = unreached.constFind(m.link->deviceId());
        if (why == unreached.constEnd()) {
            ++reached;
            continue;
        }
        m_pool.drop(w,
                    makeError(ErrorCode::Runtime,
                              QStringLiteral("it cannot link to every machine of the sharded "
                                             "run (%1)")
                                  .arg(*why)),
                    QStringLiteral("the sharded run goes on as it was"), m_state.step);
        m_sentAway.push_back({w, m.remote->alive(), true});
    }
    return reached;
}

std::optional<Trainer::ProbeAnswered> Trainer::probeJoined() {
    const int waitMs = ShardPart::kProbeMs + kProbeAnswerMs;
    QHash<QString, QString> answers;
    if (!m_probe) {
        std::vector<QString> ids;
        QStringList names;
        for (const auto& [id, name] : m_pool.joinedWorkers()) {
            ids.push_back(id);
            names << name;
        }
        m_probe = Probe{QSet<QString>(ids.begin(), ids.end()), QElapsedTimer()};
        m_probe->clock.start();
        m_shards->sendProbe(ids);
        answers = m_shards->probeAnswers(kProbeQuickMs);
        if (answers.size() < m_probe->workers.size())
            m_obs.onMessage(QStringLiteral("%1 is asked whether it reaches every machine of the "
                                           "sharded run; the run trains on until it answers (up "
                                           "to %2 s)")
                                .arg(names.join(QStringLiteral(", ")))
                                .arg(waitMs / 1000));
    } else {
        answers = m_shards->probeAnswers();
    }
    if (answers.size() < m_probe->workers.size() && m_probe->clock.elapsed() < waitMs)
        return std::nullopt;
    for (const QString& w : m_probe->workers)
        if (!answers.contains(w))
            answers.insert(w, QStringLiteral("it did not say within %1 s whether it reaches the "
                                             "run's machines")
                                  .arg(waitMs / 1000));
    for (auto it = answers.begin(); it != answers.end();)
        it = it->isEmpty() ? answers.erase(it) : std::next(it);
    ProbeAnswered answered{std::move(answers), std::exchange(m_probe, std::nullopt)->workers};
    m_shards->endProbe();
    return answered;
}

} // namespace tandem
