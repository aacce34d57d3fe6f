#pragma once

#include "model/internal.h"

// Model-internal: the Hugging Face families built natively with LibTorch's own operators, no
// TorchScript. The weights are kept by their Hugging Face names, as the folder stores them, so
// a checkpoint loads and saves without a translation table; at load they are bound once, by the
// family table's names (family.h), into typed per-block structs that the forward pass reads.
//
// One block, for every family: the norm before attention; q, k and v (fused or not, with q/k
// norms and rotary positions where the family has them); attention, causal and within the
// block's sliding window, over grouped key/value heads; the output projection (with its own norm
// where the family has one); the residual; the same for the MLP, gated or not. The model holds
// weights only: what one pass needs (training or not, its dropout seed, a generation's KV cache)
// comes with the call, so two threads may run one model at once.

#include "common/expected.h"
#include "model/hf/block.h"
#include "model/hf/config.h"
#include "model/hf/lora.h"
#include "model/hf/quant.h"
#include "model/tensors.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

struct BoundWeights;

class HfTransformer {
public:
    explicit HfTransformer(HfConfig config);

    const HfConfig& config() const { return m_config; }
    using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;
    // Every tensor the config calls for, by Hugging Face name, in the model's order.
    Shapes expectedTensors() const;
    // Takes the folder's tensors as they are (no copy: a mapped file's tensors stay mapped).
    // Refuses, naming the tensor, every one that is missing, every one the model has no place
    // for (apart from buffers that Hugging Face recomputes or shares: GPT-2's causal masks,
    // rotary frequencies, a tied output layer), every shape mismatch and every duplicate.
    //
    // A linear weight may come quantized, as bitsandbytes stores it (quant.h): its parts are
    // read with it and kept by their bitsandbytes names, so that an archive or checkpoint of the
    // model carries them as they are.
    Status load(const NamedTensors& weights);
    // Quantizes every block's linear weights (not the embeddings, norms or output layer, as
    // bitsandbytes leaves them), one at a time, dropping each source weight's mapped pages once
    // it is done, and freezes the base. `progress` hears (done, of). Once, after load(), before
    // addLora(). A weight that cannot be quantized (an infinity in it) is refused by name, and
    // the model then holds no weights.
    Status quantizeBase(BaseQuant kind, const std::function<void(int, int)>& progress = {});
    // What the base's linear weights are held in: None when they are in their own dtype.
    BaseQuant baseQuant() const;
    // What dequantizing the largest quantized weight holds at once, for a pass in values of
    // `elem` bytes; 0 without a quantized base.
    int64_t dequantizedBytes(int64_t elem) const;
    // What the weights would take less with the blocks' linear weights in nf4, less the largest
    // one dequantized while it computes.
    int64_t nf4Saving() const;
    // Every tensor, by name: the base weights, then any adapters (named as PEFT names them,
    // "….q_proj.lora_A.weight"). Those that train are leaves with requires_grad; with adapters,
    // the base weights are frozen.
    const NamedTensors& parameters() const { return m_params; }

    // Adds adapters to every layer `lora` targets and freezes the base weights. A is drawn
    // from `seed`. Once, after load().
    Status addLora(const LoraConfig& lora, uint64_t seed);
    const std::optional<LoraConfig>& lora() const { return m_lora; }
    // Gradient checkpointing: a block keeps only its input for the backward pass and computes
    // its activations again there. Gradients are the same; memory falls from every block's
    // activations to one block's.
    void setCheckpointActivations(bool on) { m_checkpoint = on; }
    bool checkpointActivations() const { return m_checkpoint; }
    // A model of its own: its trainable tensors are copies, its frozen ones (a LoRA base) are
    // shared, since nothing writes to them.
    HfTransformer copy() const;
    void to(const c10::Device& device);
    // Every floating-point weight in `dtype`; config.json's torch_dtype follows.
    void convertWeights(at::ScalarType dtype);
    // A frozen base in bf16 or fp16 on the CPU is computed from an fp32 copy of its own, for a
    // CPU without fast bf16 arithmetic; the parameters, and with them exports, archives and
    // checkpoints, keep the base as it is. Copies share the one fp32 copy. Returns its bytes.
    int64_t widenFrozenBase();
    int64_t widenedBytes() const;
    // A trained embedding tied to the output layer: the backward pass keeps the output layer's
    // gradient for it and adds the lookup's rows to it out of place, a second table beside the
    // first. Its bytes, or 0 where the embedding is not tied or not trained.
    int64_t tiedGradientBytes() const;
    // Writes adapter_model.safetensors and adapter_config.json into `dir`, as PEFT does;
    // `baseModel` is what adapter_config.json names as the base.
    Status saveLoraAdapter(const QString& dir, const QString& baseModel = QString()) const;
    // Writes the model as a Hugging Face folder: config.json and model.safetensors with every
    // weight by its Hugging Face name in its own dtype (a tied output layer left out, as
    // save_pretrained leaves it out), adapters folded into the weights they adapt ((alpha/r) B A
    // added, as PEFT's merge_and_unload does), one tensor at a time.
    Status saveHfModel(const QString& dir) const;

    using KvCache = TransformerCache;
    using Pass = TransformerPass;
    // Token ids [batch, length] (int64) to next-token logits [batch, length, vocab], in the
    // weights' dtype; with a cache, the ids come after the tokens it holds, which it then holds
    // too. Throws std::invalid_argument for ids the model cannot take (outside the vocabulary,
    // past a learned position table), and whatever LibTorch throws (out of memory) as it
    // throws it.
    at::Tensor logits(const at::Tensor& ids, const Pass& pass = {}) const;
    // The same as a value: InvalidArgument, OutOfMemory or Runtime.
    Expected<at::Tensor> forward(const at::Tensor& ids, const Pass& pass = {}) const;

    // The activations one sample of `tokens` keeps for the backward pass, in values of `elem`
    // bytes, from the model's own shapes: per block its norms, projections, attention and MLP
    // (with checkpointing, only its input, and one block's working set), and the logits with
    // their fp32 copy, log-softmax and gradient.
    int64_t bytesPerSample(int64_t tokens, int64_t elem) const;
    // The parameters' count, from the shapes (a tied output layer counted once).
    int64_t parameterCount() const;

private:
    struct Widened;
    struct RotaryCache;
    // The rotary tables of a pass: made once per length, device and dtype, and kept, so that a
    // step neither computes them again nor copies them to the device.
    RotaryPair rotaryFor(bool local, int64_t past, int64_t t, const at::Tensor& like) const;
    static bool isQuantizedWeight(const std::string& name, const at::Tensor& t);
    std::vector<std::string> linearWeights() const; // every block's linear weights, by name
    void bind();
    at::Tensor computed(const at::Tensor& t) const;

    HfConfig m_config;
    NamedTensors m_params;
    std::optional<LoraConfig> m_lora;
    bool m_checkpoint = false;
    std::shared_ptr<const BoundWeights> m_bound; // m_params by role, rebuilt when they change
    std::shared_ptr<Widened> m_widened;          // the fp32 copy of a frozen base, once made
    std::shared_ptr<RotaryCache> m_rotary;
};

// "….q_proj" for "….q_proj.weight"; empty for any other name.
std::string weightModule(const std::string& name);

} // namespace tandem
