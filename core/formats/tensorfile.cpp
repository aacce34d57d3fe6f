#include "formats/tensorfile.h"

#include "common/failpoint.h"
#include "common/files.h"
#include "formats/corrupt.h"
#include "formats/sha256.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QSet>
#include <QtEndian>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>

namespace tandem {

namespace {

constexpr char kMagic[8] = {'T', 'A', 'N', 'D', 'E', 'M', 'C', 'K'};
constexpr qint64 kMaxHeader = 64 << 20; // a directory of a million tensors fits in far less
constexpr int kMaxTensors = 1 << 20;
constexpr int kMaxRank = 16;
constexpr qint64 kDigest = 32;
constexpr qint64 kFixed = 8 + 4 + 8;

QJsonArray shapeJson(const std::vector<int64_t>& shape) {
    QJsonArray a;
    for (int64_t s : shape)
        a.append(static_cast<qint64>(s));
    return a;
}

// Reads a shape and checks that it describes exactly nbytes of dtype. Products are checked
// for overflow, since the numbers come from the file.
Expected<std::vector<int64_t>> readShape(const QJsonValue& v, DType dt, qint64 nbytes,
                                         const QString& name, const QString& tensor) {
    if (!v.isArray())
        return corrupt(name, QStringLiteral("tensor %1 has no shape").arg(tensor));
    const QJsonArray a = v.toArray();
    if (a.size() > kMaxRank)
        return corrupt(name, QStringLiteral("tensor %1 has rank %2").arg(tensor).arg(a.size()));
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const QJsonValue& d : a) {
        const double x = d.toDouble(-1);
        if (!d.isDouble() || x < 0 || x > 9.0e15 || x != static_cast<double>(qint64(x)))
            return corrupt(name, QStringLiteral("tensor %1 has an invalid dimension").arg(tensor));
        const auto di = static_cast<int64_t>(x);
        if (di != 0 && n > std::numeric_limits<int64_t>::max() / di)
            return corrupt(name, QStringLiteral("tensor %1's shape overflows").arg(tensor));
        n *= di;
        shape.push_back(di);
    }
    if (n > std::numeric_limits<int64_t>::max() / 8 || n * dtypeSize(dt) != nbytes)
        return corrupt(name, QStringLiteral("tensor %1: shape and byte size disagree").arg(tensor));
    return shape;
}

// Where a directory's tensors lie: [offset, offset + length), by name.
struct Range {
    qint64 offset, length;
    QString name;
};

// The first tensor whose bytes another's overlap, or an empty name. Writers lay tensors end to
// end; two that share bytes come from a file made to deceive its reader, which would train one
// weight through another.
QString overlapping(std::vector<Range> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.offset < b.offset; });
    qint64 end = 0;
    for (const Range& r : ranges) {
        if (r.length == 0)
            continue;
        if (r.offset < end)
            return r.name;
        end = r.offset + r.length;
    }
    return {};
}

bool readRange(const QJsonValue& offV, const QJsonValue& lenV, qint64 limit, qint64* off,
               qint64* len) {
    const double o = offV.toDouble(-1), l = lenV.toDouble(-1);
    if (!offV.isDouble() || !lenV.isDouble() || o < 0 || l < 0 || o > 9.0e15 || l > 9.0e15)
        return false;
    *off = static_cast<qint64>(o);
    *len = static_cast<qint64>(l);
    return *off == o && *len == l && *off <= limit && *len <= limit - *off;
}

} // namespace

int dtypeSize(DType t) {
    switch (t) {
    case DType::F64:
    case DType::I64:
        return 8;
    case DType::F32:
    case DType::I32:
        return 4;
    case DType::F16:
    case DType::BF16:
        return 2;
    case DType::U8:
    case DType::I8:
    case DType::Bool:
        return 1;
    }
    return 1;
}

QString dtypeName(DType t) {
    switch (t) {
    case DType::F32:
        return QStringLiteral("F32");
    case DType::F64:
        return QStringLiteral("F64");
    case DType::F16:
        return QStringLiteral("F16");
    case DType::BF16:
        return QStringLiteral("BF16");
    case DType::I64:
        return QStringLiteral("I64");
    case DType::I32:
        return QStringLiteral("I32");
    case DType::U8:
        return QStringLiteral("U8");
    case DType::Bool:
        return QStringLiteral("BOOL");
    case DType::I8:
        return QStringLiteral("I8");
    }
    return {};
}

bool dtypeFromName(const QString& s, DType* out) {
    static const DType all[] = {DType::F32, DType::F64, DType::F16,  DType::BF16, DType::I64,
                                DType::I32, DType::U8,  DType::Bool, DType::I8};
    for (DType t : all)
        if (dtypeName(t) == s) {
            *out = t;
            return true;
        }
    return false;
}

int64_t TensorRecord::numel() const {
    int64_t n = 1;
    for (int64_t s : shape)
        n *= s;
    return n;
}

// ---- Checkpoint ----------------------------------------------------------------------------

namespace {

qint64 numelOf(const std::vector<int64_t>& shape) {
    qint64 n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

// The container's fixed part and JSON header for `file`, and how many bytes of tensors and
// blobs follow them.
struct CheckpointHead {
    QByteArray fixedAndHeader;
    qint64 dataBytes = 0;
};

Expected<CheckpointHead> checkpointHead(const TensorFile& file) {
    QJsonArray dir;
    qint64 offset = 0;
    for (const TensorRecord& t : file.tensors) {
        if (t.data.size() != t.numel() * dtypeSize(t.dtype))
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("tensor %1: data size does not match its shape").arg(t.name));
        dir.append(QJsonObject{{QStringLiteral("name"), t.name},
                               {QStringLiteral("dtype"), dtypeName(t.dtype)},
                               {QStringLiteral("shape"), shapeJson(t.shape)},
                               {QStringLiteral("offset"), offset},
                               {QStringLiteral("nbytes"), t.data.size()}});
        offset += t.data.size();
    }
    for (const LazyTensor& t : file.lazy) {
        const qint64 nbytes = numelOf(t.shape) * dtypeSize(t.dtype);
        dir.append(QJsonObject{{QStringLiteral("name"), t.name},
                               {QStringLiteral("dtype"), dtypeName(t.dtype)},
                               {QStringLiteral("shape"), shapeJson(t.shape)},
                               {QStringLiteral("offset"), offset},
                               {QStringLiteral("nbytes"), nbytes}});
        offset += nbytes;
    }
    QJsonArray blobs;
    for (auto it = file.blobs.constBegin(); it != file.blobs.constEnd(); ++it) {
        blobs.append(QJsonObject{{QStringLiteral("name"), it.key()},
                                 {QStringLiteral("offset"), offset},
                                 {QStringLiteral("nbytes"), it.value().size()}});
        offset += it.value().size();
    }
    const QByteArray header = QJsonDocument(QJsonObject{{QStringLiteral("meta"), file.meta},
                                                        {QStringLiteral("tensors"), dir},
                                                        {QStringLiteral("blobs"), blobs}})
                                  .toJson(QJsonDocument::Compact);
    CheckpointHead head;
    head.fixedAndHeader.resize(kFixed);
    char* fixed = head.fixedAndHeader.data();
    memcpy(fixed, kMagic, 8);
    qToLittleEndian<quint32>(kCheckpointVersion, fixed + 8);
    qToLittleEndian<quint64>(static_cast<quint64>(header.size()), fixed + 12);
    head.fixedAndHeader += header;
    head.dataBytes = offset;
    return head;
}

// Writes the container through `sink`, computing the trailing digest on the way, so files
// and in-memory copies share one layout and neither holds the data twice. The data goes in
// parts of a few megabytes, so that a sink can say how far it is.
Status emitCheckpoint(const TensorFile& file,
                      const std::function<bool(const char*, qint64)>& sink) {
    auto head = checkpointHead(file);
    if (!head)
        return head.error();
    constexpr qint64 kPart = 8 << 20;
    Sha256 digest;
    auto put = [&](const char* p, qint64 n) {
        for (qint64 at = 0; at < n; at += kPart) {
            const qint64 part = std::min(kPart, n - at);
            digest.addData(QByteArrayView(p + at, part));
            if (!sink(p + at, part))
                return false;
        }
        return true;
    };
    bool ok = put(head->fixedAndHeader.constData(), head->fixedAndHeader.size());
    for (const TensorRecord& t : file.tensors)
        ok = ok && put(t.data.constData(), t.data.size());
    const auto shortOf = [](const LazyTensor& t) {
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("tensor %1: data size does not match its shape").arg(t.name));
    };
    for (const LazyTensor& t : file.lazy) {
        if (!ok)
            break;
        const qint64 size = numelOf(t.shape) * dtypeSize(t.dtype);
        if (!t.part) {
            const QByteArray bytes = t.bytes();
            if (bytes.size() != size)
                return shortOf(t);
            ok = put(bytes.constData(), bytes.size());
            continue;
        }
        // A part at a time where it can be read so: a tensor of gigabytes is never held whole.
        constexpr qint64 kRead = 32 << 20;
        for (qint64 at = 0; ok && at < size; at += kRead) {
            const qint64 n = std::min(kRead, size - at);
            const QByteArray bytes = t.part(at, n);
            if (bytes.size() != n)
                return shortOf(t);
            ok = put(bytes.constData(), n);
        }
    }
    for (const QByteArray& b : file.blobs)
        ok = ok && put(b.constData(), b.size());
    const QByteArray sum = digest.result();
    ok = ok && sink(sum.constData(), sum.size());
    if (!ok)
        return makeError(ErrorCode::Io, QStringLiteral("write failed"));
    return success();
}

} // namespace

Status writeCheckpoint(const QString& path, const TensorFile& file) {
    // About what the file takes, for the message when the disk is full.
    qint64 needed = 1 << 16;
    for (const TensorRecord& t : file.tensors)
        needed += t.data.size();
    for (const LazyTensor& t : file.lazy)
        needed += numelOf(t.shape) * dtypeSize(t.dtype);
    for (const QByteArray& b : file.blobs)
        needed += b.size();
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return writeError(path, needed, out.errorString());
    if (TANDEM_FAILPOINT("checkpoint.write"))
        return writeError(path, needed, QStringLiteral("failpoint checkpoint.write"));
    const Status st =
        emitCheckpoint(file, [&](const char* p, qint64 n) { return out.write(p, n) == n; });
    if (!st && st.error().code != ErrorCode::Io)
        return st;
    if (st && TANDEM_FAILPOINT("checkpoint.rename"))
        return writeError(path, needed, QStringLiteral("failpoint checkpoint.rename"));
    if (!st || !out.commit())
        return writeError(path, needed, out.errorString());
    (void)TANDEM_FAILPOINT("checkpoint.renamed");
    return success();
}

Expected<qint64> writeCheckpointTo(QIODevice& out, const TensorFile& file) {
    qint64 wrote = 0;
    const Status st = emitCheckpoint(file, [&](const char* p, qint64 n) {
        wrote += n;
        return out.write(p, n) == n;
    });
    if (!st && st.error().code == ErrorCode::Io)
        return makeError(ErrorCode::Io, out.errorString());
    if (!st)
        return st.error();
    return wrote;
}

Expected<qint64> checkpointSize(const TensorFile& file) {
    auto head = checkpointHead(file);
    if (!head)
        return head.error();
    return head->fixedAndHeader.size() + head->dataBytes + kDigest;
}

Status writeCheckpointInto(const TensorFile& file, char* out, qint64 size) {
    qint64 at = 0;
    return writeCheckpointThrough(file, size, [&](const char* p, qint64 n) {
        memcpy(out + at, p, size_t(n));
        at += n;
        return true;
    });
}

Status writeCheckpointThrough(const TensorFile& file, qint64 size,
                              const std::function<bool(const char*, qint64)>& sink) {
    qint64 at = 0;
    bool stopped = false;
    const Status st = emitCheckpoint(file, [&](const char* p, qint64 n) {
        if (n > size - at)
            return false;
        if (!sink(p, n)) {
            stopped = true;
            return false;
        }
        at += n;
        return true;
    });
    if (!st && st.error().code != ErrorCode::Io)
        return st;
    if (stopped)
        return makeError(ErrorCode::Io,
                         QStringLiteral("the checkpoint's writing stopped after %1 of its %2 bytes")
                             .arg(at)
                             .arg(size));
    if (!st || at != size)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("the checkpoint did not fill its %1 bytes").arg(size));
    return success();
}

Expected<QByteArray> serializeCheckpoint(const TensorFile& file) {
    // One buffer of the container's size, written once: no second copy while it grows.
    auto size = checkpointSize(file);
    if (!size)
        return size.error();
    QByteArray out(qsizetype(*size), Qt::Uninitialized);
    if (auto st = writeCheckpointInto(file, out.data(), *size); !st)
        return st.error();
    return out;
}

Expected<TensorFile> readCheckpoint(const QString& path) {
    // Checkpoints hold whole models and optimizer state: the cap is what a desktop can hold.
    auto bytes = readRegularFile(path, qint64(64) << 30);
    if (!bytes)
        return bytes.error();
    return parseCheckpoint(*bytes, path);
}

bool isTandemCheckpoint(QByteArrayView head) {
    return head.size() >= 8 && memcmp(head.data(), kMagic, 8) == 0;
}

Expected<QJsonObject> checkpointMeta(QByteArrayView bytes, const QString& name) {
    if (bytes.size() < kFixed || !isTandemCheckpoint(bytes))
        return corrupt(name, QStringLiteral("not a Tandem checkpoint"));
    const auto* p = reinterpret_cast<const uchar*>(bytes.data());
    const quint64 headerLen = qFromLittleEndian<quint64>(p + 12);
    if (headerLen > quint64(kMaxHeader) || qint64(headerLen) > bytes.size() - kFixed)
        return corrupt(name, QStringLiteral("truncated (the header runs past the end)"));
    const QJsonDocument doc = QJsonDocument::fromJson(
        QByteArray::fromRawData(bytes.data() + kFixed, qsizetype(headerLen)));
    if (!doc.isObject())
        return corrupt(name, QStringLiteral("unreadable header"));
    return doc.object().value(QStringLiteral("meta")).toObject();
}

namespace {

// A checkpoint's directory: where each tensor and blob lies in the data section, checked
// against `dataLen` (names, dtypes, ranges, shapes, overlaps) before any of it is read.
struct CheckpointDirectory {
    struct Entry {
        TensorRecord tensor; // without its data
        qint64 offset = 0, length = 0;
    };
    std::vector<Entry> tensors;
    std::vector<std::pair<QString, std::pair<qint64, qint64>>> blobs; // name, (offset, length)
    QJsonObject meta;
};

Expected<CheckpointDirectory> readCheckpointDirectory(const QByteArray& header, qint64 dataLen,
                                                      const QString& name) {
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(header, &perr);
    if (!doc.isObject())
        return corrupt(name, QStringLiteral("unreadable header: %1").arg(perr.errorString()));
    const QJsonObject root = doc.object();
    CheckpointDirectory out;
    out.meta = root.value(QStringLiteral("meta")).toObject();
    const QJsonArray dir = root.value(QStringLiteral("tensors")).toArray();
    if (dir.size() > kMaxTensors)
        return corrupt(name, QStringLiteral("lists %1 tensors").arg(dir.size()));
    QSet<QString> seen;
    std::vector<Range> ranges;
    for (const QJsonValue& v : dir) {
        const QJsonObject o = v.toObject();
        CheckpointDirectory::Entry e;
        TensorRecord& t = e.tensor;
        t.name = o.value(QStringLiteral("name")).toString();
        if (t.name.isEmpty() || seen.contains(t.name))
            return corrupt(name, QStringLiteral("a tensor name is missing or repeated"));
        seen.insert(t.name);
        if (!dtypeFromName(o.value(QStringLiteral("dtype")).toString(), &t.dtype))
            return corrupt(name, QStringLiteral("tensor %1 has an unknown dtype").arg(t.name));
        if (!readRange(o.value(QStringLiteral("offset")), o.value(QStringLiteral("nbytes")),
                       dataLen, &e.offset, &e.length))
            return corrupt(name, QStringLiteral("tensor %1 lies outside the file").arg(t.name));
        auto shape = readShape(o.value(QStringLiteral("shape")), t.dtype, e.length, name, t.name);
        if (!shape)
            return shape.error();
        t.shape = std::move(*shape);
        ranges.push_back({e.offset, e.length, t.name});
        out.tensors.push_back(std::move(e));
    }
    if (const QString o = overlapping(std::move(ranges)); !o.isEmpty())
        return corrupt(name, QStringLiteral("tensor %1 shares bytes with another").arg(o));
    const QJsonArray blobs = root.value(QStringLiteral("blobs")).toArray();
    if (blobs.size() > kMaxTensors)
        return corrupt(name, QStringLiteral("lists %1 blobs").arg(blobs.size()));
    QSet<QString> blobNames;
    for (const QJsonValue& v : blobs) {
        const QJsonObject o = v.toObject();
        const QString bname = o.value(QStringLiteral("name")).toString();
        qint64 off, len;
        if (bname.isEmpty() || blobNames.contains(bname) ||
            !readRange(o.value(QStringLiteral("offset")), o.value(QStringLiteral("nbytes")),
                       dataLen, &off, &len))
            return corrupt(name, QStringLiteral("a blob entry is invalid"));
        blobNames.insert(bname);
        out.blobs.push_back({bname, {off, len}});
    }
    return out;
}

// The fixed part's checks: the magic, the version, and a header that fits `size` bytes (the
// file's or the buffer's). Returns the header's length.
Expected<qint64> readCheckpointFixed(const uchar* p, qint64 size, const QString& name) {
    if (size < kFixed + kDigest || memcmp(p, kMagic, 8) != 0)
        return corrupt(name, QStringLiteral("not a Tandem checkpoint"));
    const quint32 version = qFromLittleEndian<quint32>(p + 8);
    if (version != kCheckpointVersion)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("%1: checkpoint format version %2; this Tandem reads "
                                        "version %3")
                             .arg(name)
                             .arg(version)
                             .arg(kCheckpointVersion));
    const quint64 headerLen = qFromLittleEndian<quint64>(p + 12);
    if (headerLen > quint64(kMaxHeader) || qint64(headerLen) > size - kDigest - kFixed)
        return corrupt(name, QStringLiteral("truncated (the header runs past the end)"));
    return qint64(headerLen);
}

// `inPlace`: each tensor's data is a view into `bytes`, not a copy (parseCheckpointInPlace).
Expected<TensorFile> parseCheckpointBytes(const QByteArray& bytes, const QString& name,
                                          bool inPlace) {
    auto headerLen =
        readCheckpointFixed(reinterpret_cast<const uchar*>(bytes.constData()), bytes.size(), name);
    if (!headerLen)
        return headerLen.error();
    const qint64 body = bytes.size() - kDigest;
    const QByteArray expect = Sha256::hash(QByteArrayView(bytes.constData(), body));
    if (expect != bytes.mid(body))
        return corrupt(name, QStringLiteral("checksum mismatch: the file is truncated or damaged"));
    const qint64 dataStart = kFixed + *headerLen;
    auto dir =
        readCheckpointDirectory(bytes.mid(kFixed, qsizetype(*headerLen)), body - dataStart, name);
    if (!dir)
        return dir.error();
    TensorFile out;
    out.meta = dir->meta;
    for (CheckpointDirectory::Entry& e : dir->tensors) {
        e.tensor.data =
            inPlace ? QByteArray::fromRawData(bytes.constData() + dataStart + e.offset, e.length)
                    : bytes.mid(dataStart + e.offset, e.length);
        out.tensors.append(std::move(e.tensor));
    }
    for (const auto& [bname, range] : dir->blobs)
        out.blobs.insert(bname, bytes.mid(dataStart + range.first, range.second));
    return out;
}

} // namespace

Expected<TensorFile> parseCheckpoint(const QByteArray& bytes, const QString& name) {
    return parseCheckpointBytes(bytes, name, false);
}

Expected<TensorFile> parseCheckpointInPlace(const QByteArray& bytes, const QString& name) {
    return parseCheckpointBytes(bytes, name, true);
}

Expected<TensorFile> openCheckpoint(const QString& path) {
    if (auto st = checkRegularFile(path); !st)
        return st.error();
    auto file = std::make_shared<QFile>(path);
    if (!file->open(QIODevice::ReadOnly))
        return makeError(ErrorCode::Io,
                         QStringLiteral("%1: cannot open: %2").arg(path, file->errorString()));
    const qint64 size = file->size();
    const QByteArray fixed = file->read(kFixed);
    if (fixed.size() != kFixed)
        return corrupt(path, QStringLiteral("not a Tandem checkpoint"));
    auto headerLen =
        readCheckpointFixed(reinterpret_cast<const uchar*>(fixed.constData()), size, path);
    if (!headerLen)
        return headerLen.error();
    // The digest over the whole file, a part at a time: nothing of it is trusted before, and
    // none of it is held.
    const qint64 body = size - kDigest;
    constexpr qint64 kPart = 8 << 20;
    Sha256 digest;
    digest.addData(fixed);
    QByteArray header;
    for (qint64 at = kFixed; at < body;) {
        const QByteArray part = file->read(std::min(kPart, body - at));
        if (part.isEmpty())
            return makeError(ErrorCode::Io,
                             QStringLiteral("cannot read %1: %2").arg(path, file->errorString()));
        digest.addData(part);
        if (header.size() < *headerLen)
            header += part.left(qsizetype(*headerLen - header.size()));
        at += part.size();
    }
    if (digest.result() != file->read(kDigest))
        return corrupt(path, QStringLiteral("checksum mismatch: the file is truncated or damaged"));
    const qint64 dataStart = kFixed + *headerLen;
    auto dir = readCheckpointDirectory(header, body - dataStart, path);
    if (!dir)
        return dir.error();
    TensorFile out;
    out.meta = dir->meta;
    // Each tensor is read as its reader reaches it, from the file as it was checked: a writer
    // replaces a checkpoint by renaming a new file over it, and this one stays open.
    auto reading = std::make_shared<std::mutex>();
    auto readAt = [file, reading](qint64 at, qint64 n) {
        std::lock_guard<std::mutex> lock(*reading);
        QByteArray bytes;
        if (file->seek(at))
            bytes = file->read(n);
        return bytes;
    };
    for (const CheckpointDirectory::Entry& e : dir->tensors) {
        const qint64 at = dataStart + e.offset, n = e.length;
        out.lazy << LazyTensor{e.tensor.name, e.tensor.dtype, e.tensor.shape,
                               [readAt, at, n] { return readAt(at, n); },
                               [readAt, at, n](qint64 from, qint64 count) {
                                   return from < 0 || count < 0 || from + count > n
                                              ? QByteArray()
                                              : readAt(at + from, count);
                               }};
    }
    for (const auto& [bname, range] : dir->blobs) {
        const QByteArray bytes = readAt(dataStart + range.first, range.second);
        if (bytes.size() != range.second)
            return makeError(ErrorCode::Io,
                             QStringLiteral("cannot read %1: %2").arg(path, file->errorString()));
        out.blobs.insert(bname, bytes);
    }
    return out;
}

// ---- safetensors ---------------------------------------------------------------------------

QByteArray safetensorsHeader(const QList<SafetensorsEntry>& entries,
                             const QMap<QString, QString>& metadata) {
    QJsonObject header;
    if (!metadata.isEmpty()) {
        QJsonObject m;
        for (auto it = metadata.constBegin(); it != metadata.constEnd(); ++it)
            m.insert(it.key(), it.value());
        header.insert(QStringLiteral("__metadata__"), m);
    }
    qint64 offset = 0;
    for (const SafetensorsEntry& t : entries) {
        header.insert(t.name, QJsonObject{{QStringLiteral("dtype"), dtypeName(t.dtype)},
                                          {QStringLiteral("shape"), shapeJson(t.shape)},
                                          {QStringLiteral("data_offsets"),
                                           QJsonArray{offset, offset + t.length}}});
        offset += t.length;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    // The data section starts 8-byte aligned; the format pads the header with spaces.
    while ((json.size() % 8) != 0)
        json.append(' ');
    QByteArray out(8, '\0');
    qToLittleEndian<quint64>(static_cast<quint64>(json.size()), out.data());
    return out + json;
}

Status writeSafetensors(const QString& path, const QList<SafetensorsEntry>& entries,
                        const std::function<Expected<QByteArray>(qsizetype)>& bytesOf,
                        const QMap<QString, QString>& metadata) {
    const QByteArray head = safetensorsHeader(entries, metadata);
    qint64 needed = head.size();
    for (const SafetensorsEntry& t : entries)
        needed += t.length;
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return writeError(path, needed, out.errorString());
    bool ok = out.write(head) == head.size();
    for (qsizetype i = 0; ok && i < entries.size(); ++i) {
        auto bytes = bytesOf(i);
        if (!bytes) {
            out.cancelWriting();
            return bytes.error();
        }
        if (bytes->size() != entries[i].length) {
            out.cancelWriting();
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("%1: tensor %2 gave %3 bytes, not %4")
                                 .arg(path, entries[i].name)
                                 .arg(bytes->size())
                                 .arg(entries[i].length));
        }
        ok = out.write(*bytes) == bytes->size();
    }
    if (!ok || !out.commit())
        return writeError(path, needed, out.errorString());
    return success();
}

Status writeSafetensors(const QString& path, const QList<TensorRecord>& tensors,
                        const QMap<QString, QString>& metadata) {
    QList<SafetensorsEntry> entries;
    for (const TensorRecord& t : tensors)
        entries.append({t.name, t.dtype, t.shape, 0, t.data.size()});
    return writeSafetensors(
        path, entries, [&](qsizetype i) -> Expected<QByteArray> { return tensors[i].data; },
        metadata);
}

Expected<QList<SafetensorsEntry>> parseSafetensorsHeader(QByteArrayView bytes,
                                                         const QString& name) {
    if (bytes.size() < 8)
        return corrupt(name, QStringLiteral("too short to be a safetensors file"));
    const quint64 n = qFromLittleEndian<quint64>(bytes.data());
    if (n > quint64(kMaxHeader) || qint64(n) > bytes.size() - 8)
        return corrupt(name, QStringLiteral("the safetensors header runs past the end"));
    QJsonParseError perr;
    const QJsonDocument doc =
        QJsonDocument::fromJson(QByteArray::fromRawData(bytes.data() + 8, qsizetype(n)), &perr);
    if (!doc.isObject())
        return corrupt(name, QStringLiteral("unreadable header: %1").arg(perr.errorString()));
    const qint64 dataStart = 8 + qint64(n);
    const qint64 dataLen = bytes.size() - dataStart;
    QList<SafetensorsEntry> out;
    const QJsonObject root = doc.object();
    if (root.size() > kMaxTensors)
        return corrupt(name, QStringLiteral("lists %1 tensors").arg(root.size()));
    std::vector<Range> ranges;
    for (auto it = root.constBegin(); it != root.constEnd(); ++it) {
        if (it.key() == QLatin1String("__metadata__"))
            continue;
        const QJsonObject o = it.value().toObject();
        SafetensorsEntry t;
        t.name = it.key();
        if (!dtypeFromName(o.value(QStringLiteral("dtype")).toString(), &t.dtype))
            return corrupt(name, QStringLiteral("tensor %1 has an unknown dtype").arg(t.name));
        const QJsonArray r = o.value(QStringLiteral("data_offsets")).toArray();
        qint64 begin, len;
        if (r.size() != 2 || !readRange(r[0], QJsonValue(r[1].toDouble(-1) - r[0].toDouble()),
                                        dataLen, &begin, &len))
            return corrupt(name, QStringLiteral("tensor %1 lies outside the file").arg(t.name));
        auto shape = readShape(o.value(QStringLiteral("shape")), t.dtype, len, name, t.name);
        if (!shape)
            return shape.error();
        t.shape = std::move(*shape);
        t.offset = dataStart + begin;
        t.length = len;
        ranges.push_back({begin, len, t.name});
        out.append(std::move(t));
    }
    if (const QString o = overlapping(std::move(ranges)); !o.isEmpty())
        return corrupt(name, QStringLiteral("tensor %1 shares bytes with another").arg(o));
    return out;
}

Expected<QList<TensorRecord>> parseSafetensors(const QByteArray& bytes, const QString& name) {
    auto entries = parseSafetensorsHeader(bytes, name);
    if (!entries)
        return entries.error();
    QList<TensorRecord> out;
    for (SafetensorsEntry& e : *entries) {
        TensorRecord t;
        t.name = std::move(e.name);
        t.dtype = e.dtype;
        t.shape = std::move(e.shape);
        t.data = bytes.mid(e.offset, e.length);
        out.append(std::move(t));
    }
    return out;
}

} // namespace tandem
