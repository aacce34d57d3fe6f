#pragma once

#include "model/internal.h"

// Model-internal: a frozen base's linear weights in 4 or 8 bits, as bitsandbytes stores them, so
// that a weight Tandem quantizes is the one bitsandbytes would write, and a folder bitsandbytes
// wrote (a published "-bnb-4bit" checkpoint) loads as it is.
//
// NF4 (Dettmers et al. 2023, QLoRA): the weight, flattened, in blocks of 64; each block scaled
// by its largest magnitude (its absmax) into [-1, 1], each value replaced by the index of the
// nearest of the 16 NormalFloat values (the first on a tie), two indices a byte, the first in the
// high four bits. Double quantization stores the absmax values themselves in 8 bits: their mean
// (the offset) taken off, then in blocks of 256, each scaled by its own absmax to the nearest of
// the 256 values of bitsandbytes' dynamic map. int8 is LLM.int8's row-wise form without
// outliers: each row scaled by 127 over its absmax and rounded to the nearest integer.
//
// A weight is dequantized where it is used, one layer at a time, with LibTorch's own operators,
// so the same code runs on a CPU, CUDA and MPS.

#include "common/expected.h"
#include "model/hf/lora.h"
#include "model/tensors.h"

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

namespace tandem {

struct QuantizedWeight {
    BaseQuant kind = BaseQuant::Nf4;
    std::vector<int64_t> shape;           // the weight's own, [out, in]
    at::ScalarType dtype = at::kBFloat16; // what it was, and what it dequantizes to by default
    // nf4: uint8 [ceil(n / 2), 1]; int8: int8 [out, in].
    at::Tensor packed;
    // nf4: fp32 [blocks], or with double quantization uint8 [blocks]; int8: fp32 [out].
    at::Tensor absmax;
    at::Tensor code; // nf4: the 16 values (bitsandbytes' quant_map)
    // nf4: each byte's two values, fp32 [256, 2] (nf4PairTable), made once beside `code` so
    // that a dequantization does not build it again; used while `code` is as it was then (its
    // version: a checkpoint's values copied into it make the table stale). Not in any file.
    at::Tensor pairs;
    int64_t pairsOfVersion = -1;
    int64_t blocksize = 64;
    // Double quantization: the absmax values' own blocks, their map and their mean.
    at::Tensor nestedAbsmax, nestedCode;
    int64_t nestedBlocksize = 256;
    float offset = 0;

    bool nested() const { return nestedAbsmax.defined(); }
    int64_t numel() const;
    int64_t bytes() const; // what it holds, every part counted
    void to(const c10::Device& device);
    void makePairs(); // `pairs` from `code` as it is
    bool pairsCurrent() const;
};

// "bfloat16", "float16" or "float32", as config.json's torch_dtype and bitsandbytes' state name
// a floating-point dtype.
QString torchDtypeName(at::ScalarType t);

// For each of the 256 bytes, the values of its high and its low four bits in `code`: [256, 2].
at::Tensor nf4PairTable(const at::Tensor& code);
// The 16 NormalFloat values, fp32, ascending.
at::Tensor nf4Code();
// bitsandbytes' signed dynamic 8-bit map (create_dynamic_map), fp32, ascending, 256 values.
at::Tensor dynamicCode();

// `w` [out, in], floating point, on the CPU, in any dtype. Refuses a weight holding an infinity
// or a NaN, naming `name`.
Expected<QuantizedWeight> quantizeNf4(const at::Tensor& w, bool doubleQuant,
                                      const QString& name = QString());
Expected<QuantizedWeight> quantizeInt8(const at::Tensor& w, const QString& name = QString());

// What a weight of `shape` takes in nf4 with double quantization, every part counted.
int64_t nf4Bytes(const std::vector<int64_t>& shape, at::ScalarType dtype);

// The weight again, [out, in] in `dtype`, on the quantized tensors' device.
at::Tensor dequantize(const QuantizedWeight& q, at::ScalarType dtype);

// ---- bitsandbytes' serialization ---------------------------------------------------------------
// A quantized weight "M.weight" is stored as bitsandbytes' state dict stores it: nf4 as
// M.weight (uint8), M.weight.absmax, M.weight.quant_map, M.weight.nested_absmax,
// M.weight.nested_quant_map and M.weight.quant_state.bitsandbytes__nf4 (the rest as JSON
// bytes); int8 as M.weight (int8) and M.SCB.

// The tensors of `q` by those names, for `weight` ("M.weight").
NamedTensors bnbTensors(const std::string& weight, const QuantizedWeight& q);
// Whether `name` is one of the companions a quantized weight brings beside "M.weight".
bool isBnbCompanion(const std::string& name);
// The weight `name` ("M.weight") from `tensors`, which hold it in bitsandbytes' form; refuses,
// naming the tensor, a quant type other than nf4 (fp4), a part missing or of the wrong size, and
// a state that does not describe `expected` (the weight's shape).
Expected<QuantizedWeight> readBnb(const std::string& name,
                                  const std::map<std::string, at::Tensor>& tensors,
                                  const std::vector<int64_t>& expected);

} // namespace tandem
