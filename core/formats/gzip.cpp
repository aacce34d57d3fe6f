#include "formats/gzip.h"

#include "common/files.h"
#include "formats/corrupt.h"

#include <zlib.h>

namespace tandem {

namespace {

bool startsWithGzipMagic(const uint8_t* p, qint64 n) {
    return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

} // namespace

Expected<QByteArray> gunzip(const QByteArray& data, qint64 maxBytes, const QString& name,
                            const DeclaredLength& declared) {
    z_stream zs{};
    // 15 window bits + 16: gzip framing only.
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        return makeError(ErrorCode::Runtime, QStringLiteral("%1: cannot start zlib").arg(name));
    struct End {
        z_stream* zs;
        ~End() { inflateEnd(zs); }
    } end{&zs};

    QByteArray out;
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.constData()));
    zs.avail_in = static_cast<uInt>(data.size());
    constexpr qint64 kChunk = 1 << 20;
    // The most the data may inflate to: maxBytes, then what the header declares once known.
    qint64 limit = maxBytes;
    bool limitFromHeader = false;
    const auto tooLarge = [&] {
        return limitFromHeader
                   ? corrupt(name, QStringLiteral("inflates to more than the %1 bytes its header "
                                                  "declares; the file is damaged")
                                       .arg(limit))
                   : corrupt(
                         name,
                         QStringLiteral("inflates to more than %1 bytes; refusing it").arg(limit));
    };
    for (;;) {
        // One byte of room past the limit tells "exactly the limit" from "more".
        const qint64 grow = std::min(kChunk, limit + 1 - out.size());
        if (grow <= 0)
            return tooLarge();
        const qint64 before = out.size();
        out.resize(before + grow);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + before);
        zs.avail_out = static_cast<uInt>(grow);
        const int rc = inflate(&zs, Z_NO_FLUSH);
        out.resize(before + (grow - zs.avail_out));
        if (out.size() > limit)
            return tooLarge();
        if (declared && !limitFromHeader) {
            auto length = declared(QByteArrayView(out));
            if (!length)
                return length.error();
            if (*length) {
                limit = std::min(limit, **length);
                limitFromHeader = true;
                if (out.size() > limit)
                    return tooLarge();
            }
        }
        if (rc == Z_STREAM_END) {
            if (zs.avail_in == 0)
                break;
            // Another gzip member follows, or junk: the first is inflated, the second refused.
            if (!startsWithGzipMagic(zs.next_in, zs.avail_in))
                return corrupt(name, QStringLiteral("%1 bytes that are not gzip data follow the "
                                                    "compressed stream; the file is damaged")
                                         .arg(zs.avail_in));
            if (inflateReset(&zs) != Z_OK)
                return corrupt(name, QStringLiteral("the gzip data is corrupt"));
            continue;
        }
        if (rc != Z_OK || (zs.avail_in == 0 && zs.avail_out != 0))
            return corrupt(name, QStringLiteral("the gzip data is truncated or corrupt"));
    }
    return out;
}

Expected<QByteArray> readFileMaybeGzip(const QString& path, qint64 maxBytes,
                                       const DeclaredLength& declared) {
    auto read = readRegularFile(path, maxBytes);
    if (!read)
        return read.error();
    QByteArray bytes = std::move(*read);
    if (startsWithGzipMagic(reinterpret_cast<const uint8_t*>(bytes.constData()), bytes.size()))
        return gunzip(bytes, maxBytes, path, declared);
    return bytes;
}

} // namespace tandem
