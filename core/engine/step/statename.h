#pragma once

#include "engine/internal.h"

// Engine-internal: the names an optimizer's state goes by in a checkpoint, "exp_avg.3": a slot
// and the index of the parameter it belongs to.

#include "common/expected.h"

#include <QString>

#include <cstdint>
#include <string>
#include <utility>

namespace tandem {

// "exp_avg.3" as ("exp_avg", 3); false for a name that is not a slot and an index.
inline bool splitStateName(const std::string& name, std::string& slot, int64_t& index) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size())
        return false;
    index = 0;
    for (size_t i = dot + 1; i < name.size(); ++i) {
        if (name[i] < '0' || name[i] > '9' || index > (int64_t(1) << 40))
            return false;
        index = index * 10 + (name[i] - '0');
    }
    slot = name.substr(0, dot);
    return true;
}

// "exp_avg.3" as ("exp_avg", 3), or an error naming `key` where it names no parameter of
// `params`.
inline Expected<std::pair<QString, size_t>> parseStateName(const std::string& key, size_t params) {
    std::string slot;
    int64_t i = 0;
    if (!splitStateName(key, slot, i) || size_t(i) >= params)
        return makeError(ErrorCode::Corrupt, QStringLiteral("optimizer state %1 names no parameter")
                                                 .arg(QString::fromStdString(key)));
    return std::pair<QString, size_t>{QString::fromStdString(slot), size_t(i)};
}

// Whether a slot holds one value a block of the flat order rather than one a value: 8-bit
// AdamW's scales ("exp_avg_absmax", BlockwiseAdamW).
inline bool keptByBlock(const std::string& slot) {
    static const std::string suffix = "_absmax";
    return slot.size() > suffix.size() &&
           slot.compare(slot.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace tandem
