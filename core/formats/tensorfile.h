#pragma once

#include "common/expected.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

class QIODevice;

namespace tandem {

// Element types that cross file and wire boundaries. The byte layout of every type is
// little-endian, as on every platform Tandem runs on.
enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, U8, Bool, I8 };

int dtypeSize(DType t);
QString dtypeName(DType t); // "F32", as safetensors spells them
bool dtypeFromName(const QString& s, DType* out);

// A tensor as plain bytes: what the engine hands to storage and the network, so that neither
// needs LibTorch.
struct TensorRecord {
    QString name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    QByteArray data; // product(shape) * dtypeSize(dtype) bytes, little-endian, row-major

    int64_t numel() const;
};

// Tandem's run checkpoint container. Layout:
//   "TANDEMCK"  u32 version  u64 header-length  header (JSON)  data  SHA-256(all before it)
// The JSON header holds the caller's metadata and a directory of tensors and blobs with
// offsets into the data section. A reader checks the magic, the version, every length against
// what is actually there and the digest before it trusts a single byte, so a truncated or
// bit-flipped file is refused rather than half-loaded. No code is ever deserialised from it
// (unlike pickle).
// A tensor written without being held: its bytes are asked for when the writer reaches it, so a
// checkpoint of a large model never holds a second copy of it.
struct LazyTensor {
    QString name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    std::function<QByteArray()> bytes;
    // Where set (openCheckpoint's tensors): `n` of its bytes from byte `at`, the rest unread; a
    // short answer where they cannot be read. A writer then reads the tensor so, a part at a time.
    std::function<QByteArray(qint64 at, qint64 n)> part;
};

struct TensorFile {
    QJsonObject meta;
    QList<TensorRecord> tensors;
    QList<LazyTensor> lazy;          // written after `tensors`; read back among them
    QMap<QString, QByteArray> blobs; // opaque named bytes, e.g. the TorchScript archive
};

constexpr uint32_t kCheckpointVersion = 1;

// Whether `head` (a file's or an archive's first bytes, 8 or more) starts as a Tandem checkpoint.
bool isTandemCheckpoint(QByteArrayView head);
// The caller's metadata of a checkpoint's bytes, read without its tensors (and without checking
// its digest, which parseCheckpoint does).
Expected<QJsonObject> checkpointMeta(QByteArrayView bytes, const QString& name);

Status writeCheckpoint(const QString& path, const TensorFile& file);
// Writes the container to `out` front to back, a lazy tensor's bytes asked for as the writer
// reaches it: a file of gigabytes is written without being held. Returns the bytes written.
Expected<qint64> writeCheckpointTo(QIODevice& out, const TensorFile& file);
Expected<QByteArray> serializeCheckpoint(const TensorFile& file);
// The container's size in bytes, without asking a lazy tensor for its bytes.
Expected<qint64> checkpointSize(const TensorFile& file);
// Writes the container into `out`, exactly checkpointSize(file) bytes, front to back.
Status writeCheckpointInto(const TensorFile& file, char* out, qint64 size);
// The same through `sink`, a part of a few megabytes at a time in order (false from it stops the
// writing): the container's bytes go where the sink puts them, never held here (a range's state
// on its way to the coordinator, through a BlobPipe).
Status writeCheckpointThrough(const TensorFile& file, qint64 size,
                              const std::function<bool(const char*, qint64)>& sink);
Expected<TensorFile> readCheckpoint(const QString& path);
// The same file checked the same way (its digest read through a part at a time), but without
// holding it: its blobs are read, and its tensors come as `lazy`, each read from the file when
// asked for (a short read gives fewer bytes than its shape). The file stays open while any of
// them lives. For a checkpoint of gigabytes that a reader takes a tensor at a time.
Expected<TensorFile> openCheckpoint(const QString& path);
Expected<TensorFile> parseCheckpoint(const QByteArray& bytes, const QString& name);
// The same, checked the same way, but each tensor's data is a view into `bytes`, not a copy:
// valid only while `bytes` lives unchanged. For a caller that takes the tensors out at once (a
// range's state of gigabytes would otherwise be held twice).
Expected<TensorFile> parseCheckpointInPlace(const QByteArray& bytes, const QString& name);

// The safetensors format (an 8-byte little-endian header length, a JSON header with dtype,
// shape and data_offsets per tensor, then the raw data), as Hugging Face's library and
// PyTorch users read it.
Status writeSafetensors(const QString& path, const QList<TensorRecord>& tensors,
                        const QMap<QString, QString>& metadata = {});
Expected<QList<TensorRecord>> parseSafetensors(const QByteArray& bytes, const QString& name);

// One tensor of a safetensors file: where its bytes lie in the file (from its first byte).
struct SafetensorsEntry {
    QString name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    qint64 offset = 0;
    qint64 length = 0;
};
// The directory of a safetensors file, every entry checked to lie inside `file` and to hold
// exactly its shape's bytes, without reading a byte of the data: a mapped file's pages stay
// where they are until a tensor is used.
Expected<QList<SafetensorsEntry>> parseSafetensorsHeader(QByteArrayView file, const QString& name);
// The first bytes of a safetensors file whose tensors `entries` describe, in that order after
// it: the header's length and its JSON, padded to 8 bytes (their offsets are worked out here).
QByteArray safetensorsHeader(const QList<SafetensorsEntry>& entries,
                             const QMap<QString, QString>& metadata = {});
// Writes a safetensors file whose tensors `entries` describe (their offsets are worked out
// here), asking `bytesOf(i)` for each one's bytes in turn, so that only one tensor is held at a
// time. Written to a temporary file and renamed into place.
Status writeSafetensors(const QString& path, const QList<SafetensorsEntry>& entries,
                        const std::function<Expected<QByteArray>(qsizetype)>& bytesOf,
                        const QMap<QString, QString>& metadata = {});

} // namespace tandem
