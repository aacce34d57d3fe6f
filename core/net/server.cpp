#include "server.h"

#include <QLoggingCategory>

namespace tandem {

Server::Server(const Identity& identity, QObject* parent)
    : QTcpServer(parent)
    , m_tls(tlsConfiguration(identity)) {}

void Server::incomingConnection(qintptr descriptor) {
    auto* s = new QSslSocket;
    if (!s->setSocketDescriptor(descriptor)) {
        delete s;
        return;
    }
    if (int(m_handshaking.size()) >= m_maxUnauthenticated) {
        qCDebug(lcNet) << "dropping a connection: too many unauthenticated ones";
        s->abort();
        delete s;
        return;
    }
    s->setSslConfiguration(m_tls);
    auto* c = new Connection(s, this);
    c->setHandshakeTimeout(m_handshakeMs);
    m_handshaking.insert(c);
    connect(c, &Connection::secured, this, [this, c] {
        m_handshaking.remove(c);
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
