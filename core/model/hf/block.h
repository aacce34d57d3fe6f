#pragma once

#include "model/internal.h"

// Model-internal: the equations of one transformer block, for every family, over weights bound
// by role (family.h): norms of each kind, rotary positions, grouped-query attention within a
// sliding window, gated and plain MLPs, LoRA adapters with their dropout, and recomputation for
// activation checkpointing. What a pass reads is fixed for its length (BoundWeights), so a block
// recomputed in the backward pass owns the weights it reads rather than pointing at a model.

#include "model/hf/config.h"
#include "model/hf/quant.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <memory>
#include <vector>

namespace tandem {

// What generation keeps of the tokens so far: each block's keys and values ([B, kv heads,
// length, head dim]), so that a new token costs one position's work, not the whole text's.
struct TransformerCache {
    std::vector<at::Tensor> keys, values;
    int64_t length = 0;
};

// One forward pass's own state.
struct TransformerPass {
    bool training = false; // adapters' dropout applies
    uint64_t seed = 0;     // the dropout masks' seed
    TransformerCache* cache = nullptr;
    // False: the base alone, as if the adapters were not there (PEFT's disable_adapter()): the
    // reference preference tuning compares a LoRA run's model with, for no second model.
    bool adapters = true;
    // Defined: the output at these positions only, flat indices b·T + t of the [B, T] ids on
    // their device; the logits are then [K, vocab]. A loss that counts a few positions (a
    // chat's answers) spares the output layer's product, and its logits' memory, at the rest.
    at::Tensor rows{};
};

struct BoundLinear {
    at::Tensor weight, bias; // bias undefined where there is none
    // A quantized weight instead of `weight`: [out, in] whatever the family stores, dequantized
    // where it is used, in the backward pass again rather than kept.
    std::shared_ptr<const QuantizedWeight> quant;
    at::Tensor loraA, loraB; // undefined where the layer has no adapter
    uint64_t id = 0;         // the module name's hash: each adapter's dropout mask differs
    bool defined() const { return weight.defined() || quant; }
};

// x W^T for a quantized W, dequantized in x's dtype for the product; a pass that keeps
// gradients keeps only `q` for its backward pass, which dequantizes W again (a frozen weight
// needs no gradient of its own).
at::Tensor quantizedLinear(const at::Tensor& x, const std::shared_ptr<const QuantizedWeight>& q);

struct BoundNorm {
    at::Tensor weight, bias;
    bool defined() const { return weight.defined(); }
};

struct BoundLayer {
    BoundNorm attnNorm, qNorm, kNorm, postAttnNorm, mlpNorm, postMlpNorm;
    BoundLinear q, k, v, qkv, o, gate, up, gateUp, down;
    std::vector<at::Tensor> trainable; // what recomputation hands gradients to
};

// Everything a pass reads, fixed for its length: a recomputed block keeps this alive, not a
// pointer to the model.
struct BoundWeights {
    HfConfig config;
    at::Tensor embed, positions, lmHead;
    BoundNorm finalNorm;
    std::vector<BoundLayer> layers;
    double loraScale = 1.0;
    double loraDropout = 0.0;
    bool conv1d = false;
};

struct RotaryPair {
    at::Tensor cos, sin; // undefined for a family with learned positions
};

// cos and sin [T, dims] of positions [past, past + t) for `rope`, in `like`'s dtype and device.
RotaryPair rotaryTables(const Rope& rope, int64_t dims, int64_t past, int64_t t,
                        const at::Tensor& like);

at::Tensor norm(const BoundNorm& n, NormKind kind, const at::Tensor& x, double eps);

// Block `layer` on x. With `recompute` (a pass that keeps gradients, activation checkpointing
// on), the block keeps only its input and is computed again for the backward pass.
at::Tensor runBlock(const std::shared_ptr<const BoundWeights>& w, int64_t layer,
                    const at::Tensor& x, const RotaryPair& rope, const TransformerPass& pass,
                    bool recompute);

} // namespace tandem
