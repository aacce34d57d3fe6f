#pragma once

#include "deviceinfo.h"

#include <QList>
#include <QString>

#include <cstdint>

namespace tandem {

// CUDA devices first (each GPU), then MPS, then the CPU, which is always present.
QList<DeviceInfo> detectDevices();

QString torchVersionString();
// Total physical memory of this machine, or 0 when the platform does not say.
int64_t systemMemoryBytes();
QString cpuModelName();

} // namespace tandem
