#pragma once

#include <QString>

#include <cmath>

namespace tandem {

// A duration as a clock shows it: "4:05", "1:02:03"; "--:--" when unknown (negative, not a
// number, or beyond a hundred days, as an estimate early in a run can be).
inline QString clockText(double seconds) {
    if (!(seconds >= 0) || seconds > 1e7 || !std::isfinite(seconds))
        return QStringLiteral("--:--");
    const auto t = static_cast<qint64>(seconds + 0.5);
    if (t >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(t / 3600)
            .arg((t / 60) % 60, 2, 10, QLatin1Char('0'))
            .arg(t % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(t / 60).arg(t % 60, 2, 10, QLatin1Char('0'));
}

// A count in the engine's messages, its thousands grouped as English writes them: "128,256".
inline QString countText(qint64 n) {
    QString digits = QString::number(n < 0 ? -n : n);
    for (qsizetype i = digits.size() - 3; i > 0; i -= 3)
        digits.insert(i, QLatin1Char(','));
    return n < 0 ? QLatin1Char('-') + digits : digits;
}

} // namespace tandem
