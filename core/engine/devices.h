#pragma once

#include "common/deviceinfo.h"
#include "common/expected.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>

namespace tandem {

// CUDA devices first (each GPU), then MPS, then the CPU, which is always present.
QList<DeviceInfo> detectDevices();

// The device `spec` names among `devices`: "cuda:N", "cuda" (the first GPU), "mps" or "cpu";
// empty or "auto" gives the first, the best this machine has. The error lists what there is.
Expected<DeviceInfo> chooseDevice(const QList<DeviceInfo>& devices, const QString& spec);
// Several devices, one worker each: "all" is every GPU (each CUDA device, or MPS) and the CPU
// only when there is no GPU; otherwise a comma-separated list of chooseDevice() names.
Expected<QList<DeviceInfo>> chooseDevices(const QList<DeviceInfo>& devices, const QString& spec);

// What detectDevices() looked for and did not find, in sentences for the user: a CUDA build
// with no usable GPU says why the CUDA runtime found none; a build without CUDA says so.
QStringList deviceNotes();

QString torchVersionString();
// Total physical memory of this machine, or 0 when the platform does not say.
int64_t systemMemoryBytes();
QString cpuModelName();

} // namespace tandem
