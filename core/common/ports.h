#pragma once

// Tandem's default ports, documented in the user guide (firewalls must allow them).

#include <QtGlobal>

namespace tandem {

constexpr quint16 kDiscoveryPort = 47300; // UDP: announcements on the LAN
constexpr quint16 kServePort = 47301;     // TCP: pairing requests and invitations

} // namespace tandem
