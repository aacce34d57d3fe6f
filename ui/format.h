#pragma once

#include "deviceinfo.h"

#include <QList>
#include <QString>

namespace tandem::ui {

// "NVIDIA GeForce RTX 4090, 24.0 GB", "Apple M2 (MPS), 16.0 GB", "CPU: AMD EPYC, 8 cores"
QString describeDevice(const DeviceInfo& d);
QString describeDevices(const QList<DeviceInfo>& devices, const QString& separator);
QString formatBytes(double bytes);

} // namespace tandem::ui
