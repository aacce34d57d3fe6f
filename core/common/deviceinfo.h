#pragma once

#include <QJsonObject>
#include <QString>

#include <cstdint>

namespace tandem {

// Emulated: the CPU presented as an accelerator, for tests (model/emulatedaccelerator.h); only
// where TANDEM_EMULATED_ACCELERATOR=1.
enum class DeviceKind : uint8_t { Cpu, Cuda, Mps, Emulated };

// "cpu", "cuda", "mps": as LibTorch, the command line, the wire and JSON name them.
inline QString deviceKindName(DeviceKind k) {
    switch (k) {
    case DeviceKind::Cuda:
        return QStringLiteral("cuda");
    case DeviceKind::Mps:
        return QStringLiteral("mps");
    case DeviceKind::Emulated:
        return QStringLiteral("emulated");
    case DeviceKind::Cpu:
        break;
    }
    return QStringLiteral("cpu");
}

// False for a name that is none of them (a peer's from a later version, say).
inline bool deviceKindFromName(const QString& name, DeviceKind* out) {
    for (DeviceKind k : {DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Mps, DeviceKind::Emulated})
        if (name == deviceKindName(k)) {
            *out = k;
            return true;
        }
    return false;
}

// A compute device LibTorch can run on. Plain data, so the UI and the network can carry it.
struct DeviceInfo {
    DeviceKind kind = DeviceKind::Cpu;
    int index = 0;           // the LibTorch device index within its kind
    QString name;            // "NVIDIA GeForce RTX 4090", "Apple M2 GPU (MPS)", CPU model name
    int64_t memoryBytes = 0; // dedicated memory for CUDA; unified/system memory for MPS and CPU
    QString capability;      // CUDA compute capability "8.9"; empty otherwise
    int cores = 0;           // logical cores for CPU; streaming multiprocessors for CUDA
    QString torchVersion;    // the LibTorch this build links
    bool mixedPrecision = false;

    // "cuda:0", "mps", "cpu": the string LibTorch's Device understands (the emulated
    // accelerator's is "xpu:0").
    QString torchDevice() const {
        if (kind == DeviceKind::Emulated)
            return QStringLiteral("xpu:0");
        return kind == DeviceKind::Cuda ? QStringLiteral("cuda:%1").arg(index)
                                        : deviceKindName(kind);
    }

    QJsonObject toJson() const {
        QJsonObject o{{QStringLiteral("kind"), deviceKindName(kind)},
                      {QStringLiteral("index"), index},
                      {QStringLiteral("name"), name},
                      {QStringLiteral("memory_bytes"), static_cast<qint64>(memoryBytes)},
                      {QStringLiteral("cores"), cores},
                      {QStringLiteral("torch_version"), torchVersion},
                      {QStringLiteral("mixed_precision"), mixedPrecision}};
        if (!capability.isEmpty())
            o.insert(QStringLiteral("capability"), capability);
        return o;
    }
};

} // namespace tandem
