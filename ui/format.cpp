#include "ui/format.h"

#include <QCoreApplication>
#include <QLocale>

#include <cmath>

namespace tandem::ui {

namespace {
class Format {
    Q_DECLARE_TR_FUNCTIONS(Format)
};
} // namespace

QString formatBytes(double bytes) {
    return QLocale().formattedDataSize(qint64(bytes), 1, QLocale::DataSizeSIFormat);
}

QString describeDevice(const DeviceInfo& d) {
    if (d.kind == QLatin1String("cuda"))
        return Format::tr("GPU %1 (CUDA): %2, %3")
            .arg(d.index)
            .arg(d.name, formatBytes(double(d.memoryBytes)));
    if (d.kind == QLatin1String("mps"))
        return Format::tr("Apple GPU (MPS): %1, %2 shared memory")
            .arg(d.name, formatBytes(double(d.memoryBytes)));
    return Format::tr("CPU: %1, %n core(s), %2 RAM", nullptr, d.cores)
        .arg(d.name.isEmpty() ? Format::tr("unknown model") : d.name,
             formatBytes(double(d.memoryBytes)));
}

QString describeDevices(const QList<DeviceInfo>& devices, const QString& separator) {
    QStringList parts;
    for (const DeviceInfo& d : devices)
        parts << describeDevice(d);
    return parts.join(separator);
}

QString pairingCodeFirst(const QString& code) {
    return QChar(0x202A) + code.left(3); // LEFT-TO-RIGHT EMBEDDING
}

QString pairingCodeSecond(const QString& code) {
    return code.mid(3) + QChar(0x202C); // POP DIRECTIONAL FORMATTING
}

QString pairingCodeText(const QString& code) {
    return pairingCodeFirst(code) + QLatin1Char(' ') + pairingCodeSecond(code);
}

} // namespace tandem::ui
