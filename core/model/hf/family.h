#pragma once

#include "model/internal.h"

// Model-internal: the transformer families Tandem builds, as data. Each family is one entry of
// a table: the name of each of its tensors (by the role it plays), where its norms sit and of
// which kind, whether its weights are stored [in, out] (GPT-2's Conv1D), fused projections,
// q/k norms, scaled embeddings, and the layers LoRA can target. What a family's config.json
// says (sizes, biases, rotary settings, windows) is read by its config reader (config.cpp).
// The transformer binds the tensors once, at load, into typed per-layer structs
// (transformer.h), so no forward pass looks a weight up by name and no code outside this table
// and the few equations that differ asks which family it is.
//
// Adding a family: docs/architecture.md, "Adding a family".

#include <QString>
#include <QStringList>

#include <array>
#include <cstddef>

namespace tandem {

class ConfigKeys;
struct HfConfig;

// The part a tensor plays in a family's layout.
enum class Role : uint8_t {
    // Once per model
    Embed,     // token embedding [vocab, hidden]
    Positions, // learned positions [positions, hidden] (GPT-2)
    FinalNorm, // the norm after the last block
    LmHead,    // output layer [vocab, hidden], unless tied to Embed
    // Per block (names hold %1 for the block's index)
    AttnNorm,     // the norm before attention
    Q,            // projections: q [heads·hd, hidden], k and v [kv heads·hd, hidden]
    K,            //
    V,            //
    Qkv,          // q, k and v fused (GPT-2's c_attn, Phi-3's qkv_proj)
    O,            // attention output [hidden, heads·hd]
    QNorm,        // RMS norm of the queries: per head [hd] (Qwen3, Gemma 3), or over the whole
                  // projection [heads·hd] where the family says (OLMo 2)
    KNorm,        // and of the keys
    PostAttnNorm, // the norm of attention's output before the residual add (Gemma 3, OLMo 2)
    MlpNorm,      // the norm before the MLP
    Gate,         // gated MLP: down(act(gate(x)) * up(x))
    Up,           // up [ffn, hidden] (GPT-2's c_fc when the MLP is not gated)
    GateUp,       // gate and up fused [2·ffn, hidden] (Phi-3)
    Down,         // down [hidden, ffn] (GPT-2's mlp.c_proj)
    PostMlpNorm,  // the norm of the MLP's output before the residual add (Gemma 3, OLMo 2)
    Count
};
constexpr size_t kRoles = size_t(Role::Count);

// How a norm computes. LayerNorm: w·x̂ + b. Rms: x̂ computed in fp32, cast back, then w·x̂
// (Llama). RmsWeightInFloat: w·x̂ computed in fp32, then cast (OLMo 2). RmsOnePlus: (1 + w)·x̂
// computed in fp32, then cast (Gemma).
enum class NormKind : uint8_t { LayerNorm, Rms, RmsWeightInFloat, RmsOnePlus };

struct Family {
    const char* modelType = "";    // config.json's model_type
    const char* architecture = ""; // its architectures[0]
    const char* title = "";        // for people: "Llama"
    // What the causal-LM wrapper's names start with; a base model's own checkpoint (GPT2Model,
    // LlamaModel) stores them without it.
    const char* basePrefix = "model.";
    NormKind norm = NormKind::Rms;
    bool learnedPositions = false; // positions are a learned table, not rotary
    bool conv1d = false;           // linear weights stored [in, out] (GPT-2's Conv1D)
    bool gatedMlp = true;          // down(act(gate(x)) * up(x)); else down(act(up(x)))
    bool qkNormPerHead = true;     // q/k norms over each head's dimensions, after the split
                                   // into heads; else over the whole projection, before it
    // The name of each role's tensor: a linear layer's or a norm's module (".weight" and
    // ".bias" go after it), the whole name otherwise; null where the family has no such tensor.
    std::array<const char*, kRoles> names{};
    // The linear layers adapters can target, by the leaf names PEFT uses, and the default ones.
    QStringList loraTargets;
    QStringList defaultTargets;
    // Reads the family's keys of config.json (config.h); the shared ones (dtype, BOS and EOS
    // ids) are read for every family.
    void (*readConfig)(ConfigKeys& keys, HfConfig& config) = nullptr;

    const char* name(Role r) const { return names[size_t(r)]; }
    bool has(Role r) const { return names[size_t(r)] != nullptr; }
};

// The family whose model_type is `modelType`, or null.
const Family* familyOf(const QString& modelType);
// Every family, for messages: "GPT2LMHeadModel, LlamaForCausalLM, …".
QString supportedHfArchitectures();

} // namespace tandem
