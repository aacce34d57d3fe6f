#pragma once

#include "common/expected.h"
#include "common/ports.h"
#include "wire/messages.h"

#include <QDateTime>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QTimer>
#include <QUdpSocket>

namespace tandem {

// Finds other Tandem nodes on the LAN. Each node announces itself by UDP, at once (as a query
// that running nodes answer straight away) and then every few seconds, to the IPv4 broadcast
// address and to an IPv4 and an IPv6 multicast group, all on one fixed port; it lists the
// announcements it hears and forgets peers that fall silent. A peer heard for the first time is
// answered directly, so that two nodes find each other as soon as either hears the other.
// Announcements are hints: a peer's identity is what its TLS certificate proves later, never
// what it announces. Where a network blocks broadcast, a peer can be added by address: a
// unicast query makes it announce itself back.
class Discovery : public QObject {
    Q_OBJECT

public:
    static constexpr quint16 kDefaultPort = kDiscoveryPort; // documented in the user guide
    static QHostAddress multicastV4() { return QHostAddress(QStringLiteral("239.255.47.30")); }
    static QHostAddress multicastV6() { return QHostAddress(QStringLiteral("ff02::7461:6e64")); }

    struct Peer {
        wire::Announcement announcement;
        QHostAddress address;
        QDateTime lastSeen;
    };

    explicit Discovery(wire::Announcement self, QObject* parent = nullptr);

    // What a node says about itself: the one way to build an announcement, used by a serving
    // node and by the commands that only listen. An empty name means the host name; port 0
    // means the node takes no connections.
    static wire::Announcement describeSelf(const QString& deviceId, const QString& name,
                                           const QList<DeviceInfo>& devices, quint16 tcpPort = 0);

    void setPort(quint16 port) { m_port = port; }
    // Where announcements go; by default the IPv4 broadcast address and both multicast groups.
    void setTargets(const QList<QHostAddress>& targets) { m_targets = targets; }
    void setInterval(int ms) { m_announce.setInterval(ms); }
    void setExpiry(int ms) { m_expiryMs = ms; }
    // Announcements with query set ask every listener to answer at once (used by a node that
    // wants a list now rather than within one interval).
    void setQuery(bool query) { m_self.query = query; }
    // What this node says about itself from now on (a new name, say); announced at once.
    void setAnnouncement(const wire::Announcement& self);

    Status start();
    void stop();
    // Asks the node at host:port to announce itself to us (for networks without broadcast).
    void addAddress(const QHostAddress& host, quint16 port = kDefaultPort);

    QList<Peer> peers() const { return m_peers; }
    quint16 port() const { return m_port; }

Q_SIGNALS:
    void peersChanged();

private:
    void announce();
    void sendTo(const QByteArray& datagram, const QHostAddress& to, quint16 port);
    void onDatagrams();
    void expire();

    wire::Announcement m_self;
    quint16 m_port = kDefaultPort;
    QList<QHostAddress> m_targets;
    QList<std::pair<QHostAddress, quint16>> m_unicast;
    QUdpSocket m_v4;
    QUdpSocket m_v6;
    QTimer m_announce;
    QTimer m_expire;
    int m_expiryMs = 12000;
    QList<Peer> m_peers;
};

} // namespace tandem
