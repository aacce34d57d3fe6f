#include "formats/ziparchive.h"

#include <QtEndian>

#include <zlib.h>

#include <array>

namespace tandem {

namespace {

constexpr quint32 kEndSig = 0x06054b50;
constexpr quint32 kEnd64Sig = 0x06064b50;
constexpr quint32 kEnd64LocatorSig = 0x07064b50;
constexpr quint32 kCentralSig = 0x02014b50;
constexpr quint32 kLocalSig = 0x04034b50;
constexpr qint64 kEndSize = 22;
constexpr qint64 kCentralSize = 46;
constexpr qint64 kLocalSize = 30;
// More entries than any model holds; a directory claiming more is damaged.
constexpr quint64 kMaxEntries = 1 << 20;

// Bounds-checked little-endian reads over the archive's bytes.
class Reader {
public:
    explicit Reader(QByteArrayView b)
        : m_b(b) {}
    qint64 size() const { return m_b.size(); }
    bool has(quint64 at, quint64 n) const {
        return at <= quint64(m_b.size()) && n <= quint64(m_b.size()) - at;
    }
    quint16 u16(quint64 at) const { return qFromLittleEndian<quint16>(m_b.constData() + at); }
    quint32 u32(quint64 at) const { return qFromLittleEndian<quint32>(m_b.constData() + at); }
    quint64 u64(quint64 at) const { return qFromLittleEndian<quint64>(m_b.constData() + at); }
    const uchar* at(quint64 pos) const {
        return reinterpret_cast<const uchar*>(m_b.constData()) + pos;
    }

private:
    QByteArrayView m_b;
};

struct Directory {
    quint64 entries = 0;
    quint64 offset = 0;
    quint64 size = 0;
};

struct Entry {
    QString name;
    quint16 method = 0;
    quint32 crc = 0;
    quint64 compressed = 0;
    quint64 uncompressed = 0;
    quint64 localOffset = 0;
};

Error damaged(const QString& name, const QString& what) {
    return makeError(ErrorCode::Corrupt,
                     QStringLiteral("%1 is damaged: %2; save the model again from Python "
                                    "(torch.jit.save) or copy it anew")
                         .arg(name, what));
}

Expected<Directory> findDirectory(const Reader& r, const QString& name) {
    // The end record sits in the last 22 bytes plus at most a 64 KiB comment.
    const qint64 lowest = std::max<qint64>(0, r.size() - kEndSize - 0xffff);
    for (qint64 pos = r.size() - kEndSize; pos >= lowest; --pos) {
        if (r.u32(quint64(pos)) != kEndSig)
            continue;
        Directory d{r.u16(quint64(pos) + 10), r.u32(quint64(pos) + 16), r.u32(quint64(pos) + 12)};
        const bool zip64 = d.entries == 0xffff || d.offset == 0xffffffff || d.size == 0xffffffff;
        if (zip64) {
            // The zip64 locator stands just before the end record and points at the zip64 end.
            if (pos < 20 || r.u32(quint64(pos) - 20) != kEnd64LocatorSig)
                return damaged(name, QStringLiteral("its zip64 directory locator is missing"));
            const quint64 end64 = r.u64(quint64(pos) - 20 + 8);
            if (!r.has(end64, 56) || r.u32(end64) != kEnd64Sig)
                return damaged(name, QStringLiteral("its zip64 directory record is missing"));
            d = Directory{r.u64(end64 + 32), r.u64(end64 + 48), r.u64(end64 + 40)};
        }
        if (d.entries > kMaxEntries || !r.has(d.offset, d.size))
            return damaged(name, QStringLiteral("its central directory lies outside the file"));
        return d;
    }
    return makeError(ErrorCode::Corrupt,
                     QStringLiteral("%1 is not a TorchScript file saved with torch.jit.save (it is "
                                    "not a zip archive, or its end is cut off)")
                         .arg(name));
}

// Fills in the 64-bit sizes and offset from a zip64 extra field, for the fields the fixed
// record marks as 0xffffffff (in this order: uncompressed, compressed, offset).
bool applyZip64Extra(const Reader& r, quint64 extra, quint64 extraLen, Entry& e) {
    quint64 p = extra;
    while (p + 4 <= extra + extraLen) {
        const quint16 id = r.u16(p), len = r.u16(p + 2);
        if (p + 4 + len > extra + extraLen)
            return false;
        if (id == 0x0001) {
            quint64 q = p + 4;
            for (quint64* field : {&e.uncompressed, &e.compressed, &e.localOffset}) {
                if (*field != 0xffffffff)
                    continue;
                if (q + 8 > p + 4 + len)
                    return false;
                *field = r.u64(q);
                q += 8;
            }
            return true;
        }
        p += 4 + len;
    }
    return e.uncompressed != 0xffffffff && e.compressed != 0xffffffff &&
           e.localOffset != 0xffffffff;
}

Status checkData(const Reader& r, const Entry& e, quint64 data, const QString& name) {
    if (e.method == 0) {
        if (e.compressed != e.uncompressed)
            return damaged(name, QStringLiteral("entry %1 has inconsistent sizes").arg(e.name));
        uLong crc = crc32(0, nullptr, 0);
        for (quint64 done = 0; done < e.compressed;) {
            const auto n = uInt(std::min<quint64>(e.compressed - done, 1u << 30));
            crc = crc32(crc, r.at(data + done), n);
            done += n;
        }
        if (quint32(crc) != e.crc)
            return damaged(name, QStringLiteral("entry %1 fails its CRC check").arg(e.name));
        return success();
    }
    if (e.method != 8)
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1: entry %2 uses zip compression method %3; only "
                                        "stored and deflated entries are read")
                             .arg(name, e.name)
                             .arg(e.method));
    // Deflated: inflate into a small window, counting and checksumming, never holding it all.
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return makeError(ErrorCode::Runtime, QStringLiteral("%1: cannot start zlib").arg(name));
    std::array<Bytef, 1 << 16> window;
    uLong crc = crc32(0, nullptr, 0);
    quint64 produced = 0, consumed = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (zs.avail_in == 0 && consumed < e.compressed) {
            const auto n = uInt(std::min<quint64>(e.compressed - consumed, 1u << 30));
            zs.next_in = const_cast<Bytef*>(r.at(data + consumed));
            zs.avail_in = n;
            consumed += n;
        }
        zs.next_out = window.data();
        zs.avail_out = uInt(window.size());
        rc = inflate(&zs, Z_NO_FLUSH);
        const quint64 n = window.size() - zs.avail_out;
        produced += n;
        crc = crc32(crc, window.data(), uInt(n));
        if (produced > e.uncompressed || (rc != Z_OK && rc != Z_STREAM_END) ||
            (rc == Z_OK && n == 0 && zs.avail_in == 0 && consumed >= e.compressed)) {
            inflateEnd(&zs);
            return damaged(
                name, QStringLiteral("entry %1 does not inflate to its recorded size").arg(e.name));
        }
    }
    inflateEnd(&zs);
    if (produced != e.uncompressed)
        return damaged(
            name, QStringLiteral("entry %1 does not inflate to its recorded size").arg(e.name));
    if (quint32(crc) != e.crc)
        return damaged(name, QStringLiteral("entry %1 fails its CRC check").arg(e.name));
    return success();
}

} // namespace

Status verifyZipArchive(QByteArrayView bytes, const QString& name) {
    const Reader r(bytes);
    if (r.size() < kEndSize)
        return damaged(name, QStringLiteral("it is too short to be a zip archive"));
    auto dir = findDirectory(r, name);
    if (!dir)
        return dir.error();
    quint64 p = dir->offset;
    const quint64 end = dir->offset + dir->size;
    for (quint64 i = 0; i < dir->entries; ++i) {
        if (p + kCentralSize > end || r.u32(p) != kCentralSig)
            return damaged(name, QStringLiteral("its central directory is truncated"));
        Entry e;
        e.method = r.u16(p + 10);
        e.crc = r.u32(p + 16);
        e.compressed = r.u32(p + 20);
        e.uncompressed = r.u32(p + 24);
        const quint64 nameLen = r.u16(p + 28), extraLen = r.u16(p + 30), commentLen = r.u16(p + 32);
        e.localOffset = r.u32(p + 42);
        if (p + kCentralSize + nameLen + extraLen + commentLen > end)
            return damaged(name, QStringLiteral("its central directory is truncated"));
        e.name = QString::fromUtf8(reinterpret_cast<const char*>(r.at(p + kCentralSize)),
                                   qsizetype(nameLen));
        if (!applyZip64Extra(r, p + kCentralSize + nameLen, extraLen, e))
            return damaged(name, QStringLiteral("entry %1 has a broken zip64 field").arg(e.name));
        p += kCentralSize + nameLen + extraLen + commentLen;

        const quint64 lh = e.localOffset;
        if (!r.has(lh, kLocalSize) || r.u32(lh) != kLocalSig)
            return damaged(name, QStringLiteral("entry %1's local header is missing").arg(e.name));
        const quint64 localName = r.u16(lh + 26), localExtra = r.u16(lh + 28);
        const quint64 data = lh + kLocalSize + localName + localExtra;
        if (!r.has(lh + kLocalSize, localName) || !r.has(data, e.compressed))
            return damaged(name,
                           QStringLiteral("entry %1 runs past the end of the file").arg(e.name));
        if (localName != nameLen ||
            memcmp(r.at(lh + kLocalSize), r.at(p - commentLen - extraLen - nameLen), nameLen) != 0)
            return damaged(
                name, QStringLiteral("entry %1's local header names another entry").arg(e.name));
        if (auto st = checkData(r, e, data, name); !st)
            return st;
    }
    return success();
}

} // namespace tandem
