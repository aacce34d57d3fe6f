#pragma once

// GGUF, the single-file model format llama.cpp, Ollama and LM Studio load (version 3):
//   "GGUF"  u32 version  u64 tensor-count  u64 metadata-count
//   metadata: key (u64 length + UTF-8), u32 value type, value (arrays: u32 element type,
//             u64 count, elements)
//   tensor infos: name, u32 dimensions, u64 ne[dimensions] (innermost first), u32 ggml type,
//                 u64 offset into the data section
//   padding to the alignment (general.alignment, 32 unless it says), then the data, each tensor
//   at an aligned offset. Everything little-endian.
// The writer streams: its header is worked out from the tensors' shapes and types, then each
// tensor's bytes are asked for in turn, so a model is never held twice. It writes to a temporary
// file renamed into place, so a failed export leaves no partial file. The reader checks every
// length, count and offset against the bytes that are there before it trusts one, and is what
// the tests and the fuzz target read exports back with.
//
// Plain Qt: no LibTorch, so the format's tests and fuzzer build in seconds.

#include "common/expected.h"
#include "formats/ggmlquant.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace tandem {

struct GgufValue {
    enum class Type : uint32_t {
        U8 = 0,
        I8 = 1,
        U16 = 2,
        I16 = 3,
        U32 = 4,
        I32 = 5,
        F32 = 6,
        Bool = 7,
        String = 8,
        Array = 9,
        U64 = 10,
        I64 = 11,
        F64 = 12,
    };
    Type type = Type::U32;
    Type element = Type::U32; // an array's
    // A scalar: whole numbers (and Bool) in `integer`, F32 and F64 in `real`; a String in text.
    int64_t integer = 0;
    double real = 0;
    QByteArray text;
    // An array's elements, by kind: strings, whole numbers, or reals.
    std::vector<QByteArray> strings;
    std::vector<int64_t> integers;
    std::vector<double> reals;

    static GgufValue u32(uint32_t v);
    static GgufValue f32(float v);
    static GgufValue boolean(bool v);
    static GgufValue string(const QString& v);
    static GgufValue stringArray(std::vector<QByteArray> v);
    static GgufValue i32Array(std::vector<int64_t> v);
    static GgufValue f32Array(std::vector<double> v);

    int64_t arraySize() const;
};

using GgufMetadata = std::vector<std::pair<QByteArray, GgufValue>>;

struct GgufTensor {
    QByteArray name;
    std::vector<int64_t> ne; // innermost first: a [rows, cols] matrix is {cols, rows}
    GgmlType type = GgmlType::F32;
    uint64_t offset = 0; // into the data section
    int64_t elements() const;
    int64_t bytes() const; // -1 when ne[0] is not a whole number of blocks
};

struct GgufFile {
    uint32_t version = 3;
    GgufMetadata metadata;
    std::vector<GgufTensor> tensors;
    int64_t alignment = 32;
    int64_t dataOffset = 0; // from the file's first byte

    const GgufValue* find(const char* key) const;
    const GgufTensor* tensor(const QByteArray& name) const;
};

// Reads a GGUF file's header from its bytes (or the first part of them: tensors must lie within
// `file`). Errors name the file and the field at fault.
Expected<GgufFile> parseGguf(QByteArrayView file, const QString& name);

// The size of the file writeGguf writes for `metadata` and `tensors`, in bytes; -1 when a
// tensor's rows are no whole number of its type's blocks.
int64_t ggufFileBytes(const GgufMetadata& metadata, std::vector<GgufTensor> tensors);

// Writes `tensors` (offsets are worked out here) with `metadata`, asking `bytesOf(i)` for tensor
// i's bytes, which must be exactly its size. `progress(done, total)` follows the bytes.
Status writeGguf(const QString& path, const GgufMetadata& metadata, std::vector<GgufTensor> tensors,
                 const std::function<Expected<QByteArray>(size_t)>& bytesOf,
                 const std::function<void(int64_t, int64_t)>& progress = {});

} // namespace tandem
