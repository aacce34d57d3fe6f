#pragma once

#include <QJsonObject>
#include <QString>

#include <cstdint>

namespace tandem {

// A compute device LibTorch can run on. Plain data, so the UI and the network can carry it.
struct DeviceInfo {
    QString kind;            // "cuda", "mps" or "cpu"
    int index = 0;           // the LibTorch device index within its kind
    QString name;            // "NVIDIA GeForce RTX 4090", "Apple M2 GPU (MPS)", CPU model name
    int64_t memoryBytes = 0; // dedicated memory for CUDA; unified/system memory for MPS and CPU
    QString capability;      // CUDA compute capability "8.9"; empty otherwise
    int cores = 0;           // logical cores for CPU; streaming multiprocessors for CUDA
    QString torchVersion;    // the LibTorch this build links
    bool mixedPrecision = false;

    // "cuda:0", "mps", "cpu": the string LibTorch's Device understands.
    QString torchDevice() const {
        return kind == QLatin1String("cuda") ? QStringLiteral("cuda:%1").arg(index) : kind;
    }

    QJsonObject toJson() const {
        QJsonObject o{{QStringLiteral("kind"), kind},
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
