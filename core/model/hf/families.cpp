// The family table (family.h): each family Tandem builds, as its layout (the name of each
// tensor by its role, where its norms sit, what is fused) and its config reader. Adding a
// family is an entry here and, where its equations differ, a few lines in block.cpp
// (docs/architecture.md, "Adding a family").
#include "model/hf/family.h"

#include "model/hf/config.h"
#include "model/modelsource.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

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
// attention, a SwiGLU MLP (the activation as `activationKey` names it).
void readLlamaLike(ConfigKeys& k, HfConfig& c, const char* activationKey = "hidden_act",
                   const QString& activationFallback = QStringLiteral("silu"),
                   std::initializer_list<Activation> activations = {Activation::Silu}) {
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
    c.activation = k.activation(activationKey, activationFallback, activations);
    c.rope = k.rope(10000.0);
    // pretraining_tp (SmolLM3 publishes 2) only sliced the matrix products into that many
    // parts for a bit-for-bit reproduction of pretraining; the model it computes is the same.
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

// Gemma 3's text model (gemma3_text): GeGLU with the tanh GELU, heads of 256 unless the config
// says, attention scores scaled by query_pre_attn_scalar^-1/2, embeddings scaled by √hidden,
// tied output. Its layers alternate: sliding-window layers on their own rotary base
// (rope_local_base_freq, no scaling), and every sliding_window_pattern-th layer attending to
// everything on rope_theta with any rope_scaling; a 5.x config lists layer_types and nests
// rope_parameters by layer type instead.
void readGemma3(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c, "hidden_activation", QStringLiteral("gelu_pytorch_tanh"),
                  {Activation::GeluTanh, Activation::Gelu});
    c.headDim = k.count({"head_dim"}, 256);
    c.maxPositions = k.count({"max_position_embeddings"}, 131072);
    c.tieEmbeddings = k.flag("tie_word_embeddings", true);
    c.attnScale = 1.0 / std::sqrt(k.number("query_pre_attn_scalar", 256));
    c.embedScale = std::sqrt(double(c.hidden));
    c.embedScaleInDtype = true;
    c.attnSoftcap = k.number("attn_logit_softcapping", 0);
    c.finalSoftcap = k.number("final_logit_softcapping", 0);
    c.rope = k.rope(1000000.0, "full_attention");
    c.localRope = k.rope(k.number("rope_local_base_freq", 10000.0), "sliding_attention", false);
    c.slidingWindow = k.count({"sliding_window"}, 4096);
    if (k.json().value(QLatin1String("layer_types")).isArray()) {
        readSlidingLayers(k, c, 0);
    } else {
        const int64_t pattern = k.count({"sliding_window_pattern"}, 6);
        c.sliding.assign(size_t(std::max<int64_t>(c.layers, 0)), 0);
        for (int64_t i = 0; pattern > 0 && i < c.layers; ++i)
            c.sliding[size_t(i)] = (i + 1) % pattern != 0;
    }
    if (k.flag("use_bidirectional_attention", false))
        k.refuse(QStringLiteral("use_bidirectional_attention (an embedding model) is not "
                                "supported; Tandem trains causal language models"));
}

// Phi-3 (Phi-3-mini, Phi-3.5-mini, Phi-4-mini): q, k and v fused in qkv_proj and gate and up in
// gate_up_proj; only the first partial_rotary_factor of each head rotates; LongRoPE scaling;
// every layer within sliding_window where the config sets one.
void readPhi3(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    c.normEps = k.number("rms_norm_eps", 1e-5);
    c.maxPositions = k.count({"max_position_embeddings"}, 4096);
    // 5.x keeps partial_rotary_factor in rope_parameters, 4.x beside it.
    const QJsonObject params = k.json().value(QLatin1String("rope_parameters")).toObject();
    ConfigKeys inner(params, QStringLiteral("rope_parameters"));
    const double partial = params.contains(QLatin1String("partial_rotary_factor"))
                               ? inner.number("partial_rotary_factor", 1.0)
                               : k.number("partial_rotary_factor", 1.0);
    if (const Error* e = inner.error())
        k.fail(e->message);
    if (partial > 1.0)
        k.fail(QStringLiteral("partial_rotary_factor must be at most 1"));
    else if (partial < 1.0)
        c.rotaryDims = int64_t(double(c.headDim) * partial);
    const QJsonValue w = k.json().value(QLatin1String("sliding_window"));
    if (!w.isNull() && !w.isUndefined()) {
        c.slidingWindow = k.count({"sliding_window"});
        readSlidingLayers(k, c, 0);
    }
    for (const char* key : {"resid_pdrop", "embd_pdrop"})
        if (k.real(key, 0) != 0)
            k.refuse(QStringLiteral("%1 above 0 is not supported (Tandem trains Phi-3 without "
                                    "dropout; set it to 0.0)")
                         .arg(QLatin1String(key)));
}

// SmolLM3: Llama's equations, tied, with some layers taking no rotary positions at all:
// no_rope_layers lists 1 for each layer that rotates and 0 for each that does not, or, absent,
// every no_rope_layer_interval-th layer does not. With use_sliding_window, the layers without
// rotary positions attend within sliding_window (layer_types, where listed, says which).
void readSmolLm3(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    c.tieEmbeddings = k.flag("tie_word_embeddings", true);
    c.rope = k.rope(2000000.0);
    c.noRope.assign(size_t(std::max<int64_t>(c.layers, 0)), 0);
    const QJsonValue listed = k.json().value(QLatin1String("no_rope_layers"));
    if (listed.isArray()) {
        const QJsonArray a = listed.toArray();
        if (a.size() != c.layers) {
            k.fail(QStringLiteral("no_rope_layers lists %1 layers; num_hidden_layers is %2")
                       .arg(a.size())
                       .arg(c.layers));
            return;
        }
        for (qsizetype i = 0; i < a.size(); ++i) {
            if (!a[i].isDouble() || (a[i].toDouble() != 0 && a[i].toDouble() != 1)) {
                k.fail(QStringLiteral("no_rope_layers[%1] must be 0 or 1").arg(i));
                return;
            }
            c.noRope[size_t(i)] = a[i].toDouble() == 0;
        }
    } else {
        const int64_t interval = k.count({"no_rope_layer_interval"}, 4);
        for (int64_t i = 0; interval > 0 && i < c.layers; ++i)
            c.noRope[size_t(i)] = (i + 1) % interval == 0;
    }
    const QJsonValue w = k.json().value(QLatin1String("sliding_window"));
    if (k.flag("use_sliding_window", false) && !w.isNull() && !w.isUndefined()) {
        c.slidingWindow = k.count({"sliding_window"});
        if (k.json().value(QLatin1String("layer_types")).isArray())
            readSlidingLayers(k, c, 0);
        else
            c.sliding = c.noRope;
    }
}

// OLMo 2: no norm before attention or the MLP; instead their outputs are normalised before each
// residual add, and q and k are normalised over the whole projection, before the split into
// heads. Its RMS norms apply the weight in fp32.
void readOlmo2(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    c.normEps = k.number("rms_norm_eps", 1e-5);
}

// Granite: Llama's equations with four scales of its own: the embeddings' multiplier, the
// attention scores' (attention_multiplier, in place of 1/√head_dim), each residual branch's,
// and the logits divided by logits_scaling.
void readGranite(ConfigKeys& k, HfConfig& c) {
    readLlamaLike(k, c);
    c.embedScale = k.real("embedding_multiplier", 1.0);
    c.attnScale = k.number("attention_multiplier", 1.0);
    c.residualScale = k.real("residual_multiplier", 1.0);
    c.logitsDivisor = k.number("logits_scaling", 1.0);
}

// ---- layouts ----------------------------------------------------------------------------------

// Llama's layout, which most families share or start from, under the given names.
Family llamaLayout(const char* modelType, const char* architecture, const char* title,
                   void (*readConfig)(ConfigKeys&, HfConfig&)) {
    Family f;
    f.modelType = modelType;
    f.architecture = architecture;
    f.title = title;
    f.readConfig = readConfig;
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
    return llamaLayout("llama", "LlamaForCausalLM", "Llama", readLlama);
}

// Qwen2: Llama's layout with q/k/v biases (readQwen2).
Family qwen2() {
    return llamaLayout("qwen2", "Qwen2ForCausalLM", "Qwen2", readQwen2);
}

// Mistral: Llama's layout with a sliding window (readMistral).
Family mistral() {
    return llamaLayout("mistral", "MistralForCausalLM", "Mistral", readMistral);
}

// Qwen3: Llama's layout with a per-head RMS norm of the queries and of the keys, over each
// head's dimensions, before the rotation (block.cpp applies any family's q/k norms).
Family qwen3() {
    Family f = llamaLayout("qwen3", "Qwen3ForCausalLM", "Qwen3", readQwen3);
    f.names[size_t(Role::QNorm)] = "model.layers.%1.self_attn.q_norm";
    f.names[size_t(Role::KNorm)] = "model.layers.%1.self_attn.k_norm";
    return f;
}

// Gemma 3's text model: a norm before and after attention and before and after the MLP, all of
// the (1 + w) kind, and per-head q/k norms.
Family gemma3() {
    Family f = llamaLayout("gemma3_text", "Gemma3ForCausalLM", "Gemma 3", readGemma3);
    f.norm = NormKind::RmsOnePlus;
    f.names[size_t(Role::QNorm)] = "model.layers.%1.self_attn.q_norm";
    f.names[size_t(Role::KNorm)] = "model.layers.%1.self_attn.k_norm";
    f.names[size_t(Role::PostAttnNorm)] = "model.layers.%1.post_attention_layernorm";
    f.names[size_t(Role::MlpNorm)] = "model.layers.%1.pre_feedforward_layernorm";
    f.names[size_t(Role::PostMlpNorm)] = "model.layers.%1.post_feedforward_layernorm";
    return f;
}

// Phi-3: fused q/k/v and gate/up projections, which adapters target as PEFT names them.
Family phi3() {
    Family f = llamaLayout("phi3", "Phi3ForCausalLM", "Phi-3", readPhi3);
    for (Role r : {Role::Q, Role::K, Role::V, Role::Gate, Role::Up})
        f.names[size_t(r)] = nullptr;
    f.names[size_t(Role::Qkv)] = "model.layers.%1.self_attn.qkv_proj";
    f.names[size_t(Role::GateUp)] = "model.layers.%1.mlp.gate_up_proj";
    f.loraTargets = {QStringLiteral("qkv_proj"), QStringLiteral("o_proj"),
                     QStringLiteral("gate_up_proj"), QStringLiteral("down_proj")};
    f.defaultTargets = {QStringLiteral("qkv_proj"), QStringLiteral("o_proj")};
    return f;
}

// SmolLM3: Llama's layout (readSmolLm3 says which layers rotate).
Family smollm3() {
    return llamaLayout("smollm3", "SmolLM3ForCausalLM", "SmolLM3", readSmolLm3);
}

// OLMo 2: norms after attention and after the MLP in place of Llama's before them, and q/k
// norms over the whole projection.
Family olmo2() {
    Family f = llamaLayout("olmo2", "Olmo2ForCausalLM", "OLMo 2", readOlmo2);
    f.norm = NormKind::RmsWeightInFloat;
    f.qkNormPerHead = false;
    f.names[size_t(Role::AttnNorm)] = nullptr;
    f.names[size_t(Role::MlpNorm)] = nullptr;
    f.names[size_t(Role::QNorm)] = "model.layers.%1.self_attn.q_norm";
    f.names[size_t(Role::KNorm)] = "model.layers.%1.self_attn.k_norm";
    f.names[size_t(Role::PostAttnNorm)] = "model.layers.%1.post_attention_layernorm";
    f.names[size_t(Role::PostMlpNorm)] = "model.layers.%1.post_feedforward_layernorm";
    return f;
}

// Granite: Llama's layout (readGranite reads its scales).
Family granite() {
    return llamaLayout("granite", "GraniteForCausalLM", "Granite", readGranite);
}

const std::vector<Family>& families() {
    static const std::vector<Family> table{gpt2(),   llama(), qwen2(),   mistral(), qwen3(),
                                           gemma3(), phi3(),  smollm3(), olmo2(),   granite()};
    return table;
}

} // namespace

const Family* familyOf(const QString& modelType) {
    for (const Family& f : families())
        if (modelType == QLatin1String(f.modelType))
            return &f;
    return nullptr;
}

bool hfAdapterLayers(const QString& dir, QStringList* layers, QStringList* defaults) {
    QFile f(QDir(dir).filePath(QStringLiteral("config.json")));
    if (f.size() > (4 << 20) || !f.open(QIODevice::ReadOnly))
        return false;
    const QJsonObject config = QJsonDocument::fromJson(f.readAll()).object();
    const Family* family = familyOf(config.value(QStringLiteral("model_type")).toString());
    if (!family) // a multimodal wrapper's text model
        family = familyOf(config.value(QStringLiteral("text_config"))
                              .toObject()
                              .value(QStringLiteral("model_type"))
                              .toString());
    if (!family)
        return false;
    *layers = family->loraTargets;
    *defaults = family->defaultTargets;
    return true;
}

QString hfFamilyTitles() {
    QStringList names;
    for (const Family& f : families())
        names << QLatin1String(f.title);
    return names.join(QStringLiteral(", "));
}

QString supportedHfArchitectures() {
    QStringList names;
    for (const Family& f : families())
        names << QLatin1String(f.architecture);
    return names.join(QStringLiteral(", "));
}

} // namespace tandem
