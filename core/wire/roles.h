#pragma once

// Which side of a run a connection's peer is on, as its Hello's `role` field names it: the
// coordinator's sessions, the worker's session and the node that admits invitations all read
// these names from here.

#include <QString>

namespace tandem::wire {

enum class PeerRole { Coordinator, Worker };

inline QString nameOf(PeerRole role) {
    return role == PeerRole::Coordinator ? QStringLiteral("coordinator") : QStringLiteral("worker");
}

} // namespace tandem::wire
