#pragma once

#include "expected.h"

#include <QByteArray>
#include <QString>

namespace tandem {

// Reads a whole file of at most maxBytes, with errors that name it.
Expected<QByteArray> readWholeFile(const QString& path, qint64 maxBytes);

// Reads a whole file. When it starts with the gzip magic it is inflated with zlib (Qt's
// qUncompress is zlib's own framing, not gzip). Neither the file nor the inflated data may
// exceed maxBytes: the size comes from untrusted input, so it is never used to allocate.
Expected<QByteArray> readFileMaybeGzip(const QString& path, qint64 maxBytes);

// Inflates gzip data held in memory, with the same cap.
Expected<QByteArray> gunzip(const QByteArray& data, qint64 maxBytes, const QString& name);

} // namespace tandem
