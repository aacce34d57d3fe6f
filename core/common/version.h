#pragma once

#include <QString>

namespace tandem {

// The application version, set once in the top-level CMakeLists.txt.
inline QString appVersion() {
    return QStringLiteral(TANDEM_VERSION);
}

} // namespace tandem
