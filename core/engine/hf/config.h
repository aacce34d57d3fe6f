#pragma once

#include "engine/internal.h"

// Engine-internal: a Hugging Face model folder's config.json, read into the figures Tandem's
// own transformer needs. Two families are built natively: GPT-2 (GPT2LMHeadModel) and the
// Llama family (LlamaForCausalLM, and Qwen2ForCausalLM and MistralForCausalLM, which differ
// from it only in their config: biases on q/k/v, a sliding window, tied embeddings). A config
// outside them, or using a feature this build does not implement, is refused naming it.

#include "common/expected.h"
#include "formats/tensorfile.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace tandem {

enum class HfFamily { Gpt2, Llama };

// The rotary embedding's frequency scaling (config.json's rope_scaling).
struct RopeScaling {
    enum class Type { None, Linear, Llama3 };
    Type type = Type::None;
    double factor = 1.0;
    double lowFreqFactor = 1.0;          // llama3
    double highFreqFactor = 4.0;         // llama3
    int64_t originalMaxPositions = 8192; // llama3
};

struct HfConfig {
    HfFamily family = HfFamily::Llama;
    QString modelType;    // "gpt2", "llama", "qwen2", "mistral"
    QString architecture; // "LlamaForCausalLM", …
    int64_t vocab = 0;
    int64_t hidden = 0;
    int64_t layers = 0;
    int64_t heads = 0;
    int64_t kvHeads = 0; // grouped-query attention: heads / kvHeads queries share a key
    int64_t headDim = 0;
    int64_t intermediate = 0;
    int64_t maxPositions = 0;
    double normEps = 1e-5;     // GPT-2: LayerNorm; Llama: RMSNorm
    bool tieEmbeddings = true; // the output layer is the token embedding
    bool qkvBias = false;      // Llama: q/k/v projections carry biases (Qwen2, attention_bias)
    bool oBias = false;        // Llama: the output projection too (attention_bias)
    bool mlpBias = false;      // Llama: mlp_bias
    QString activation;        // GPT-2: gelu_new, gelu_pytorch_tanh or gelu; Llama: silu
    double ropeTheta = 10000.0;
    RopeScaling ropeScaling;
    int64_t slidingWindow = 0; // Mistral: attention reaches this many tokens back; 0: all
    DType dtype = DType::F32;  // what the checkpoint's weights are stored in
    QList<int64_t> bosTokens, eosTokens;
    QJsonObject source; // config.json as read, written back with the model's exports

    // The parameters' count, from the figures above (tied embeddings counted once).
    int64_t parameterCount() const;
};

// What Tandem builds natively, for messages: "GPT2LMHeadModel, LlamaForCausalLM, …".
QString supportedHfArchitectures();

// Reads DIR/config.json. Errors name the file and the key at fault.
Expected<HfConfig> readHfConfig(const QString& dir);
// The same from the file's bytes; `name` is used in messages.
Expected<HfConfig> parseHfConfig(const QByteArray& json, const QString& name);

} // namespace tandem
