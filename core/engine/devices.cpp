#include "engine/devices.h"
#include "model/emulatedaccelerator.h"
#include "model/torchcompat.h"

#include <QFile>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSysInfo>
#include <QThread>
#include <cmath>

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/version.h>

#if defined(TANDEM_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

#if defined(Q_OS_MACOS)
#include <sys/sysctl.h>
#include <sys/types.h>
#elif defined(Q_OS_WIN)
#include <windows.h>
#elif defined(Q_OS_UNIX)
#include <unistd.h>
#endif

Q_LOGGING_CATEGORY(lcDevices, "tandem.devices")

namespace tandem {

QString torchVersionString() {
    return QStringLiteral(TORCH_VERSION);
}

int64_t systemMemoryBytes() {
#if defined(Q_OS_MACOS)
    int64_t mem = 0;
    size_t len = sizeof mem;
    if (sysctlbyname("hw.memsize", &mem, &len, nullptr, 0) == 0)
        return mem;
    return 0;
#elif defined(Q_OS_WIN)
    MEMORYSTATUSEX s;
    s.dwLength = sizeof s;
    return GlobalMemoryStatusEx(&s) ? static_cast<int64_t>(s.ullTotalPhys) : 0;
#elif defined(Q_OS_UNIX)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? int64_t(pages) * page : 0;
#else
    return 0;
#endif
}

QString cpuModelName() {
#if defined(Q_OS_MACOS)
    char buf[256] = {};
    size_t len = sizeof buf - 1;
    if (sysctlbyname("machdep.cpu.brand_string", buf, &len, nullptr, 0) == 0)
        return QString::fromUtf8(buf).trimmed();
#elif defined(Q_OS_LINUX)
    QFile f(QStringLiteral("/proc/cpuinfo"));
    if (f.open(QIODevice::ReadOnly)) {
        const QList<QByteArray> lines = f.readAll().split('\n');
        for (const QByteArray& l : lines)
            if (l.startsWith("model name")) {
                const qsizetype c = l.indexOf(':');
                if (c > 0)
                    return QString::fromUtf8(l.mid(c + 1).trimmed());
            }
    }
#endif
    return QStringLiteral("%1 CPU").arg(QSysInfo::currentCpuArchitecture());
}

Expected<DeviceInfo> chooseDevice(const QList<DeviceInfo>& devices, const QString& spec) {
    const QString want = spec.trimmed().toLower();
    if (!devices.isEmpty() && (want.isEmpty() || want == QLatin1String("auto")))
        return devices.first();
    for (const DeviceInfo& d : devices)
        if (d.torchDevice() == want ||
            (want == QLatin1String("cuda") && d.kind == DeviceKind::Cuda) ||
            (d.kind == DeviceKind::Emulated && want == deviceKindName(d.kind)))
            return d;
    QStringList have;
    for (const DeviceInfo& d : devices)
        have << d.torchDevice();
    const bool known = want == QLatin1String("cpu") || want == QLatin1String("mps") ||
                       want == QLatin1String("cuda") ||
                       QRegularExpression(QStringLiteral("^cuda:[0-9]+$")).match(want).hasMatch();
    return makeError(ErrorCode::InvalidArgument,
                     known ? QStringLiteral("there is no device %1 on this machine; it has %2 (see "
                                            "'tandem devices')")
                                 .arg(spec, have.join(QStringLiteral(", ")))
                           : QStringLiteral("unknown device \"%1\"; use cuda:N, mps or cpu (this "
                                            "machine has %2)")
                                 .arg(spec, have.join(QStringLiteral(", "))));
}

Expected<QList<DeviceInfo>> chooseDevices(const QList<DeviceInfo>& devices, const QString& spec) {
    QList<DeviceInfo> out;
    if (spec.trimmed().toLower() == QLatin1String("all")) {
        for (const DeviceInfo& d : devices)
            if (d.kind != DeviceKind::Cpu)
                out << d;
        if (out.isEmpty() && !devices.isEmpty())
            out << devices.last();
        return out;
    }
    for (const QString& one : spec.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        auto d = chooseDevice(devices, one);
        if (!d)
            return d.error();
        out << *d;
    }
    if (out.isEmpty())
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("no device named; use all, or a list such as cuda:0,cuda:1"));
    return out;
}

QStringList deviceNotes() {
    QStringList notes;
#if defined(TANDEM_WITH_CUDA)
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0)
        notes << QStringLiteral("no CUDA device found (the CUDA runtime says: %1); training runs "
                                "on the other devices")
                     .arg(QString::fromUtf8(err != cudaSuccess ? cudaGetErrorString(err)
                                                               : "no devices"));
#else
    notes << QStringLiteral("no CUDA device: this build of Tandem uses LibTorch %1 without CUDA")
                 .arg(torchVersionString());
#endif
    return notes;
}

QList<DeviceInfo> detectDevices() {
    initTorchRuntime();
    QList<DeviceInfo> out;
    const QString tv = torchVersionString();

    // CUDA. Names and memory come from the CUDA runtime, which only a CUDA build of LibTorch
    // links; this path is compiled only there and cannot be exercised on a CPU-only machine.
    if (torch::cuda::is_available()) {
        const int n = static_cast<int>(torch::cuda::device_count());
        for (int i = 0; i < n; ++i) {
            DeviceInfo d;
            d.kind = DeviceKind::Cuda;
            d.index = i;
            d.torchVersion = tv;
            d.name = QStringLiteral("CUDA device %1").arg(i);
#if defined(TANDEM_WITH_CUDA)
            cudaDeviceProp prop;
            if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
                d.name = QString::fromUtf8(prop.name);
                d.memoryBytes = static_cast<int64_t>(prop.totalGlobalMem);
                d.capability = QStringLiteral("%1.%2").arg(prop.major).arg(prop.minor);
                d.cores = prop.multiProcessorCount;
                d.mixedPrecision = prop.major >= 7; // tensor cores from Volta on
            }
#endif
            out << d;
        }
    }

    // MPS: Apple-silicon GPUs share the machine's memory.
    if (mpsAvailable()) {
        DeviceInfo d;
        d.kind = DeviceKind::Mps;
        d.name = QStringLiteral("%1 GPU (MPS)").arg(cpuModelName());
        d.memoryBytes = systemMemoryBytes();
        d.torchVersion = tv;
        d.mixedPrecision = true;
        out << d;
    }

    // The CPU presented as an accelerator, for tests (model/emulatedaccelerator.h).
    if (emulatedAcceleratorWanted()) {
        DeviceInfo d;
        d.kind = DeviceKind::Emulated;
        d.name = QStringLiteral("Emulated accelerator (the CPU)");
        d.memoryBytes = systemMemoryBytes();
        d.torchVersion = tv;
        out << d;
    }

    DeviceInfo cpu;
    cpu.kind = DeviceKind::Cpu;
    cpu.name = cpuModelName();
    cpu.memoryBytes = systemMemoryBytes();
    cpu.cores = QThread::idealThreadCount();
    cpu.torchVersion = tv;
    out << cpu;
    // TANDEM_MEMORY_LIMIT (bytes, or with K, M or G): a share of the machine a person wants
    // to lend, not all of it. Runs are sized to it (memoryplan.h).
    const QString limitText = qEnvironmentVariable("TANDEM_MEMORY_LIMIT").trimmed().toUpper();
    if (!limitText.isEmpty()) {
        const QString units = QStringLiteral("KMG");
        const qsizetype unit = units.indexOf(limitText.right(1));
        bool ok = false;
        const double value = (unit >= 0 ? limitText.chopped(1) : limitText).toDouble(&ok);
        if (ok && value > 0) {
            const int64_t limit = int64_t(value * std::pow(1024.0, double(unit + 1)));
            for (DeviceInfo& d : out)
                d.memoryBytes = d.memoryBytes > 0 ? std::min(d.memoryBytes, limit) : limit;
        } else {
            qCWarning(lcDevices) << "TANDEM_MEMORY_LIMIT" << limitText
                                 << "is not a size (bytes, or a number with K, M or G); ignored";
        }
    }
    qCDebug(lcDevices) << "found" << out.size() << "device(s)";
    return out;
}

} // namespace tandem
