#pragma once

// Tandem's default ports, documented in the user guide (firewalls must allow them).

#include <QString>
#include <QtGlobal>

namespace tandem {

constexpr quint16 kDiscoveryPort = 47300; // UDP: announcements on the LAN
constexpr quint16 kServePort = 47301;     // TCP: pairing requests and invitations

// "HOST:PORT", with an IPv6 address in brackets ("[fe80::1]:47301").
inline QString hostPort(const QString& host, quint16 port) {
    return QStringLiteral("%1:%2")
        .arg(host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : host)
        .arg(port);
}

} // namespace tandem
