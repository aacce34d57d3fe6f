#include "engine/coordinator/hub.h"

#include "engine/coordinator/hubsession.h"
#include "engine/coordinator/remoteworker.h"

#include "engine/coordinator/modechoice.h"
#include "engine/wire/hello.h"
#include "net/identity.h"
#include "net/truststore.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QTimer>

Q_LOGGING_CATEGORY(lcHub, "tandem.hub")

namespace tandem {

namespace {
// A working worker's link is measured again this often (TANDEM_LINK_PROBE_MS overrides it; 0:
// never), with this much filler, when nothing else is being sent to it.
constexpr int kLiveProbeMs = 30000;
constexpr qint64 kLiveProbeBytes = 256 << 10;
constexpr qint64 kByeFlushMs = 5000;

} // namespace

CoordinatorHub::CoordinatorHub(HubConfig config)
    : m_config(std::move(config)) {
    m_thread.setObjectName(QStringLiteral("tandem-network"));
}

CoordinatorHub::~CoordinatorHub() {
    if (m_thread.isRunning())
        finish(QStringLiteral("the coordinator stopped"));
}

Expected<quint16> CoordinatorHub::start() {
    auto identity = Identity::loadOrCreate(m_config.home);
    if (!identity)
        return identity.error();
    m_deviceId = identity->deviceId();
    m_identity = *identity;
    moveToThread(&m_thread);
    m_thread.start();
    Expected<quint16> result = makeError(ErrorCode::Runtime, QStringLiteral("not started"));
    QMetaObject::invokeMethod(
        this,
        [this, &result, id = *identity] {
            m_server = new Server(id, this);
            connect(m_server, &Server::connectionSecured, this, &CoordinatorHub::onSecured);
            if (auto st = m_server->listenOn(m_config.address, m_config.port); !st)
                result = st.error();
            else
                result = m_server->serverPort();
            const int every = qEnvironmentVariableIsSet("TANDEM_LINK_PROBE_MS")
                                  ? qEnvironmentVariableIntValue("TANDEM_LINK_PROBE_MS")
                                  : kLiveProbeMs;
            if (every > 0) {
                auto* live = new QTimer(this);
                connect(live, &QTimer::timeout, this, &CoordinatorHub::probeLive);
                live->start(every);
            }
        },
        Qt::BlockingQueuedConnection);
    return result;
}

void CoordinatorHub::onSecured(Connection* c) {
    // Nothing about this machine (its name, versions, devices) goes to a device it has not
    // paired with: any TLS client can present a certificate, so trust is checked first and a
    // stranger hears only that it is not paired.
    if (!TrustStore(m_config.home).contains(c->peerId())) {
        const QString why = QStringLiteral("device %1 is not paired with this coordinator; pair "
                                           "the two machines, or run 'tandem trust add %1' on "
                                           "the coordinator")
                                .arg(c->peerId());
        addMessage(QStringLiteral("refused %1: %2").arg(c->peerAddress(), why));
        c->setParent(this);
        connect(c, &Connection::closed, c, &Connection::deleteWhenFlushed);
        c->close(why, wire::Reject{wire::RejectCode::Untrusted, why});
        return;
    }
    auto* s = new HubSession(this, c);
    m_sessions << s;
    c->send(hello());
}

wire::Hello CoordinatorHub::hello() const {
    wire::Hello h = makeHello(PeerRole::Coordinator, m_deviceId);
    if (!m_config.name.isEmpty())
        h.displayName = m_config.name;
    return h;
}

QString CoordinatorHub::workerName(const QString& displayName, const QString& deviceId,
                                   const HubSession* session) const {
    const QString base = QStringLiteral("%1 (device %2)")
                             .arg(displayName.isEmpty() ? QStringLiteral("worker") : displayName,
                                  shortDeviceIdText(deviceId));
    QString name = base;
    for (int n = 2;; ++n) {
        bool taken = false;
        for (const HubSession* s : m_sessions)
            taken = taken || (s != session && s->name() == name);
        if (!taken)
            return name;
        name = QStringLiteral("%1 #%2").arg(base).arg(n);
    }
}

void CoordinatorHub::probed(const QString& worker, const QString& address, const LinkProbe& link) {
    addMessage(QStringLiteral("the link to %1 at %2 moves %3 (round trip %4 ms)")
                   .arg(worker, address, linkRateText(link.bytesPerSecond, link.atLeast))
                   .arg(link.rttMs, 0, 'f', 1));
    if (m_config.events)
        m_config.events(HubEvent::probed(worker, link));
}

void CoordinatorHub::decide(TrainMode mode, OuterWire outer, int fragments,
                            const wire::WorkerSettings& settings) {
    QMetaObject::invokeMethod(
        this,
        [this, mode, outer, fragments, settings] {
            m_config.mode = mode;
            m_config.outer = outer;
            m_config.fragments = fragments;
            m_config.settings = settings;
            m_config.modePending = false;
            const QList<HubSession*> sessions = m_sessions; // a send may close one
            for (HubSession* s : sessions)
                if (s->state() == HubSession::State::AwaitRun)
                    s->sendRun();
        },
        Qt::BlockingQueuedConnection);
}

void CoordinatorHub::dismiss(const QString& reason, const wire::WorkerSettings& settings) {
    QMetaObject::invokeMethod(
        this,
        [this, reason, settings] {
            m_config.mode = TrainMode::Sync;
            m_config.settings = settings;
            m_config.modePending = false;
            m_config.dismissed = reason;
            const QList<HubSession*> sessions = m_sessions; // closing one takes it off the list
            for (HubSession* s : sessions)
                if (s->state() == HubSession::State::AwaitRun)
                    s->connection()->close(reason, wire::Bye{reason});
        },
        Qt::BlockingQueuedConnection);
}

void CoordinatorHub::probeLive() {
    for (HubSession* s : std::as_const(m_sessions))
        if (s->state() == HubSession::State::Working && s->connection()->idle())
            s->connection()->probe(kLiveProbeBytes, 1);
}

void CoordinatorHub::sessionGone(HubSession* session) {
    m_sessions.removeAll(session);
}

void CoordinatorHub::runOnNetwork(const std::function<void()>& job) {
    QMetaObject::invokeMethod(this, job, Qt::BlockingQueuedConnection);
}

void CoordinatorHub::sendAway(HubSession* session, const QString& reason) {
    QMetaObject::invokeMethod(this, [this, session, reason] {
        if (m_sessions.contains(session))
            session->connection()->close(reason, wire::Bye{reason, /*again=*/true});
    });
}

HubSession* CoordinatorHub::workingSession(const QString& deviceId) const {
    for (HubSession* s : m_sessions)
        if (s->state() == HubSession::State::Working && s->connection()->peerId() == deviceId)
            return s;
    return nullptr;
}

void CoordinatorHub::postAssign(HubSession* session, WorkRequest request) {
    QMetaObject::invokeMethod(
        this,
        [this, session, request = std::move(request)] {
            if (!m_sessions.contains(session))
                return; // it left; its RemoteWorker already reports the failure
            session->assign(request);
        },
        Qt::QueuedConnection);
}

QByteArray CoordinatorHub::datasetContainer() {
    if (m_datasetBlob.isEmpty() && m_config.data) {
        auto b = datasetToContainer(*m_config.data, TokenPlacement::Apart);
        if (b)
            m_datasetBlob = *b;
    }
    return m_datasetBlob;
}

void CoordinatorHub::addMessage(const QString& text) {
    qCDebug(lcHub) << text;
    if (m_config.events)
        m_config.events(HubEvent::note(text));
}

void CoordinatorHub::joined(std::shared_ptr<RemoteWorker> worker) {
    if (m_config.events)
        m_config.events(HubEvent::joined(std::move(worker)));
}

void CoordinatorHub::invite(const QString& host, quint16 port) {
    QMetaObject::invokeMethod(
        this, [this, host, port] { inviteAttempt(host, port, 1); }, Qt::QueuedConnection);
}

void CoordinatorHub::inviteAttempt(const QString& host, quint16 port, int attempt) {
    if (!m_identity || !m_server)
        return;
    Connection* c = Connection::connectTo(host, port, *m_identity, this);
    const QString where = QStringLiteral("%1:%2").arg(host).arg(port);
    auto secured = std::make_shared<bool>(false);
    connect(c, &Connection::secured, this, [this, c, where, secured](const QString& peerId) {
        *secured = true;
        if (!TrustStore(m_config.home).contains(peerId)) {
            addMessage(QStringLiteral("not inviting %1: device %2 is not paired with this machine")
                           .arg(where, peerId));
            c->close(QStringLiteral("not paired"));
            return;
        }
        c->send(hello());
        c->send(wire::Invite{m_server->serverPort(), m_config.runId});
        addMessage(QStringLiteral("invited %1 to join").arg(where));
    });
    connect(c, &Connection::received, this, [this, c, where](const wire::Message& m) {
        if (const auto* r = std::get_if<wire::Reject>(&m)) {
            addMessage(QStringLiteral("%1 declined the invitation: %2").arg(where, r->message));
            if (m_config.events)
                m_config.events(HubEvent::declined(where, r->message));
        }
        if (std::holds_alternative<wire::Bye>(m) || std::holds_alternative<wire::Reject>(m))
            c->close(QStringLiteral("invitation answered"));
    });
    connect(c, &Connection::closed, this,
            [this, c, host, port, where, attempt, secured](const QString& reason) {
                c->deleteWhenFlushed();
                if (*secured)
                    return;
                if (attempt >= kInviteAttempts) {
                    addMessage(QStringLiteral("could not invite %1 after %2 tries: %3; check that "
                                              "`tandem serve` runs there and that this machine "
                                              "can reach it")
                                   .arg(where)
                                   .arg(attempt)
                                   .arg(reason));
                    return;
                }
                const int pauseMs = 500 << std::min(attempt, 4);
                addMessage(QStringLiteral("could not reach %1 to invite it (%2); trying again in "
                                          "%3 s")
                               .arg(where, reason)
                               .arg(pauseMs / 1000.0));
                QTimer::singleShot(pauseMs, this, [this, host, port, attempt] {
                    inviteAttempt(host, port, attempt + 1);
                });
            });
}

void CoordinatorHub::broadcast(wire::Control::Action action) {
    QMetaObject::invokeMethod(
        this,
        [this, action] {
            const QList<HubSession*> sessions = m_sessions; // a send may close one
            for (HubSession* s : sessions)
                if (s->state() == HubSession::State::Working)
                    s->connection()->send(wire::Control{action});
        },
        Qt::QueuedConnection);
}

void CoordinatorHub::finish(const QString& reason) {
    if (!m_thread.isRunning())
        return;
    QMetaObject::invokeMethod(
        this,
        [this, reason] {
            // Closing a session takes it off m_sessions at once (HubSession::onClosed): the
            // loop walks a copy, or it would skip every session after one it closed.
            const QList<HubSession*> sessions = m_sessions;
            for (HubSession* s : sessions)
                s->connection()->close(reason, wire::Bye{reason});
            if (m_server)
                m_server->close();
            // Let the Bye frames leave and the workers hang up (Connection::close lingers up
            // to 2 s for that; this waits at most 5 s, and at once when there are none):
            // deleting a socket before resets the connection, and the worker would lose its Bye
            // and spend its whole reconnect window knocking on a closed port. What is waited
            // for is every closed connection on this thread whose socket is still open, the
            // sessions' just closed among them (each is deleted once its socket has closed).
            // Then free everything on this thread (its sockets and timers belong to it) before
            // it ends.
            const auto lingering = [this] {
                int n = 0;
                for (const Connection* c : findChildren<Connection*>())
                    n += c->state() == Connection::State::Closed && !c->shutDown() ? 1 : 0;
                return n;
            };
            auto* wait = new QTimer; // not a child: the children go below, while it fires
            auto since = std::make_shared<QElapsedTimer>();
            since->start();
            connect(wait, &QTimer::timeout, this, [this, wait, since, lingering] {
                if (lingering() > 0 && since->elapsed() < kByeFlushMs)
                    return;
                wait->stop();
                wait->deleteLater(); // when the thread ends
                m_sessions.clear();
                const QObjectList kids = children();
                for (QObject* c : kids)
                    delete c;
                m_server = nullptr;
                moveToThread(nullptr);
                m_thread.quit();
            });
            wait->start(lingering() == 0 ? 0 : 10);
        },
        Qt::QueuedConnection);
    m_thread.wait(10000);
}

wire::WorkerSettings workerSettings(const RunConfig& cfg) {
    wire::WorkerSettings s;
    s.optimizer = cfg.optimizer;
    s.momentum = cfg.momentum;
    s.weightDecay = cfg.effectiveWeightDecay();
    s.precision = cfg.precision;
    s.loss = cfg.loss;
    s.beta = cfg.beta;
    return s;
}

} // namespace tandem
