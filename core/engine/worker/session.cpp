#include "engine/worker/session.h"

#include "common/version.h"
#include "engine/devices.h"
#include "engine/step/memoryplan.h"
#include "engine/training.h"
#include "engine/wire/hello.h"
#include "net/connection.h"
#include "net/truststore.h"

#include <QLocale>

#include <algorithm>

namespace tandem {

WorkerSession::WorkerSession(const WorkerOptions& o, DeviceInfo device, const Identity& id,
                             std::function<void(const QString&)> log, std::function<void()> onDone)
    : m_opt(o)
    , m_device(std::move(device))
    , m_identity(id)
    , m_log(std::move(log))
    , m_onDone(std::move(onDone))
    , m_loop({m_log, [this](int code, const QString& why) { finish(code, why); },
              [this](const wire::Result& r, double share) { m_events.stepSent(r, share); }}) {
    m_events.recordIn(m_opt.home, m_device.torchDevice());
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, [this] { connectNow(); });
    // Unpairing the coordinator here ends the session at once.
    connect(&m_trust, &TrustWatcher::revoked, this, [this](const QString& id) {
        finish(
            1,
            QStringLiteral("the coordinator (device %1) was unpaired from this machine").arg(id));
    });
}

void WorkerSession::start() {
    m_sinceLost.start();
    connectNow();
}

void WorkerSession::connectNow() {
    m_state = State::Connecting;
    m_conn = Connection::connectTo(m_opt.host, m_opt.port, m_identity, this);
    m_conn->setIdleTimeout(m_opt.idleTimeoutSeconds * 1000);
    // A model's archive up to this machine's memory (a full fine-tune of 1.5 B parameters sends
    // 6 GB of fp32 weights): a larger one could not be trained here in any case.
    m_conn->setBlobCap(wire::BlobKind::Model,
                       std::max<qint64>(qint64(4) << 30, systemMemoryBytes()));
    connect(m_conn, &Connection::secured, this, &WorkerSession::onSecured);
    connect(m_conn, &Connection::received, this, &WorkerSession::onMessage);
    connect(m_conn, &Connection::closed, this, &WorkerSession::onClosed);
}

void WorkerSession::onSecured(const QString& peerId) {
    if (!TrustStore(m_opt.home).contains(peerId)) {
        finish(1, QStringLiteral("the coordinator at %1:%2 (device %3) is not paired with this "
                                 "machine; pair them, or run 'tandem trust add %3'")
                      .arg(m_opt.host)
                      .arg(m_opt.port)
                      .arg(peerId));
        return;
    }
    m_state = State::AwaitHello;
    wire::Hello hello = makeHello(PeerRole::Worker, m_identity.deviceId());
    if (!m_opt.name.isEmpty())
        hello.displayName = m_opt.name;
    hello.holdsOnly = m_opt.holdsOnly;
    m_conn->send(hello);
    m_trust.watch(peerId);
    m_events.coordinatorId(peerId);
}

void WorkerSession::onClosed(const QString& reason) {
    if (m_state == State::Done)
        return;
    m_loop.lostConnection();
    Connection* old = m_conn;
    m_conn = nullptr;
    const bool unreadable = old && old->closedOnUnreadable();
    if (old) {
        old->disconnect(this);
        old->deleteWhenFlushed();
    }
    if (unreadable) // the coordinator would send the same again
        return finish(1, QStringLiteral("the coordinator sent what this worker cannot read (%1); "
                                        "run the same version of Tandem on both machines")
                             .arg(reason));
    if (m_state != State::Connecting) {
        m_log(QStringLiteral("lost the coordinator: %1; trying to reconnect for %2 s")
                  .arg(reason)
                  .arg(m_opt.reconnectSeconds));
        m_sinceLost.restart();
    }
    if (m_sinceLost.elapsed() > qint64(m_opt.reconnectSeconds) * 1000) {
        finish(1, QStringLiteral("cannot reach the coordinator at %1:%2: %3")
                      .arg(m_opt.host)
                      .arg(m_opt.port)
                      .arg(reason));
        return;
    }
    m_state = State::Connecting;
    m_retry.start(500);
}

void WorkerSession::finish(int code, const QString& why, std::optional<wire::Message> last) {
    if (m_state == State::Done)
        return;
    m_state = State::Done;
    m_exit = code;
    m_loop.lostConnection();
    m_events.ended(code == 0 ? QString() : why);
    const int64_t queued = m_loop.roundsQueued(), rounds = queued + m_loop.roundsWaited();
    if (rounds > 0)
        m_log(QStringLiteral("%1 of %2 round(s) began without waiting for the coordinator")
                  .arg(QString::number(queued), QString::number(rounds)));
    if (!why.isEmpty())
        m_log(why);
    if (m_conn)
        m_conn->close(why, std::move(last));
    QTimer::singleShot(100, this, [this] { m_onDone(); });
}

bool WorkerSession::onAnyState(const wire::Message& m) {
    if (const auto* r = std::get_if<wire::Reject>(&m)) {
        finish(1, QStringLiteral("the coordinator refused this worker: %1").arg(r->message));
    } else if (const auto* b = std::get_if<wire::Bye>(&m)) {
        if (b->again) {
            // The connection goes, and onClosed() connects again.
            m_log(QStringLiteral("the coordinator sent this machine away: %1; connecting again")
                      .arg(b->reason));
            if (m_conn)
                m_conn->close(b->reason);
            return true;
        }
        finish(0, QStringLiteral("the coordinator ended the run: %1").arg(b->reason));
    } else if (const auto* c = std::get_if<wire::Control>(&m)) {
        if (c->action == wire::Control::Action::Pause) {
            m_log(QStringLiteral("the run is paused"));
            m_events.paused(true);
        } else if (c->action == wire::Control::Action::Resume) {
            m_log(QStringLiteral("the run continues"));
            m_events.paused(false);
        } else if (c->action == wire::Control::Action::Stop)
            finish(0, QStringLiteral("the coordinator stopped the run"));
    } else {
        return false;
    }
    return true;
}

void WorkerSession::onMessage(const wire::Message& m) {
    if (onAnyState(m))
        return;
    const auto* hello = std::get_if<wire::Hello>(&m);
    const auto* spec = std::get_if<wire::RunSpec>(&m);
    const auto* offer = std::get_if<wire::DataOffer>(&m);
    const auto* part = std::get_if<wire::BasePart>(&m);
    const auto* assign = std::get_if<wire::Assign>(&m);
    if (m_state == State::AwaitHello && hello)
        onHello(*hello);
    else if (m_state == State::AwaitRun && spec)
        onRunSpec(*spec);
    else if (m_state == State::AwaitBase && m_base && part)
        onBasePart(*part);
    else if (m_state == State::AwaitData && offer)
        onDataOffer(*offer);
    else if (m_state == State::Working && assign)
        onAssign(*assign);
    else if (m_state == State::Working)
        onShardMessage(m);
}

void WorkerSession::onHello(const wire::Hello& h) {
    if (const QString why = wire::incompatibility(appVersion(), h.protocolVersion, h.appVersion,
                                                  nameOf(PeerRole::Coordinator));
        !why.isEmpty()) {
        refuse(wire::RejectCode::Version, why);
        return;
    }
    m_log(QStringLiteral("connected to coordinator %1 (Tandem %2, LibTorch %3)")
              .arg(h.displayName, h.appVersion, h.torchVersion));
    m_events.coordinatorName(h.displayName);
    m_state = State::AwaitRun;
}

void WorkerSession::onRunSpec(const wire::RunSpec& spec) {
    m_shard.reset();
    m_loop.reset();
    m_run.reset();
    m_base.reset();
    if (m_opt.holdsOnly && !spec.sharded)
        return refuse(wire::RejectCode::Busy,
                      QStringLiteral("this worker only holds a range of a sharded run "
                                     "(--hold-only), and this run is not sharded: start it with "
                                     "--shard, or start this worker without --hold-only"));
    if (m_opt.holdsOnly)
        return holdRange(spec);
    std::optional<QByteArray> archive = m_conn->takeBlob(spec.modelBlob);
    if (!archive) {
        finish(1, QStringLiteral("the coordinator's model did not arrive whole"));
        return;
    }
    if (spec.baseHash.isEmpty())
        return admit(spec, *archive, nullptr);
    findBase(spec, *archive);
}

void WorkerSession::onAssign(const wire::Assign& a) {
    if (m_opt.holdsOnly)
        return refuse(wire::RejectCode::Protocol,
                      QStringLiteral("the coordinator gave work to a worker that only holds "
                                     "(--hold-only)"));
    for (int64_t i : a.indices)
        if (i < 0 || i >= m_data->train.count()) {
            const QString why = QStringLiteral("assigned sample %1, outside the dataset").arg(i);
            m_conn->send(wire::WorkError{a.step, why});
            finish(1, why);
            return;
        }
    std::optional<QByteArray> weights;
    if (a.weightsBlob != 0) {
        weights = m_conn->takeBlob(a.weightsBlob);
        if (!weights) {
            finish(1, QStringLiteral("an assignment arrived without its weights"));
            return;
        }
        // In a sharded run only a setup's first step sends the whole model, where a replica may
        // be behind it: said, since the step holds it beside the replica.
        if (m_shard)
            m_log(QStringLiteral("took the whole model's weights for step %1 (%2), as the "
                                 "sharded run was set up")
                      .arg(a.step + 1)
                      .arg(bytesText(weights->size())));
    }
    m_loop.enqueue(a, std::move(weights));
}

} // namespace tandem
