#pragma once

// The first message each side of a run's connection sends, shared by the coordinator's
// sessions (coordinator/hubsession.cpp) and the worker's (worker/session.cpp).

#include "common/runenums.h"
#include "wire/messages.h"

#include <QString>

namespace tandem {

// This process's Hello: its versions, device ID, host name, role and devices.
wire::Hello makeHello(PeerRole role, const QString& deviceId);

} // namespace tandem
