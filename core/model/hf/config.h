#pragma once

#include "model/internal.h"

// Model-internal: a Hugging Face model folder's config.json, read into the figures Tandem's own
// transformer needs. Which families are built, and how each one's keys are read, is the family
// table's (family.h); this is what they read into, and the reading they share. Both forms of
// transformers' configs are read: 4.x (rope_theta, rope_scaling) and 5.x (rope_parameters,
// also nested by layer type). A config outside the table, or using a feature Tandem does not
// build, is refused naming the key and its value.

#include "common/expected.h"
#include "formats/tensorfile.h"
#include "model/hf/family.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace tandem {

enum class Activation : uint8_t { Gelu, GeluTanh, Silu };

// One rotary embedding: its base and its frequency scaling (rope_type).
struct Rope {
    enum class Type : uint8_t { Default, Linear, Llama3, LongRope };
    Type type = Type::Default;
    double theta = 10000.0;
    double factor = 1.0;
    double lowFreqFactor = 1.0;          // llama3
    double highFreqFactor = 4.0;         // llama3
    int64_t originalMaxPositions = 8192; // llama3, longrope
    // longrope: each frequency's divisor, short_factor while a pass's positions stay within
    // originalMaxPositions and long_factor past them; cos and sin scaled by attentionFactor.
    std::vector<double> shortFactors, longFactors;
    double attentionFactor = 1.0;
};

struct HfConfig {
    const Family* family = nullptr;
    QString modelType;    // "gpt2", "llama", "qwen2", "mistral", …
    QString architecture; // "LlamaForCausalLM", …
    int64_t vocab = 0;
    int64_t hidden = 0;
    int64_t layers = 0;
    int64_t heads = 0;
    int64_t kvHeads = 0; // grouped-query attention: heads / kvHeads queries share a key
    int64_t headDim = 0;
    int64_t intermediate = 0;
    int64_t maxPositions = 0; // learned positions: the table's length
    double normEps = 1e-5;
    bool tieEmbeddings = true; // the output layer is the token embedding
    bool qkvBias = false;      // the q, k and v projections carry biases
    bool oBias = false;        // the attention output does
    bool mlpBias = false;      // the MLP's projections do
    Activation activation = Activation::Silu;
    Rope rope;                     // the rotary embedding (of full-attention layers)
    std::optional<Rope> localRope; // sliding-window layers' own, where it differs
    int64_t rotaryDims = 0;        // the leading dimensions of each head that rotate (0: all)
    std::vector<uint8_t> noRope;   // per block: 1 when it takes no rotary positions (SmolLM3)
    int64_t slidingWindow = 0;     // a sliding layer attends this many tokens back, itself included
    std::vector<uint8_t> sliding;  // per block: 1 when it attends within slidingWindow only
    // Scales where a family departs from the plain transformer: the attention scores' factor
    // (0: 1/√head_dim), the token embeddings' (Gemma rounds its √hidden to the weights' dtype
    // first: embedScaleInDtype), each residual branch's, and the logits' divisor; tanh soft caps
    // of the attention scores and of the logits (0: none).
    double attnScale = 0;
    double embedScale = 1.0;
    bool embedScaleInDtype = false;
    double residualScale = 1.0;
    double logitsDivisor = 1.0;
    double attnSoftcap = 0;
    double finalSoftcap = 0;
    DType dtype = DType::F32; // what the checkpoint's weights are stored in
    QList<int64_t> bosTokens, eosTokens;
    QJsonObject source; // config.json as read, written back with the model's exports

    bool isSliding(int64_t layer) const {
        return slidingWindow > 0 && layer < int64_t(sliding.size()) && sliding[size_t(layer)];
    }
    const Rope& ropeOf(int64_t layer) const {
        return isSliding(layer) && localRope ? *localRope : rope;
    }
    bool hasRope(int64_t layer) const {
        return layer >= int64_t(noRope.size()) || !noRope[size_t(layer)];
    }
    int64_t rotated() const { return rotaryDims > 0 ? rotaryDims : headDim; }
    // The most tokens one pass may hold: a learned position table's length, else unlimited (0).
    int64_t positionLimit() const { return family && family->learnedPositions ? maxPositions : 0; }
};

// Reads a config's keys, one message for every way a key can be wrong; the first error wins.
class ConfigKeys {
public:
    ConfigKeys(const QJsonObject& o, const QString& name)
        : m_o(o)
        , m_name(name) {}

    const QJsonObject& json() const { return m_o; }
    // A positive whole number, from the first of `keys` present; `fallback` when none is
    // (0: required).
    int64_t count(std::initializer_list<const char*> keys, int64_t fallback = 0);
    // A positive number; `fallback` when absent.
    double number(const char* key, double fallback);
    bool flag(const char* key, bool fallback);
    QString text(const char* key, const QString& fallback);
    // A token id or a list of them.
    QList<int64_t> tokens(const char* key);
    // The activation `key` names, refused unless it is one of `allowed`.
    Activation activation(const char* key, const QString& fallback,
                          std::initializer_list<Activation> allowed);
    // The rotary embedding: rope_parameters (5.x, or its `layerType` entry when nested by layer
    // type), else rope_theta and rope_scaling (4.x), with `theta` as the default base. With
    // `scaled` false (Gemma's sliding layers in 4.x configs), rope_scaling does not apply.
    Rope rope(double theta, const char* layerType = nullptr, bool scaled = true);
    // A number that may be zero or negative; `fallback` when absent.
    double real(const char* key, double fallback);

    const Error* error() const { return m_error ? &*m_error : nullptr; }
    void fail(const QString& why);   // the file is wrong
    void refuse(const QString& why); // Tandem does not build what it asks for

private:
    Rope ropeFrom(const QJsonObject& r, double theta, const QString& where);

    const QJsonObject& m_o;
    QString m_name;
    std::optional<Error> m_error;
};

// Reads DIR/config.json. Errors name the file and the key at fault.
Expected<HfConfig> readHfConfig(const QString& dir);
// The same from the file's bytes; `name` is used in messages.
Expected<HfConfig> parseHfConfig(const QByteArray& json, const QString& name);

} // namespace tandem
