#pragma once

#include "engine/internal.h"

// Engine-internal: the Hugging Face families built natively with LibTorch's own operators, no
// TorchScript. The weights are kept by their Hugging Face names, as the folder stores them,
// so a checkpoint loads and saves without a translation table.
//
// GPT-2: learned positions, LayerNorm before attention and MLP, GELU (tanh), Conv1D weights
// stored [in, out], the output layer tied to the token embedding.
// Llama family: rotary positions (rope_theta, with linear or llama3 scaling) applied to queries
// and keys by rotating halves, RMSNorm computed in fp32, grouped-query attention, a SwiGLU MLP
// (down(silu(gate(x)) * up(x))), optional q/k/v biases (Qwen2) and tied embeddings.

#include "common/expected.h"
#include "engine/hf/config.h"
#include "engine/hf/lora.h"
#include "formats/tensorfile.h"

#include <ATen/ATen.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

struct BlockRecompute;
using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class HfTransformer {
public:
    explicit HfTransformer(HfConfig config);

    const HfConfig& config() const { return m_config; }
    // Every tensor the config calls for, by Hugging Face name, in the model's order.
    std::vector<std::pair<std::string, std::vector<int64_t>>> expectedTensors() const;
    // Takes the folder's tensors. Refuses, naming the tensor, every one that is missing, every
    // one the model has no place for (apart from buffers that Hugging Face recomputes: GPT-2's
    // causal masks, Llama's rotary frequencies, a tied output layer) and every shape mismatch.
    // The weights keep the checkpoint's dtype.
    Status load(const QList<TensorRecord>& weights);
    // The same from tensors, which the model takes as they are (no copy).
    Status load(const NamedTensors& weights);
    // Every tensor, by name: the base weights, then any adapters (named as PEFT names them,
    // "….q_proj.lora_A.weight"). Those that train are leaves with requires_grad; with
    // adapters, the base weights are frozen.
    const std::vector<std::pair<std::string, at::Tensor>>& parameters() const { return m_params; }

    // Adds adapters to every layer `lora` targets and freezes the base weights. A is drawn
    // from `seed`. Once, after load().
    Status addLora(const LoraConfig& lora, uint64_t seed);
    const std::optional<LoraConfig>& lora() const { return m_lora; }
    // Dropout on the adapters' inputs applies only while training.
    void setTraining(bool training) { m_training = training; }
    // Gradient checkpointing: a transformer block keeps only its input for the backward pass
    // and computes its activations again there, instead of keeping them all. Gradients are
    // the same; memory falls from every block's activations to one block's.
    void setCheckpointActivations(bool on) { m_checkpoint = on; }
    bool checkpointActivations() const { return m_checkpoint; }
    // A model of its own: its trainable tensors are copies, its frozen ones (a LoRA base) are
    // shared, since nothing writes to them.
    HfTransformer copy() const;
    void to(const c10::Device& device);
    // Every floating-point weight in `dtype`; config.json's torch_dtype follows.
    void convertWeights(at::ScalarType dtype);
    // Writes adapter_model.safetensors and adapter_config.json into `dir`, as PEFT does.
    Status saveLoraAdapter(const QString& dir) const;
    // Writes the model as a Hugging Face folder: its config.json and model.safetensors with
    // every weight by its Hugging Face name in its own dtype (a tied output layer is left out,
    // as save_pretrained leaves it out). Adapters are folded into the weights they adapt
    // ((alpha/r) B A added, as PEFT's merge_and_unload), so the folder is a plain model.
    Status saveHfModel(const QString& dir) const;

    // Token ids [batch, length] (int64) to next-token logits [batch, length, vocab], in the
    // weights' dtype. A length past the model's positions (GPT-2) or its sliding window
    // (Mistral) is refused.
    Expected<at::Tensor> forward(const at::Tensor& ids) const;
    // The same, throwing: std::invalid_argument for ids the model cannot take,
    // std::domain_error for a length it would need unbuilt features for, and whatever
    // LibTorch throws (out of memory) as it throws it.
    at::Tensor logits(const at::Tensor& ids) const;

    // What generation keeps of the tokens so far: each block's keys and values ([B, kv heads,
    // length, head dim]), so that a new token costs one position's work, not the whole text's.
    struct KvCache {
        std::vector<at::Tensor> keys, values;
        int64_t length = 0;
    };
    // Logits of `ids` coming after the tokens `cache` holds, which it then holds too. Refused
    // as logits() refuses, counting the cached tokens in the length.
    at::Tensor logits(const at::Tensor& ids, KvCache& cache) const;

private:
    friend struct BlockRecompute;

    const at::Tensor& p(const std::string& name) const;
    at::Tensor gpt2(const at::Tensor& ids) const;
    at::Tensor llama(const at::Tensor& ids) const;
    // Block `layer` on x; cos and sin are the rotary tables (Llama). Dropout masks follow from
    // `seed`, so a block computed again in the backward pass draws the same ones.
    at::Tensor block(int64_t layer, const at::Tensor& x, const at::Tensor& cos,
                     const at::Tensor& sin, uint64_t seed) const;
    at::Tensor gpt2Block(int64_t layer, const at::Tensor& x) const;
    at::Tensor llamaBlock(int64_t layer, const at::Tensor& x, const at::Tensor& cos,
                          const at::Tensor& sin) const;
    // The block, through BlockRecompute when checkpointing applies.
    at::Tensor runBlock(int64_t layer, const at::Tensor& x, const at::Tensor& cos,
                        const at::Tensor& sin) const;
    // m_index, m_adapters and m_layerParams from m_params.
    void reindex();
    // "….q_proj" for "….q_proj.weight"; empty for any other name.
    static std::string weightModule(const std::string& name);
    at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const;
    // k and v with the cached ones of `layer` in front, stored back; unchanged without a cache.
    std::pair<at::Tensor, at::Tensor> withCache(int64_t layer, at::Tensor k, at::Tensor v) const;
    at::Tensor invFreq() const;
    // A linear layer ([out, in] weight, as torch.nn.Linear) or a GPT-2 Conv1D ([in, out]), by
    // its module name, with its adapter if it has one.
    at::Tensor linear(const std::string& module, const at::Tensor& x, bool bias) const;
    at::Tensor conv1d(const std::string& module, const at::Tensor& x) const;
    at::Tensor adapted(const std::string& module, const at::Tensor& x, const at::Tensor& y) const;

    struct Adapter {
        at::Tensor a, b;
    };

    HfConfig m_config;
    std::vector<std::pair<std::string, at::Tensor>> m_params;
    std::map<std::string, size_t> m_index;
    std::optional<LoraConfig> m_lora;
    std::map<std::string, Adapter> m_adapters; // by module name
    bool m_training = false;
    bool m_checkpoint = false;
    std::vector<std::vector<at::Tensor>> m_layerParams; // per block, the tensors that train
    mutable uint64_t m_forwards = 0;                    // seeds each pass's dropout
    mutable uint64_t m_blockSeed = 0;                   // the block being computed
    mutable KvCache* m_cache = nullptr;                 // during logits(ids, cache)
};

} // namespace tandem
