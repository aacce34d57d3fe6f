#include "ui/format.h"

#include "net/identity.h"

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
    if (d.kind == DeviceKind::Cuda)
        return Format::tr("GPU %1 (CUDA): %2, %3")
            .arg(d.index)
            .arg(d.name, formatBytes(double(d.memoryBytes)));
    if (d.kind == DeviceKind::Mps)
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

QString shortDeviceId(const QString& id) {
    if (id.isEmpty())
        return {};
    return QChar(0x202A) + shortDeviceIdText(id) + QChar(0x202C);
}

QString pairingCodeText(const QString& code) {
    return pairingCodeFirst(code) + QLatin1Char(' ') + pairingCodeSecond(code);
}

QString testFigureAxis(Task task) {
    switch (task) {
    case Task::Classification:
    case Task::MultiLabel:
        return QCoreApplication::translate("Format", "Accuracy (%)");
    case Task::Sequence:
        return QCoreApplication::translate("Format", "Perplexity");
    case Task::Regression:
        return QCoreApplication::translate("Format", "R²");
    case Task::Custom:
        return QCoreApplication::translate("Format", "Test loss");
    case Task::Preference:
        return QCoreApplication::translate("Format", "Reward accuracy (%)");
    }
    return {};
}

double testFigureValue(const TestMetrics& t, Task task) {
    if (!t.evaluated)
        return std::nan("");
    switch (task) {
    case Task::Classification:
    case Task::MultiLabel:
    case Task::Preference:
        return 100.0 * t.accuracy;
    case Task::Sequence:
        return t.perplexity;
    case Task::Regression:
        return t.r2;
    case Task::Custom:
        return t.loss;
    }
    return std::nan("");
}

namespace {
QString rateText(double perS) {
    // A slow machine's language-model steps make well under one sample a second: a decimal
    // below ten, so that it never reads 0.
    return QLocale().toString(perS, 'f', perS < 10 ? 1 : 0);
}
} // namespace

QString speedText(double samplesPerS, double tokensPerS) {
    if (tokensPerS > 0)
        return QCoreApplication::translate("Format", "%1 tokens/s").arg(rateText(tokensPerS));
    return QCoreApplication::translate("Format", "%1 samples/s").arg(rateText(samplesPerS));
}

QString testFigureText(const TestMetrics& t, Task task) {
    const double v = testFigureValue(t, task);
    if (!t.evaluated || !std::isfinite(v))
        return QCoreApplication::translate("Format", "not measured yet");
    switch (task) {
    case Task::Classification:
    case Task::MultiLabel:
        return QCoreApplication::translate("Format", "test accuracy %1%")
            .arg(QLocale().toString(v, 'f', 2));
    case Task::Sequence:
        // The next-token accuracy beside it, where the evaluation measured one.
        if (t.hasAccuracy())
            return QCoreApplication::translate("Format", "perplexity %1, next-token accuracy %2%")
                .arg(QLocale().toString(v, 'f', 2), QLocale().toString(100.0 * t.accuracy, 'f', 1));
        return QCoreApplication::translate("Format", "perplexity %1")
            .arg(QLocale().toString(v, 'f', 2));
    case Task::Regression:
        return QCoreApplication::translate("Format", "R² %1").arg(QLocale().toString(v, 'f', 3));
    case Task::Custom:
        return QCoreApplication::translate("Format", "test loss %1")
            .arg(QLocale().toString(v, 'f', 4));
    case Task::Preference:
        // TRL's rewards/accuracies on the held-out pairs.
        return QCoreApplication::translate("Format", "held-out reward accuracy %1%")
            .arg(QLocale().toString(v, 'f', 1));
    }
    return {};
}

} // namespace tandem::ui
