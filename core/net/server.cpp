#include "net/server.h"

#include <QLoggingCategory>

#include <tuple>

namespace tandem {

Server::Server(const Identity& identity, QObject* parent)
    : QTcpServer(parent)
    , m_tls(tlsConfiguration(identity)) {
    m_sweep.setInterval(500);
    connect(&m_sweep, &QTimer::timeout, this, &Server::closeSilent);
    m_sweep.start();
}

int Server::pendingFrom(const QString& address) const {
    int n = 0;
    for (const Pending& p : m_handshaking)
        n += p.address == address;
    return n;
}

std::pair<qint64, int> Server::suspicion(const QString& address) const {
    return {m_strikes.value(address), pendingFrom(address)};
}

Connection* Server::evictionCandidate() const {
    Connection* chosen = nullptr;
    std::tuple<qint64, int, qint64> worst{-1, -1, -1};
    // Silent ones first: they have not even started a handshake.
    for (bool silentOnly : {true, false}) {
        for (auto it = m_handshaking.cbegin(); it != m_handshaking.cend(); ++it) {
            if (silentOnly && it->spoke)
                continue;
            const auto [strikes, held] = suspicion(it->address);
            const std::tuple<qint64, int, qint64> rank{strikes, held, it->since.elapsed()};
            if (rank > worst) {
                chosen = it.key();
                worst = rank;
            }
        }
        if (chosen)
            return chosen;
    }
    return nullptr;
}

void Server::closeSilent() {
    QList<Connection*> silent;
    for (auto it = m_handshaking.cbegin(); it != m_handshaking.cend(); ++it)
        if (!it->spoke && it->since.elapsed() > m_silentMs)
            silent << it.key();
    for (Connection* c : std::as_const(silent)) {
        refused(m_handshaking.value(c).address);
        c->close(QStringLiteral("the client sent nothing for %1 s").arg(m_silentMs / 1000.0));
    }
}

void Server::refused(const QString& address) {
    ++m_refusedTotal;
    ++m_refusedSinceReport;
    ++m_refusedBy[address];
    if (++m_strikes[address] == 1 && m_strikes.size() > 4096) {
        // Many addresses: keep those refused repeatedly, forget the rest.
        for (auto it = m_strikes.begin(); it != m_strikes.end();)
            it = (it.value() /= 2) == 0 ? m_strikes.erase(it) : std::next(it);
    }
    if (m_lastReport.isValid() && m_lastReport.elapsed() < 10000)
        return;
    // The addresses that were refused most, so the log says where a flood comes from.
    QList<std::pair<qint64, QString>> top;
    for (auto it = m_refusedBy.cbegin(); it != m_refusedBy.cend(); ++it)
        top.append({it.value(), it.key()});
    std::sort(top.begin(), top.end(), std::greater<>());
    QStringList from;
    for (int i = 0; i < std::min<qsizetype>(3, top.size()); ++i)
        from << QStringLiteral("%1 (%2)").arg(top[i].second).arg(top[i].first);
    qCWarning(lcNet).noquote()
        << QStringLiteral("refusing connections that do not complete a TLS handshake: %1 in the "
                          "last %2 s, from %3; paired machines still get through")
               .arg(m_refusedSinceReport)
               .arg(m_lastReport.isValid() ? m_lastReport.elapsed() / 1000 : 0)
               .arg(from.join(QStringLiteral(", ")));
    m_lastReport.start();
    m_refusedSinceReport = 0;
    m_refusedBy.clear();
}

void Server::incomingConnection(qintptr descriptor) {
    auto* s = new QSslSocket;
    if (!s->setSocketDescriptor(descriptor)) {
        delete s;
        return;
    }
    QHostAddress peer = s->peerAddress();
    if (const auto v4 = peer.toIPv4Address();
        peer.protocol() == QAbstractSocket::IPv6Protocol &&
        peer.isEqual(QHostAddress(v4), QHostAddress::ConvertV4MappedToIPv4))
        peer = QHostAddress(v4);
    const QString address = peer.toString();
    if (pendingFrom(address) >= m_maxPerAddress) {
        refused(address);
        s->abort();
        delete s;
        return;
    }
    if (int(m_handshaking.size()) >= m_maxUnauthenticated) {
        if (Connection* victim = evictionCandidate()) {
            const QString from = m_handshaking.value(victim).address;
            if (m_strikes.value(address) > m_strikes.value(from)) {
                refused(address);
                s->abort();
                delete s;
                return;
            }
            refused(from);
            victim->close(QStringLiteral("making room: too many connections waiting for their "
                                         "handshake"));
        }
    }
    s->setSslConfiguration(m_tls);
    auto* c = new Connection(s, this);
    c->setHandshakeTimeout(m_handshakeMs);
    Pending p{address, {}, false};
    p.since.start();
    m_handshaking.insert(c, p);
    // The server writes only in answer to a ClientHello: that is the sign of a real client.
    connect(s, &QSslSocket::encryptedBytesWritten, this, [this, c] {
        if (auto it = m_handshaking.find(c); it != m_handshaking.end())
            it->spoke = true;
    });
    connect(c, &Connection::secured, this, [this, c] {
        m_strikes.remove(m_handshaking.take(c).address);
        Q_EMIT connectionSecured(c);
    });
    connect(c, &Connection::closed, this, [this, c] {
        // Failed before it was handed over: junk bytes, no certificate, a silent client.
        if (m_handshaking.remove(c))
            c->deleteWhenFlushed();
    });
    s->startServerEncryption();
}

Status Server::listenOn(const QHostAddress& address, quint16 port) {
    if (!listen(address, port))
        return makeError(ErrorCode::Io, QStringLiteral("cannot listen on %1:%2: %3")
                                            .arg(address.toString())
                                            .arg(port)
                                            .arg(errorString()));
    return success();
}

Expected<std::pair<QString, quint16>> parseHostPort(const QString& s) {
    const qsizetype colon = s.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0)
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("\"%1\" is not HOST:PORT (for example 0.0.0.0:7300)").arg(s));
    QString host = s.left(colon);
    if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
        host = host.mid(1, host.size() - 2);
    bool ok = false;
    const uint port = s.mid(colon + 1).toUInt(&ok);
    if (!ok || port > 65535)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("\"%1\" has no valid port").arg(s));
    return std::make_pair(host, quint16(port));
}

} // namespace tandem
