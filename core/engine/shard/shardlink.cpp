#include "engine/shard/shardlink.h"

#include "net/server.h"

#include <QRandomGenerator>

namespace tandem {

namespace {

// Compares in time that does not depend on where the two differ.
bool sameToken(const QByteArray& a, const QByteArray& b) {
    if (a.size() != b.size() || a.isEmpty())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

} // namespace

const ShardMember* ShardIntroduction::find(const QString& deviceId) const {
    for (const ShardMember& m : members)
        if (m.deviceId == deviceId)
            return &m;
    return nullptr;
}

QByteArray ShardIntroduction::newToken() {
    QByteArray t(kShardTokenBytes, Qt::Uninitialized);
    QRandomGenerator::system()->generate(reinterpret_cast<quint32*>(t.data()),
                                         reinterpret_cast<quint32*>(t.data() + t.size()));
    return t;
}

ShardListener::ShardListener(const Identity& identity, QObject* parent)
    : QObject(parent)
    , m_server(new Server(identity, this)) {
    connect(m_server, &Server::connectionSecured, this, &ShardListener::onSecured);
}

ShardListener::~ShardListener() = default;

Status ShardListener::listen(const QHostAddress& address, quint16 port) {
    return m_server->listenOn(address, port);
}

quint16 ShardListener::port() const {
    return m_server->serverPort();
}

void ShardListener::introduce(const ShardIntroduction& introduction) {
    m_intro = introduction;
    const QList<Connection*> joining = m_joining.keys();
    for (Connection* c : joining)
        if (!m_intro.find(c->peerId()))
            refuse(c, QStringLiteral("device %1 is no longer a member of run %2")
                          .arg(c->peerId(), m_intro.runId));
}

void ShardListener::refuse(Connection* c, const QString& why) {
    if (QTimer* t = m_joining.take(c))
        t->deleteLater();
    c->disconnect(this);
    c->close(why, wire::Reject{wire::RejectCode::Untrusted, why});
    c->deleteWhenFlushed();
    Q_EMIT refused(QStringLiteral("refused a shard link from %1: %2").arg(c->peerAddress(), why));
}

void ShardListener::onSecured(Connection* c) {
    c->setParent(this);
    if (m_intro.runId.isEmpty() || !m_intro.find(c->peerId()))
        return refuse(c, m_intro.runId.isEmpty()
                             ? QStringLiteral("this machine is in no sharded run")
                             : QStringLiteral("device %1 is not a member of run %2")
                                   .arg(c->peerId(), m_intro.runId));
    auto* timer = new QTimer(this);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, c] {
        refuse(
            c,
            QStringLiteral("it did not say which run it joins within %1 s").arg(m_joinMs / 1000.0));
    });
    timer->start(m_joinMs);
    m_joining.insert(c, timer);
    connect(c, &Connection::received, this, [this, c](const wire::Message& m) { onJoin(c, m); });
    connect(c, &Connection::closed, this, [this, c] {
        if (QTimer* t = m_joining.take(c))
            t->deleteLater();
        c->disconnect(this);
        c->deleteWhenFlushed();
    });
}

void ShardListener::onJoin(Connection* c, const wire::Message& m) {
    if (!m_joining.contains(c))
        return;
    const auto* join = std::get_if<wire::ShardJoin>(&m);
    if (!join)
        return refuse(c,
                      QStringLiteral("it sent %1 before joining a run").arg(wire::messageName(m)));
    if (join->runId != m_intro.runId || !sameToken(join->token, m_intro.token))
        return refuse(c, QStringLiteral("device %1 does not hold run %2's token")
                             .arg(c->peerId(), m_intro.runId));
    m_joining.take(c)->deleteLater();
    c->disconnect(this);
    c->send(wire::ShardWelcome{});
    Q_EMIT linked(c, c->peerId());
}

ShardDial::ShardDial(const Identity& identity, const ShardIntroduction& introduction,
                     const ShardMember& to, QObject* parent)
    : QObject(parent)
    , m_to(to) {
    m_timer.setSingleShot(true);
    m_timer.setInterval(10000);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        fail(QStringLiteral("no answer from %1:%2 within %3 s")
                 .arg(m_to.host)
                 .arg(m_to.port)
                 .arg(m_timer.interval() / 1000.0));
    });
    m_conn = Connection::connectTo(to.host, to.port, identity, this);
    const wire::ShardJoin join{introduction.runId, introduction.token};
    connect(m_conn, &Connection::secured, this, [this, join](const QString& peerId) {
        if (peerId != m_to.deviceId)
            return fail(QStringLiteral("the machine at %1:%2 is device %3, not %4, which the "
                                       "coordinator introduced")
                            .arg(m_to.host)
                            .arg(m_to.port)
                            .arg(peerId, m_to.deviceId));
        if (m_probe) {
            end(QStringLiteral("a probe of the link"));
            Q_EMIT reached();
            return;
        }
        m_conn->send(join);
    });
    connect(m_conn, &Connection::received, this, [this](const wire::Message& m) {
        if (std::holds_alternative<wire::ShardWelcome>(m)) {
            m_done = true;
            m_timer.stop();
            Connection* c = m_conn;
            c->disconnect(this);
            Q_EMIT linked(c);
        } else if (const auto* r = std::get_if<wire::Reject>(&m)) {
            fail(QStringLiteral("device %1 refused the link: %2").arg(m_to.deviceId, r->message));
        } else {
            fail(QStringLiteral("device %1 sent %2 before admitting the link")
                     .arg(m_to.deviceId, wire::messageName(m)));
        }
    });
    connect(m_conn, &Connection::closed, this, [this](const QString& reason) {
        fail(QStringLiteral("the link to %1:%2 closed: %3")
                 .arg(m_to.host)
                 .arg(m_to.port)
                 .arg(reason));
    });
    m_timer.start();
}

void ShardDial::end(const QString& why) {
    m_done = true;
    m_timer.stop();
    if (m_conn) {
        m_conn->disconnect(this);
        m_conn->close(why);
        m_conn->deleteWhenFlushed();
    }
}

void ShardDial::fail(const QString& why) {
    if (m_done)
        return;
    end(why);
    Q_EMIT failed(why);
}

} // namespace tandem
