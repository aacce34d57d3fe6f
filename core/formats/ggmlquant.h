#pragma once

// ggml's tensor types and their block layouts (ggml-common.h), with quantizers that follow
// ggml-quants.c's reference routines step for step, so that a tensor Tandem quantizes holds the
// bytes llama.cpp's own quantizer (without an importance matrix) writes for it:
//   F32, F16, BF16       one value per element; F16 and BF16 rounded to nearest even
//   Q8_0  32 values:     an F16 scale (absmax / 127) and 32 signed bytes
//   Q5_0  32 values:     an F16 scale (the signed extreme / -16), 5-bit values
//   Q5_1  32 values:     F16 scale and minimum, 5-bit values
//   Q4_K  256 values:    F16 super-scale and super-minimum, eight 6-bit sub-block scales and
//                        minimums, 4-bit values
//   Q5_K  256 values:    as Q4_K with 5-bit values
//   Q6_K  256 values:    sixteen 8-bit sub-block scales under an F16 super-scale, 6-bit values
// Plain C++: the GGUF writer, its reader and the tests share it.

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30,
};
// Elements per block and bytes per block; 0 for a type this build does not know.
int64_t ggmlBlockElements(GgmlType t);
int64_t ggmlBlockBytes(GgmlType t);
QString ggmlTypeName(GgmlType t); // "Q8_0"
bool ggmlTypeKnown(uint32_t t);

// `n` values (a whole number of blocks) as type `t`.
QByteArray ggmlQuantize(GgmlType t, const float* x, int64_t n);
// The values back: n values from `data`, which holds at least their bytes.
std::vector<float> ggmlDequantize(GgmlType t, const char* data, int64_t n);

uint16_t fp32ToFp16(float f);
float fp16ToFp32(uint16_t h);

} // namespace tandem
