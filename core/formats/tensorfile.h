#pragma once

#include "common/expected.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

// Element types that cross file and wire boundaries. The byte layout of every type is
// little-endian, as on every platform Tandem runs on.
enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, U8, Bool };

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
struct TensorFile {
    QJsonObject meta;
    QList<TensorRecord> tensors;
    QMap<QString, QByteArray> blobs; // opaque named bytes, e.g. the TorchScript archive
};

constexpr uint32_t kCheckpointVersion = 1;

Status writeCheckpoint(const QString& path, const TensorFile& file);
Expected<QByteArray> serializeCheckpoint(const TensorFile& file);
Expected<TensorFile> readCheckpoint(const QString& path);
Expected<TensorFile> parseCheckpoint(const QByteArray& bytes, const QString& name);

// The safetensors format (an 8-byte little-endian header length, a JSON header with dtype,
// shape and data_offsets per tensor, then the raw data), as Hugging Face's library and
// PyTorch users read it.
Status writeSafetensors(const QString& path, const QList<TensorRecord>& tensors,
                        const QMap<QString, QString>& metadata = {});
Expected<QList<TensorRecord>> parseSafetensors(const QByteArray& bytes, const QString& name);

} // namespace tandem
