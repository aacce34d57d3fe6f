// The family table (family.h): each family Tandem builds, as its layout (the name of each
// tensor by its role, where its norms sit, what is fused) and its config reader. Adding a
// family is an entry here and, where its equations differ, a few lines in block.cpp
// (docs/architecture.md, "Adding a family").
#include "model/hf/family.h"

#include "model/hf/config.h"

#include <QJsonArray>

#include <vector>

namespace tandem {

namespace {

// ---- config readers ---------------------------------------------------------------------------

void readGpt2(ConfigKeys& k, HfConfig& c) {
    c.vocab = k.count({"vocab_size"});
    c.maxPositions = k.count({"n_positions", "max_position_embeddings"});
    c.hidden = k.count({"n_embd", "hidden_size"});
    c.layers = k.count({"n_layer", "num_hidden_layers"});
    c.heads = k.count({"n_head", "num_attention_heads"});
    c.kvHeads = c.heads;
    c.intermediate = k.count({"n_inner"}, 4 * std::max<int64_t>(c.hidden, 1));
    c.normEps = k.number("layer_norm_epsilon", 1e-5);
    c.tieEmbeddings = k.flag("tie_word_embeddings", true);
    c.qkvBias = c.oBias = c.mlpBias = true;
    c.activation = k.activation("activation_function", QStringLiteral("gelu_new"),
                                {Activation::GeluTanh, Activation::Gelu});
    if (!k.flag("scale_attn_weights", true))
        k.refuse(QStringLiteral("scale_attn_weights false is not supported"));
    if (k.flag("scale_attn_by_inverse_layer_idx", false))
        k.refuse(QStringLiteral("scale_attn_by_inverse_layer_idx is not supported"));
    if (!c.tieEmbeddings)
        k.refuse(QStringLiteral("GPT-2 with untied embeddings is not supported"));
    if (c.heads > 0 && c.hidden % c.heads != 0)
        k.fail(QStringLiteral("n_embd (%1) is not a multiple of n_head (%2)")
                   .arg(c.hidden)
                   .arg(c.heads));
    c.headDim = c.heads > 0 ? c.hidden / c.heads : 0;
}

// Which blocks attend within the sliding window: layer_types where the config lists them (5.x),
// else those from max_window_layers on (Qwen2's rule), or all of them.
void readSlidingLayers(ConfigKeys& k, HfConfig& c, int64_t firstSliding) {
    c.sliding.assign(size_t(std::max<int64_t>(c.layers, 0)), 0);
    const QJsonArray types = k.json().value(QLatin1String("layer_types")).toArray();
    if (!types.isEmpty()) {
        if (types.size() != c.layers) {
            k.fail(QStringLiteral("layer_types lists %1 layers; num_hidden_layers is %2")
                       .arg(types.size())
                       .arg(c.layers));
            return;
        }
        for (qsizetype i = 0; i < types.size(); ++i) {
            const QString t = types[i].toString();
            if (t != QLatin1String("full_attention") && t != QLatin1String("sliding_attention"))
                k.refuse(QStringLiteral("layer_types[%1] \"%2\" is not supported "
                                        "(full_attention and sliding_attention are)")
                             .arg(i)
                             .arg(t));
            c.sliding[size_t(i)] = t == QLatin1String("sliding_attention");
        }
        return;
    }
    for (int64_t i = firstSliding; i < c.layers; ++i)
        c.sliding[size_t(i)] = 1;
}

// Llama and the families that share its equations: RMSNorm, rotary positions, grouped-query
// attention, a SwiGLU MLP.
void readLlamaLike(ConfigKeys& k, HfConfig& c) {
    c.vocab = k.count({"vocab_size"});
    c.hidden = k.count({"hidden_size"});
    c.layers = k.count({"num_hidden_layers"});
    c.heads = k.count({"num_attention_heads"});
    c.kvHeads = k.count({"num_key_value_heads"}, std::max<int64_t>(c.heads, 1));
    c.headDim = k.count({"head_dim"}, c.heads > 0 ? std::max<int64_t>(c.hidden / c.heads, 1) : 1);
    c.intermediate = k.count({"intermediate_size"});
    c.maxPositions = k.count({"max_position_embeddings"}, 2048);
    c.normEps = k.number("rms_norm_eps", 1e-6);
    c.tieEmbeddings = k.flag("tie_word_embeddings", false);
    const bool attentionBias = k.flag("attention_bias", false);
    c.qkvBias = c.oBias = attentionBias;
    c.mlpBias = k.flag("mlp_bias", false);
    c.activation = k.activation("hidden_act", QStringLiteral("silu"), {Activation::Silu});
    c.rope = k.rope(10000.0);
    if (k.json().value(QLatin1String("pretraining_tp")).toInt(1) > 1)
        k.refuse(QStringLiteral("pretraining_tp above 1 is not supported"));
    c.sliding.assign(size_t(std::max<int64_t>(c.layers, 0)), 0);
}

void readLlama(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
}

// Qwen2: biases on q, k and v always, none on the output projection; tied embeddings unless
// the config says otherwise; a sliding window only where use_sliding_window says so, from
// max_window_layers on.
void readQwen2(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    c.tieEmbeddings = k.flag("tie_word_embeddings", true);
    c.qkvBias = true;
    if (k.flag("use_sliding_window", false)) {
        c.slidingWindow = k.count({"sliding_window"}, 4096);
        readSlidingLayers(k, c, k.count({"max_window_layers"}, 28));
    }
}

// Mistral: every block attends within its sliding window, when the config sets one.
void readMistral(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    const QJsonValue w = k.json().value(QLatin1String("sliding_window"));
    if (!w.isNull() && !w.isUndefined()) {
        c.slidingWindow = k.count({"sliding_window"});
        readSlidingLayers(k, c, 0);
    }
}

// Qwen3: Llama's equations with no q/k/v biases, an explicit head_dim (128 unless the config
// says), and a sliding window only where use_sliding_window says so, from max_window_layers on.
void readQwen3(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    c.headDim = k.count({"head_dim"}, 128);
    if (k.flag("use_sliding_window", false)) {
        c.slidingWindow = k.count({"sliding_window"}, 4096);
        readSlidingLayers(k, c, k.count({"max_window_layers"}, 28));
    }
}

// ---- layouts ----------------------------------------------------------------------------------

// Llama's layout, which most families share or start from.
Family llamaLayout() {
    Family f;
    f.norm = NormKind::Rms;
    auto& n = f.names;
    n[size_t(Role::Embed)] = "model.embed_tokens.weight";
    n[size_t(Role::FinalNorm)] = "model.norm";
    n[size_t(Role::LmHead)] = "lm_head.weight";
    n[size_t(Role::AttnNorm)] = "model.layers.%1.input_layernorm";
    n[size_t(Role::Q)] = "model.layers.%1.self_attn.q_proj";
    n[size_t(Role::K)] = "model.layers.%1.self_attn.k_proj";
    n[size_t(Role::V)] = "model.layers.%1.self_attn.v_proj";
    n[size_t(Role::O)] = "model.layers.%1.self_attn.o_proj";
    n[size_t(Role::MlpNorm)] = "model.layers.%1.post_attention_layernorm";
    n[size_t(Role::Gate)] = "model.layers.%1.mlp.gate_proj";
    n[size_t(Role::Up)] = "model.layers.%1.mlp.up_proj";
    n[size_t(Role::Down)] = "model.layers.%1.mlp.down_proj";
    f.loraTargets = {QStringLiteral("q_proj"),    QStringLiteral("k_proj"),
                     QStringLiteral("v_proj"),    QStringLiteral("o_proj"),
                     QStringLiteral("gate_proj"), QStringLiteral("up_proj"),
                     QStringLiteral("down_proj")};
    f.defaultTargets = {QStringLiteral("q_proj"), QStringLiteral("k_proj"),
                        QStringLiteral("v_proj"), QStringLiteral("o_proj")};
    return f;
}

// GPT-2: learned positions, LayerNorm before attention and the MLP, q/k/v fused in one Conv1D
// (weights stored [in, out]), an MLP of GELU between two Conv1Ds, the output tied.
Family gpt2() {
    Family f;
    f.modelType = "gpt2";
    f.architecture = "GPT2LMHeadModel";
    f.title = "GPT-2";
    f.readConfig = readGpt2;
    f.basePrefix = "transformer.";
    f.norm = NormKind::LayerNorm;
    f.learnedPositions = true;
    f.conv1d = true;
    f.gatedMlp = false;
    auto& n = f.names;
    n[size_t(Role::Embed)] = "transformer.wte.weight";
    n[size_t(Role::Positions)] = "transformer.wpe.weight";
    n[size_t(Role::FinalNorm)] = "transformer.ln_f";
    n[size_t(Role::AttnNorm)] = "transformer.h.%1.ln_1";
    n[size_t(Role::Qkv)] = "transformer.h.%1.attn.c_attn";
    n[size_t(Role::O)] = "transformer.h.%1.attn.c_proj";
    n[size_t(Role::MlpNorm)] = "transformer.h.%1.ln_2";
    n[size_t(Role::Up)] = "transformer.h.%1.mlp.c_fc";
    n[size_t(Role::Down)] = "transformer.h.%1.mlp.c_proj";
    f.loraTargets = {QStringLiteral("c_attn"), QStringLiteral("c_proj"), QStringLiteral("c_fc")};
    f.defaultTargets = {QStringLiteral("c_attn")};
    return f;
}

Family llama() {
    Family f = llamaLayout();
    f.modelType = "llama";
    f.architecture = "LlamaForCausalLM";
    f.title = "Llama";
    f.readConfig = readLlama;
    return f;
}

// Qwen2: Llama's layout with q/k/v biases (readQwen2).
Family qwen2() {
    Family f = llamaLayout();
    f.modelType = "qwen2";
    f.architecture = "Qwen2ForCausalLM";
    f.title = "Qwen2";
    f.readConfig = readQwen2;
    return f;
}

// Mistral: Llama's layout with a sliding window (readMistral).
Family mistral() {
    Family f = llamaLayout();
    f.modelType = "mistral";
    f.architecture = "MistralForCausalLM";
    f.title = "Mistral";
    f.readConfig = readMistral;
    return f;
}

// Qwen3: Llama's layout with a per-head RMS norm of the queries and of the keys, over each
// head's dimensions, before the rotation (block.cpp applies any family's q/k norms).
Family qwen3() {
    Family f = llamaLayout();
    f.modelType = "qwen3";
    f.architecture = "Qwen3ForCausalLM";
    f.title = "Qwen3";
    f.readConfig = readQwen3;
    f.names[size_t(Role::QNorm)] = "model.layers.%1.self_attn.q_norm";
    f.names[size_t(Role::KNorm)] = "model.layers.%1.self_attn.k_norm";
    return f;
}

const std::vector<Family>& families() {
    static const std::vector<Family> table{gpt2(), llama(), qwen2(), mistral(), qwen3()};
    return table;
}

} // namespace

const Family* familyOf(const QString& modelType) {
    for (const Family& f : families())
        if (modelType == QLatin1String(f.modelType))
            return &f;
    return nullptr;
}

QString supportedHfArchitectures() {
    QStringList names;
    for (const Family& f : families())
        names << QLatin1String(f.architecture);
    return names.join(QStringLiteral(", "));
}

} // namespace tandem
