#pragma once

// The error for a file that does not read as its format says, "NAME: WHAT", for the readers in
// this folder.

#include "common/expected.h"

#include <QString>

namespace tandem {

inline Error corrupt(const QString& name, const QString& what) {
    return makeError(ErrorCode::Corrupt, QStringLiteral("%1: %2").arg(name, what));
}

} // namespace tandem
