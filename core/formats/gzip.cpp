#include "gzip.h"

#include <QFile>

#include <zlib.h>

namespace tandem {

Expected<QByteArray> gunzip(const QByteArray& data, qint64 maxBytes, const QString& name) {
    z_stream zs{};
    // 15 window bits + 16: gzip framing only.
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        return makeError(ErrorCode::Runtime, QStringLiteral("%1: cannot start zlib").arg(name));

    QByteArray out;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.constData()));
    zs.avail_in = static_cast<uInt>(data.size());
    const qint64 chunk = 1 << 20;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (out.size() >= maxBytes) {
            inflateEnd(&zs);
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: inflates to more than %2 bytes; refusing it")
                                 .arg(name)
                                 .arg(maxBytes));
        }
        const qint64 grow = std::min(chunk, maxBytes - out.size());
        const qint64 before = out.size();
        out.resize(before + grow);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + before);
        zs.avail_out = static_cast<uInt>(grow);
        rc = inflate(&zs, Z_NO_FLUSH);
        out.resize(before + (grow - zs.avail_out));
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK || (zs.avail_in == 0 && zs.avail_out != 0)) {
            inflateEnd(&zs);
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: the gzip data is truncated or corrupt").arg(name));
        }
    }
    inflateEnd(&zs);
    return out;
}

Expected<QByteArray> readWholeFile(const QString& path, qint64 maxBytes) {
    QFile f(path);
    if (!f.exists())
        return makeError(ErrorCode::NotFound, QStringLiteral("%1: no such file").arg(path));
    if (!f.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::Io,
                         QStringLiteral("%1: cannot open: %2").arg(path, f.errorString()));
    if (f.size() > maxBytes)
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1: larger than %2 bytes; refusing it").arg(path).arg(maxBytes));
    QByteArray bytes = f.readAll();
    if (bytes.size() != f.size())
        return makeError(ErrorCode::Io,
                         QStringLiteral("%1: read failed: %2").arg(path, f.errorString()));
    return bytes;
}

Expected<QByteArray> readFileMaybeGzip(const QString& path, qint64 maxBytes) {
    auto read = readWholeFile(path, maxBytes);
    if (!read)
        return read.error();
    QByteArray bytes = std::move(*read);
    if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
        static_cast<uint8_t>(bytes[1]) == 0x8b)
        return gunzip(bytes, maxBytes, path);
    return bytes;
}

} // namespace tandem
