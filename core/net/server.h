#pragma once

#include "connection.h"

#include <QHostAddress>
#include <QSet>
#include <QTcpServer>

namespace tandem {

// The TLS listener. Plain TCP is never accepted: every connection starts a TLS 1.3 server
// handshake at once, which must finish within the handshake timeout and present a client
// certificate before a single application byte is read. At most `maxUnauthenticated`
// connections may be in their handshake at once; more are dropped on arrival, so a flood of
// idle sockets cannot starve the run.
//
// It is a QTcpServer that makes its own QSslSocket per connection (what QSslServer does
// inside) so that each socket's lifetime belongs to one Connection from the first byte.
class Server : public QTcpServer {
    Q_OBJECT

public:
    Server(const Identity& identity, QObject* parent = nullptr);

    Status listenOn(const QHostAddress& address, quint16 port);
    void setMaxUnauthenticated(int n) { m_maxUnauthenticated = n; }
    void setHandshakeTimeout(int ms) { m_handshakeMs = ms; }
    int unauthenticated() const { return int(m_handshaking.size()); }

Q_SIGNALS:
    // A connection whose TLS handshake finished with a client certificate. The receiver takes
    // ownership (reparent it) and decides, by peerId(), whether to talk to it.
    void connectionSecured(tandem::Connection* connection);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    QSslConfiguration m_tls;
    QSet<Connection*> m_handshaking;
    int m_maxUnauthenticated = 16;
    int m_handshakeMs = 10000;
};

// Parses "HOST:PORT" ("0.0.0.0:7300", "[::1]:7300", "localhost:0").
Expected<std::pair<QString, quint16>> parseHostPort(const QString& s);

} // namespace tandem
