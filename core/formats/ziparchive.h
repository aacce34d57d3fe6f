#pragma once

#include "common/expected.h"

#include <QByteArrayView>
#include <QString>

namespace tandem {

// Checks a zip archive (a TorchScript file is one) before anything reads it: the central
// directory and every local header lie within the bytes, and every entry's data, stored or
// deflated, has the size and the CRC-32 the directory records. LibTorch's own reader checks
// none of the CRCs, so a damaged model.pt would otherwise load and train on damaged weights.
// The message names `name` and the first damaged entry.
Status verifyZipArchive(QByteArrayView bytes, const QString& name);

} // namespace tandem
