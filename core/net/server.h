#pragma once

#include "net/connection.h"

#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QTcpServer>
#include <QTimer>

namespace tandem {

// The TLS listener. Plain TCP is never accepted: every connection starts a TLS 1.3 server
// handshake at once, which must finish within the handshake timeout and present a client
// certificate before a single application byte is read.
//
// Connections still in their handshake are what a stranger can hold open, so they are kept
// few and short-lived, in a way that leaves paired machines a path in during a flood:
//  - at most `maxPerAddress` from one address (a flood from one machine fills only its own
//    slots);
//  - a connection that has sent nothing after `silentMs` is closed (a real client sends its
//    ClientHello at once: the server answering it is how it shows);
//  - when all `maxUnauthenticated` slots are taken, a silent one (else any) makes room for the
//    newcomer: from the address refused most often, then the one holding most slots, then the
//    oldest. An address that has never been refused, as a paired machine's usually is, keeps
//    its slot while a flood churns through the others, even when its connection arrives in
//    the same burst of accepts as theirs; a newcomer from an address refused more often than
//    any slot holder is refused instead. Holding slots costs an attacker more than it costs us.
// What is refused is logged at most every 10 s, with counts.
//
// It is a QTcpServer that makes its own QSslSocket per connection (what QSslServer does
// inside) so that each socket's lifetime belongs to one Connection from the first byte.
class Server : public QTcpServer {
    Q_OBJECT

public:
    Server(const Identity& identity, QObject* parent = nullptr);

    Status listenOn(const QHostAddress& address, quint16 port);
    void setMaxUnauthenticated(int n) { m_maxUnauthenticated = n; }
    void setMaxPerAddress(int n) { m_maxPerAddress = n; }
    void setHandshakeTimeout(int ms) { m_handshakeMs = ms; }
    void setSilentTimeout(int ms) { m_silentMs = ms; }
    int unauthenticated() const { return int(m_handshaking.size()); }
    // Connections refused or closed before their handshake finished, since the start.
    qint64 refusedTotal() const { return m_refusedTotal; }

Q_SIGNALS:
    // A connection whose TLS handshake finished with a client certificate. The receiver takes
    // ownership (reparent it) and decides, by peerId(), whether to talk to it.
    void connectionSecured(tandem::Connection* connection);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    struct Pending {
        QString address;
        QElapsedTimer since;
        bool spoke = false; // the server has answered a ClientHello
    };
    int pendingFrom(const QString& address) const;
    // The pending connection to close for a newcomer, or nullptr if none.
    Connection* evictionCandidate() const;
    // How strongly an address looks like a flood's: its refusals, then its pending connections.
    std::pair<qint64, int> suspicion(const QString& address) const;
    void closeSilent();
    void refused(const QString& address);

    QSslConfiguration m_tls;
    QHash<Connection*, Pending> m_handshaking;
    int m_maxUnauthenticated = 64;
    int m_maxPerAddress = 8;
    int m_handshakeMs = 10000;
    int m_silentMs = 3000;
    QTimer m_sweep;
    // Rate-limited report of what was refused.
    QElapsedTimer m_lastReport;
    qint64 m_refusedSinceReport = 0;
    qint64 m_refusedTotal = 0;
    QHash<QString, qint64> m_refusedBy;
    // Refusals per address since the start (bounded; halved when it grows too large), cleared
    // for an address whose connection completes its handshake.
    QHash<QString, qint64> m_strikes;
};

// Parses "HOST:PORT" ("0.0.0.0:7300", "[::1]:7300", "localhost:0").
Expected<std::pair<QString, quint16>> parseHostPort(const QString& s);

} // namespace tandem
