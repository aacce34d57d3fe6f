#include "node/nodeservice.h"

#include "net/trustwatcher.h"
#include "node/workercommand.h"

#include "common/runenums.h"

#include "net/connection.h"
#include "net/server.h"
#include "net/truststore.h"

#include <QCoreApplication>
#include <QHostInfo>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcNode, "tandem.node")

namespace tandem {

namespace {

QString hostOf(const Connection* conn) {
    return conn->peerAddress().section(QLatin1Char(':'), 0, -2);
}

} // namespace

// Hands questions to whoever listens to pairingQuestion and keeps the answer for
// answerPairing. One question is open at a time; a newer one declines the older.
class NodeService::ForwardingPrompt : public PairingPrompt {
public:
    explicit ForwardingPrompt(NodeService* node)
        : m_node(node) {}
    void ask(const PairingQuestion& q, std::function<void(bool)> answer) override {
        answerWith(false);
        m_answer = std::move(answer);
        Q_EMIT m_node->pairingQuestion(q);
    }
    void answerWith(bool yes) {
        auto a = std::move(m_answer);
        m_answer = nullptr;
        if (a)
            a(yes);
    }

private:
    NodeService* m_node;
    std::function<void(bool)> m_answer;
};

NodeService::NodeService(NodeSettings settings, PairingPrompt* prompt, QObject* parent)
    : QObject(parent)
    , m_s(std::move(settings))
    , m_prompt(prompt)
    , m_worker(this) {
    qRegisterMetaType<tandem::PeerInfo>();
    qRegisterMetaType<QList<tandem::PeerInfo>>();
    qRegisterMetaType<tandem::PairingQuestion>();
    qRegisterMetaType<tandem::PairFailure>();
    if (!m_prompt) {
        m_forward = std::make_unique<ForwardingPrompt>(this);
        m_prompt = m_forward.get();
    }
    // The worker's log on stderr, its typed events on stdout.
    m_worker.setProcessChannelMode(QProcess::SeparateChannels);
    connect(&m_worker, &QProcess::readyReadStandardError, this, [this] {
        m_worker.setReadChannel(QProcess::StandardError);
        while (m_worker.canReadLine())
            Q_EMIT message(QString::fromUtf8(m_worker.readLine()).trimmed());
    });
    connect(&m_worker, &QProcess::readyReadStandardOutput, this, [this] {
        m_worker.setReadChannel(QProcess::StandardOutput);
        while (m_worker.canReadLine()) {
            const QJsonObject e = QJsonDocument::fromJson(m_worker.readLine()).object();
            if (!e.value(QStringLiteral("event")).toString().isEmpty())
                Q_EMIT lendingEvent(e);
        }
    });
    connect(&m_worker, &QProcess::finished, this, [this](int code, QProcess::ExitStatus) {
        Q_EMIT message(m_stopLending ? tr("This machine stopped lending to %1; the run goes on "
                                          "without it.")
                                           .arg(m_workerCoordinator)
                       : code == 0 ? tr("The run this machine worked for has ended.")
                                   : tr("The worker for %1 stopped with exit code %2.")
                                         .arg(m_workerCoordinator)
                                         .arg(code));
        m_stopLending = false;
        Q_EMIT workerChanged(false, m_workerCoordinator);
    });
}

NodeService::~NodeService() {
    if (m_worker.state() != QProcess::NotRunning) {
        m_worker.terminate();
        if (!m_worker.waitForFinished(5000))
            m_worker.kill();
    }
    if (m_forward)
        m_forward->answerWith(false);
}

QString NodeService::displayName() const {
    return m_s.name.isEmpty() ? QHostInfo::localHostName() : m_s.name;
}

quint16 NodeService::tcpPort() const {
    return m_server ? m_server->serverPort() : 0;
}

wire::Announcement NodeService::announcement() const {
    return Discovery::describeSelf(deviceId(), m_s.name, m_s.devices, tcpPort());
}

void NodeService::start() {
    auto id = Identity::loadOrCreate(m_s.home);
    if (!id) {
        Q_EMIT failed(id.error().message);
        return;
    }
    m_id = *id;
    m_server = std::make_unique<Server>(*m_id);
    if (auto st = m_server->listenOn(m_s.listenAddress, m_s.listenPort); !st) {
        // The fixed port may be taken (another Tandem, another user): any port still lets
        // peers that found us by announcement connect, since the announcement carries it.
        if (m_s.listenPort == 0 || !m_server->listenOn(m_s.listenAddress, 0)) {
            Q_EMIT failed(st.error().message);
            return;
        }
        Q_EMIT message(tr("Port %1 is in use; listening on port %2 instead.")
                           .arg(m_s.listenPort)
                           .arg(m_server->serverPort()));
    }
    connect(m_server.get(), &Server::connectionSecured, this, &NodeService::onSecured);
    m_discovery = std::make_unique<Discovery>(announcement());
    m_discovery->setPort(m_s.discoveryPort);
    if (m_s.announceTo)
        m_discovery->setTargets(*m_s.announceTo);
    connect(m_discovery.get(), &Discovery::peersChanged, this, &NodeService::rebuildPeers);
    if (auto st = m_discovery->start(); !st)
        Q_EMIT message(tr("Discovery is off: %1").arg(st.error().message));
    // Another process (the command line) may pair or unpair meanwhile.
    m_trust = std::make_unique<TrustWatcher>(m_s.home, this, 2000);
    connect(m_trust.get(), &TrustWatcher::changed, this, &NodeService::rebuildPeers);
    qCDebug(lcNode) << "node" << deviceId() << "listening on" << tcpPort();
    Q_EMIT started(deviceId(), tcpPort());
    rebuildPeers();
}

void NodeService::rebuildPeers() {
    QList<PeerInfo> list;
    const QList<Discovery::Peer> seen =
        m_discovery ? m_discovery->peers() : QList<Discovery::Peer>{};
    auto fill = [](PeerInfo& p, const Discovery::Peer& d) {
        p.name = d.announcement.displayName;
        p.address = d.address.toString();
        p.port = d.announcement.tcpPort;
        p.os = d.announcement.os;
        p.appVersion = d.announcement.appVersion;
        p.protocolVersion = d.announcement.protocolVersion;
        p.devices = d.announcement.devices;
        p.online = true;
    };
    for (const TrustStore::Entry& e : TrustStore(m_s.home).entries()) {
        PeerInfo p;
        p.deviceId = e.id;
        p.name = e.name;
        p.paired = true;
        for (const Discovery::Peer& d : seen)
            if (d.announcement.deviceId == e.id)
                fill(p, d);
        list << p;
    }
    for (const Discovery::Peer& d : seen) {
        if (d.announcement.deviceId == deviceId())
            continue;
        const bool known = std::any_of(list.cbegin(), list.cend(), [&](const PeerInfo& p) {
            return p.deviceId == d.announcement.deviceId;
        });
        if (known)
            continue;
        PeerInfo p;
        p.deviceId = d.announcement.deviceId;
        fill(p, d);
        list << p;
    }
    auto same = [](const QList<PeerInfo>& a, const QList<PeerInfo>& b) {
        if (a.size() != b.size())
            return false;
        for (qsizetype i = 0; i < a.size(); ++i)
            if (a[i].deviceId != b[i].deviceId || a[i].name != b[i].name ||
                a[i].address != b[i].address || a[i].paired != b[i].paired ||
                a[i].online != b[i].online || a[i].devices.size() != b[i].devices.size() ||
                a[i].protocolVersion != b[i].protocolVersion || a[i].appVersion != b[i].appVersion)
                return false;
        return true;
    };
    if (same(list, m_peerList))
        return;
    m_peerList = list;
    Q_EMIT peersChanged(m_peerList);
}

void NodeService::recordFailure(const QString& from) {
    Attempts& at = m_attempts[from];
    if (!at.since.isValid())
        at.since.start();
    ++at.failures;
}

void NodeService::onSecured(Connection* conn) {
    conn->setParent(this);
    connect(conn, &Connection::closed, conn, [conn] { conn->deleteWhenFlushed(); });
    const QString from = hostOf(conn);
    Attempts& a = m_attempts[from];
    if (a.since.isValid() && a.since.elapsed() > 600000)
        a = Attempts{};
    if (a.failures >= 3 && a.since.elapsed() < 60000) {
        conn->close(QStringLiteral("rate limited"),
                    wire::Reject{wire::RejectCode::Busy,
                                 QStringLiteral("too many failed pairing attempts from this "
                                                "address; wait a minute and try again")});
        return;
    }
    // The first message says what the peer wants: to pair, or (a paired coordinator) to have
    // this node join its run.
    auto first = std::make_shared<QMetaObject::Connection>();
    *first = connect(
        conn, &Connection::received, this, [this, conn, from, first](const wire::Message& m) {
            QObject::disconnect(*first);
            if (std::holds_alternative<wire::Unpaired>(m)) {
                onUnpaired(conn->peerId());
                conn->close(QStringLiteral("unpaired"));
                return;
            }
            if (const auto* h = std::get_if<wire::Hello>(&m);
                h && h->role == nameOf(PeerRole::Coordinator)) {
                if (!TrustStore(m_s.home).contains(conn->peerId())) {
                    conn->close(
                        QStringLiteral("not paired"),
                        wire::Reject{wire::RejectCode::Untrusted,
                                     QStringLiteral("this machine is not paired with device "
                                                    "%1; pair first")
                                         .arg(conn->peerId())});
                    return;
                }
                connect(conn, &Connection::received, this, [this, conn](const wire::Message& m2) {
                    if (const auto* inv = std::get_if<wire::Invite>(&m2))
                        startInvitedWorker(conn, inv->port);
                });
                return;
            }
            if (!std::holds_alternative<wire::PairRequest>(m)) {
                conn->close(QStringLiteral("unexpected"),
                            wire::Reject{wire::RejectCode::Protocol,
                                         QStringLiteral("this node takes pairing requests and "
                                                        "invitations from paired coordinators")});
                return;
            }
            auto* session = new PairingSession(PairingSession::Role::Responder, conn, deviceId(),
                                               displayName(), m_s.home, m_prompt, conn);
            connect(session, &PairingSession::finished, this,
                    [this, conn, from, session](bool paired, const QString& msg) {
                        if (!paired)
                            recordFailure(from);
                        Q_EMIT pairingFinished(paired, session->failure(), msg);
                        rebuildPeers();
                        QTimer::singleShot(
                            500, conn, [conn] { conn->close(QStringLiteral("pairing finished")); });
                    });
            session->start();
            session->handle(m);
        });
}

void NodeService::startInvitedWorker(Connection* conn, quint16 port) {
    QString refusal;
    if (!m_s.acceptWork)
        refusal = QStringLiteral("this machine does not accept work right now (its settings say "
                                 "so)");
    else if (m_busy)
        refusal = QStringLiteral("this machine is training a run of its own");
    else if (m_worker.state() != QProcess::NotRunning)
        refusal = QStringLiteral("this machine is already training in a run");
    if (!refusal.isEmpty()) {
        conn->close(QStringLiteral("busy"), wire::Reject{wire::RejectCode::Busy, refusal});
        return;
    }
    const QString host = hostOf(conn);
    m_workerCoordinator = conn->peerId().left(16);
    for (const PeerInfo& p : m_peerList)
        if (p.deviceId == conn->peerId() && !p.name.isEmpty())
            m_workerCoordinator = p.name;
    Q_EMIT message(tr("Joining the run of %1 (device %2)")
                       .arg(m_workerCoordinator, shortDeviceIdText(conn->peerId())));
    WorkerCommand worker;
    worker.host = host;
    worker.port = port;
    worker.home = m_s.home;
    worker.cacheDir = m_s.cacheDir;
    worker.modelsDir = m_s.modelsDir;
    worker.name = displayName();
    worker.devices = m_s.workerDevices;
    worker.events = QStringLiteral("-");
    m_worker.start(m_s.workerProgram.isEmpty() ? QCoreApplication::applicationFilePath()
                                               : m_s.workerProgram,
                   worker.arguments());
    Q_EMIT workerChanged(true, m_workerCoordinator);
    conn->send(wire::Bye{QStringLiteral("joining")});
    QTimer::singleShot(500, conn, [conn] { conn->close(QStringLiteral("invitation accepted")); });
}

void NodeService::pairWith(const QString& host, quint16 port) {
    if (!m_id) {
        Q_EMIT pairingFinished(false, PairFailure::ConnectionLost,
                               QStringLiteral("this node has not started"));
        return;
    }
    cancelPairing();
    Connection* conn = Connection::connectTo(host, port, *m_id, this);
    auto* session = new PairingSession(PairingSession::Role::Initiator, conn, deviceId(),
                                       displayName(), m_s.home, m_prompt, conn);
    m_outgoing = session;
    m_outgoingConn = conn;
    connect(conn, &Connection::secured, session, [session] { session->start(); });
    // The session reports a connection that never came up, or broke, as ConnectionLost.
    connect(conn, &Connection::closed, conn, [conn] { conn->deleteWhenFlushed(); });
    connect(session, &PairingSession::finished, this,
            [this, conn, session](bool paired, const QString& msg) {
                Q_EMIT pairingFinished(paired, session->failure(), msg);
                rebuildPeers();
                QTimer::singleShot(300, conn,
                                   [conn] { conn->close(QStringLiteral("pairing finished")); });
            });
}

void NodeService::answerPairing(bool sameCode) {
    if (m_forward)
        m_forward->answerWith(sameCode);
}

void NodeService::cancelPairing() {
    if (m_forward)
        m_forward->answerWith(false);
    if (m_outgoingConn && m_outgoing && m_outgoing->state() == PairState::Start)
        m_outgoingConn->close(QStringLiteral("cancelled"));
}

void NodeService::addAddress(const QString& host) {
    if (!m_discovery)
        return;
    QString h = host.trimmed();
    quint16 port = m_s.discoveryPort;
    if (QHostAddress(h).isNull()) {
        if (auto hp = parseHostPort(h)) {
            h = hp->first;
            port = hp->second;
        }
    }
    QHostAddress addr(h);
    if (addr.isNull()) {
        // A name: look it up off this thread's back, then ask.
        QHostInfo::lookupHost(h, this, [this, h, port](const QHostInfo& info) {
            if (info.addresses().isEmpty()) {
                Q_EMIT message(tr("Cannot find a machine called \"%1\".").arg(h));
                return;
            }
            m_discovery->addAddress(info.addresses().first(), port);
        });
        return;
    }
    m_discovery->addAddress(addr, port);
}

void NodeService::unpair(const QString& id) {
    // Told over a secured connection, while the two still trust each other; it is forgotten
    // here at once, whether the other answers or not.
    for (const PeerInfo& p : m_peerList)
        if (p.deviceId == id && p.online && !p.address.isEmpty() && p.port != 0 && m_id) {
            Connection* c = Connection::connectTo(p.address, p.port, *m_id, this);
            connect(c, &Connection::secured, c, [c, id](const QString& peerId) {
                if (peerId == id)
                    c->close(QStringLiteral("unpaired"), wire::Unpaired{});
                else
                    c->close(QStringLiteral("another device answered"));
            });
            connect(c, &Connection::closed, c, [c] { c->deleteWhenFlushed(); });
        }
    auto r = TrustStore(m_s.home).remove(id);
    if (!r)
        Q_EMIT message(r.error().message);
    rebuildPeers();
}

void NodeService::onUnpaired(const QString& id) {
    TrustStore trust(m_s.home);
    if (id.isEmpty() || !trust.contains(id))
        return; // only a paired device can end its pairing
    QString name = shortDeviceIdText(id);
    for (const PeerInfo& p : m_peerList)
        if (p.deviceId == id && !p.name.isEmpty())
            name = p.name;
    if (auto r = trust.remove(id); !r) {
        Q_EMIT message(r.error().message);
        return;
    }
    Q_EMIT message(tr("%1 unpaired this machine; the two no longer train together until they "
                      "are paired again.")
                       .arg(name));
    Q_EMIT unpairedBy(name, id);
    rebuildPeers();
}

void NodeService::setAcceptWork(bool accept) {
    m_s.acceptWork = accept;
}

void NodeService::setBusy(bool busy) {
    m_busy = busy;
}

void NodeService::stopLending() {
    if (m_worker.state() == QProcess::NotRunning)
        return;
    m_stopLending = true;
    m_worker.terminate();
    // A worker busy in a long step answers the request when it ends; one that cannot is
    // killed.
    QTimer::singleShot(10000, &m_worker, [this] {
        if (m_worker.state() != QProcess::NotRunning)
            m_worker.kill();
    });
}

void NodeService::setName(const QString& name) {
    m_s.name = name;
    if (m_discovery)
        m_discovery->setAnnouncement(announcement());
}

} // namespace tandem
