#include "engine/wire/hello.h"

#include "common/version.h"
#include "engine/devices.h"

#include <QHostInfo>

namespace tandem {

wire::Hello makeHello(PeerRole role, const QString& deviceId) {
    wire::Hello h;
    h.appVersion = appVersion();
    h.torchVersion = torchVersionString();
    h.deviceId = deviceId;
    h.displayName = QHostInfo::localHostName();
    h.role = nameOf(role);
    h.devices = detectDevices();
    return h;
}

} // namespace tandem
