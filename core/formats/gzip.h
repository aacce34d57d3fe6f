#pragma once

#include "common/expected.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <functional>
#include <optional>

namespace tandem {

// What a format's first bytes say its whole length is. Called with the data inflated so far:
// returns nothing while it needs more bytes, the declared length once it can tell, or the
// format's own error when the header is not valid. With it, a gzip bomb is refused as soon as
// it inflates past what the header declared, not after gigabytes.
using DeclaredLength = std::function<Expected<std::optional<qint64>>(QByteArrayView head)>;

// Reads a whole regular file. When it starts with the gzip magic it is inflated with zlib (Qt's
// qUncompress is zlib's own framing, not gzip). Neither the file nor the inflated data may
// exceed maxBytes: the size comes from untrusted input, so it is never used to allocate.
Expected<QByteArray> readFileMaybeGzip(const QString& path, qint64 maxBytes,
                                       const DeclaredLength& declared = {});

// Inflates gzip data held in memory, with the same caps. Several gzip members one after
// another (what `cat a.gz b.gz` makes) inflate to their concatenation, as gzip -d does;
// anything else after the last member is refused.
Expected<QByteArray> gunzip(const QByteArray& data, qint64 maxBytes, const QString& name,
                            const DeclaredLength& declared = {});

} // namespace tandem
