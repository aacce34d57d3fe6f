#include "net/discovery.h"

#include "common/version.h"

#include <QHostInfo>
#include <QLoggingCategory>
#include <QNetworkDatagram>
#include <QNetworkInterface>
#include <QSysInfo>

Q_LOGGING_CATEGORY(lcDiscovery, "tandem.discovery")

namespace tandem {

wire::Announcement Discovery::describeSelf(const QString& deviceId, const QString& name,
                                           const QList<DeviceInfo>& devices, quint16 tcpPort) {
    wire::Announcement a;
    a.deviceId = deviceId;
    a.displayName = name.isEmpty() ? QHostInfo::localHostName() : name;
    a.os = QSysInfo::prettyProductName();
    a.appVersion = appVersion();
    a.devices = devices;
    a.tcpPort = tcpPort;
    return a;
}

Discovery::Discovery(wire::Announcement self, QObject* parent)
    : QObject(parent)
    , m_self(std::move(self))
    , m_targets{QHostAddress(QHostAddress::Broadcast), multicastV4(), multicastV6()} {
    m_announce.setInterval(3000);
    connect(&m_announce, &QTimer::timeout, this, &Discovery::announce);
    m_expire.setInterval(1000);
    connect(&m_expire, &QTimer::timeout, this, &Discovery::expire);
    connect(&m_v4, &QUdpSocket::readyRead, this, &Discovery::onDatagrams);
    connect(&m_v6, &QUdpSocket::readyRead, this, &Discovery::onDatagrams);
}

Status Discovery::start() {
    // Several nodes on one machine (and tests) share the port: every one of them must hear
    // broadcasts and multicasts.
    const auto mode = QUdpSocket::ShareAddress | QUdpSocket::ReuseAddressHint;
    if (!m_v4.bind(QHostAddress::AnyIPv4, m_port, mode))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot listen for announcements on UDP port %1: %2")
                             .arg(m_port)
                             .arg(m_v4.errorString()));
    const bool v6 = m_v6.bind(QHostAddress::AnyIPv6, m_port, mode); // optional: IPv4-only hosts
    // Groups are joined only when announcements go to them (joining sends IGMP/MLD reports).
    const bool joinV4 = m_targets.contains(multicastV4()),
               joinV6 = v6 && m_targets.contains(multicastV6());
    for (const QNetworkInterface& nif : QNetworkInterface::allInterfaces()) {
        const auto f = nif.flags();
        if (!(f & QNetworkInterface::IsUp) || !(f & QNetworkInterface::CanMulticast))
            continue;
        if (joinV4)
            m_v4.joinMulticastGroup(multicastV4(), nif);
        if (joinV6)
            m_v6.joinMulticastGroup(multicastV6(), nif);
    }
    // The first announcement is a query: nodes already running answer it at once. Without
    // that, a node that started a moment earlier is heard only at its next announcement, and
    // not at all if it stops first (a `tandem peers --expect=1` that has found what it wanted).
    const bool query = m_self.query;
    m_self.query = true;
    announce();
    m_self.query = query;
    m_announce.start();
    m_expire.start();
    return success();
}

void Discovery::stop() {
    m_announce.stop();
    m_expire.stop();
    m_v4.close();
    m_v6.close();
}

void Discovery::setAnnouncement(const wire::Announcement& self) {
    const bool query = m_self.query;
    m_self = self;
    m_self.query = query;
    if (m_announce.isActive())
        announce();
}

void Discovery::addAddress(const QHostAddress& host, quint16 port) {
    m_unicast << std::make_pair(host, port);
    wire::Announcement q = m_self;
    q.query = true;
    sendTo(wire::encodeAnnouncement(q), host, port);
}

void Discovery::sendTo(const QByteArray& datagram, const QHostAddress& to, quint16 port) {
    QUdpSocket& s = to.protocol() == QAbstractSocket::IPv6Protocol ? m_v6 : m_v4;
    if (s.state() != QAbstractSocket::BoundState)
        return;
    if (s.writeDatagram(datagram, to, port) < 0)
        qCDebug(lcDiscovery) << "announcement to" << to << "failed:" << s.errorString();
}

void Discovery::announce() {
    const QByteArray datagram = wire::encodeAnnouncement(m_self);
    for (const QHostAddress& t : std::as_const(m_targets))
        sendTo(datagram, t, m_port);
    for (const auto& [host, port] : std::as_const(m_unicast))
        sendTo(datagram, host, port);
}

void Discovery::onDatagrams() {
    auto* socket = qobject_cast<QUdpSocket*>(sender());
    bool changed = false;
    while (socket && socket->hasPendingDatagrams()) {
        // Oversized datagrams are cut at the cap and then fail to parse.
        const QNetworkDatagram d = socket->receiveDatagram(wire::kMaxAnnouncementBytes + 1);
        auto a = wire::decodeAnnouncement(d.data());
        if (!a || a->deviceId == m_self.deviceId || a->deviceId.isEmpty())
            continue;
        QHostAddress from = d.senderAddress();
        bool ok = false;
        const QHostAddress v4(from.toIPv4Address(&ok));
        if (ok)
            from = v4; // IPv4-mapped IPv6 addresses read better as plain IPv4
        auto it = std::find_if(m_peers.begin(), m_peers.end(), [&](const Peer& p) {
            return p.announcement.deviceId == a->deviceId;
        });
        // A query is answered, and so is a peer heard for the first time: its own first
        // announcement may never have reached us (lost, or sent while its link's IPv6 address
        // was still tentative), and it may stop listening soon, as `tandem peers --expect`
        // does. Two new peers settle in at most three datagrams.
        if (a->query || it == m_peers.end()) {
            wire::Announcement reply = m_self;
            reply.query = false;
            sendTo(wire::encodeAnnouncement(reply), from, quint16(d.senderPort()));
        }
        if (it == m_peers.end()) {
            m_peers << Peer{*a, from, QDateTime::currentDateTimeUtc()};
            changed = true;
        } else {
            // A peer heard over both IPv4 and IPv6 keeps its IPv4 address once it has one:
            // link-local IPv6 addresses need an interface scope not every program accepts.
            if (it->address.protocol() == QAbstractSocket::IPv4Protocol &&
                from.protocol() == QAbstractSocket::IPv6Protocol)
                from = it->address;
            changed = changed || it->address != from || it->announcement.tcpPort != a->tcpPort ||
                      it->announcement.displayName != a->displayName;
            it->announcement = *a;
            it->address = from;
            it->lastSeen = QDateTime::currentDateTimeUtc();
        }
    }
    if (changed)
        Q_EMIT peersChanged();
}

void Discovery::expire() {
    const QDateTime cutoff = QDateTime::currentDateTimeUtc().addMSecs(-m_expiryMs);
    const qsizetype before = m_peers.size();
    m_peers.removeIf([&](const Peer& p) { return p.lastSeen < cutoff; });
    if (m_peers.size() != before)
        Q_EMIT peersChanged();
}

} // namespace tandem
