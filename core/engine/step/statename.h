#pragma once

#include "engine/internal.h"

// Engine-internal: the names an optimizer's state goes by in a checkpoint, "exp_avg.3": a slot
// and the index of the parameter it belongs to.

#include "common/expected.h"

#include <QString>

#include <string>
#include <utility>

namespace tandem {

// "exp_avg.3" as ("exp_avg", 3), or an error naming `key` where it names no parameter of
// `params`.
inline Expected<std::pair<QString, size_t>> parseStateName(const std::string& key, size_t params) {
    const QString name = QString::fromStdString(key);
    const qsizetype dot = name.lastIndexOf(QLatin1Char('.'));
    bool ok = false;
    const qlonglong i = name.mid(dot + 1).toLongLong(&ok);
    if (dot <= 0 || !ok || i < 0 || size_t(i) >= params)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("optimizer state %1 names no parameter").arg(name));
    return std::pair<QString, size_t>{name.left(dot), size_t(i)};
}

} // namespace tandem
