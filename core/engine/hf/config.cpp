#include "engine/hf/config.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <optional>

namespace tandem {

namespace {

struct Family {
    const char* modelType;
    const char* architecture;
    HfFamily family;
};
constexpr Family kFamilies[] = {
    {"gpt2", "GPT2LMHeadModel", HfFamily::Gpt2},
    {"llama", "LlamaForCausalLM", HfFamily::Llama},
    {"qwen2", "Qwen2ForCausalLM", HfFamily::Llama},
    {"mistral", "MistralForCausalLM", HfFamily::Llama},
};

Error refused(const QString& name, const QString& why) {
    return Error{ErrorCode::Unsupported, QStringLiteral("%1: %2").arg(name, why),
                 ErrorSubject::Model};
}

Error corrupt(const QString& name, const QString& why) {
    return Error{ErrorCode::Corrupt, QStringLiteral("%1: %2").arg(name, why), ErrorSubject::Model};
}

// Reads the config's keys, one message for every way a key can be wrong.
class Keys {
public:
    Keys(const QJsonObject& o, const QString& name)
        : m_o(o)
        , m_name(name) {}

    // A positive whole number, from the first of `keys` present; `fallback` when none is
    // (0: required).
    int64_t count(std::initializer_list<const char*> keys, int64_t fallback = 0) {
        for (const char* k : keys) {
            const QJsonValue v = m_o.value(QLatin1String(k));
            if (v.isUndefined() || v.isNull())
                continue;
            const double d = v.toDouble(-1);
            if (!v.isDouble() || d < 1 || d != double(int64_t(d)) || d > 1e12) {
                fail(
                    QStringLiteral("\"%1\" must be a positive whole number").arg(QLatin1String(k)));
                return 0;
            }
            return int64_t(d);
        }
        if (fallback == 0)
            fail(QStringLiteral("\"%1\" is missing").arg(QLatin1String(*keys.begin())));
        return fallback;
    }

    double number(const char* key, double fallback) {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull())
            return fallback;
        if (!v.isDouble() || !(v.toDouble() > 0)) {
            fail(QStringLiteral("\"%1\" must be a positive number").arg(QLatin1String(key)));
            return fallback;
        }
        return v.toDouble();
    }

    bool flag(const char* key, bool fallback) {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull())
            return fallback;
        if (!v.isBool())
            fail(QStringLiteral("\"%1\" must be true or false").arg(QLatin1String(key)));
        return v.toBool(fallback);
    }

    QString text(const char* key, const QString& fallback) {
        const QJsonValue v = m_o.value(QLatin1String(key));
        if (v.isUndefined() || v.isNull())
            return fallback;
        if (!v.isString())
            fail(QStringLiteral("\"%1\" must be a string").arg(QLatin1String(key)));
        return v.toString(fallback);
    }

    // A token id or a list of them.
    QList<int64_t> tokens(const char* key) {
        QList<int64_t> out;
        const QJsonValue v = m_o.value(QLatin1String(key));
        const QJsonArray list = v.isArray() ? v.toArray() : QJsonArray{v};
        for (const QJsonValue& t : list)
            if (t.isDouble() && t.toDouble() >= 0)
                out.append(int64_t(t.toDouble()));
        return out;
    }

    const Error* error() const { return m_error ? &*m_error : nullptr; }
    void fail(const QString& why) {
        if (!m_error)
            m_error = corrupt(m_name, why);
    }
    void refuse(const QString& why) {
        if (!m_error)
            m_error = refused(m_name, why);
    }

private:
    const QJsonObject& m_o;
    QString m_name;
    std::optional<Error> m_error;
};

void readGpt2(Keys& k, HfConfig& c) {
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
    c.activation = k.text("activation_function", QStringLiteral("gelu_new"));
    if (c.activation != QLatin1String("gelu_new") &&
        c.activation != QLatin1String("gelu_pytorch_tanh") && c.activation != QLatin1String("gelu"))
        k.refuse(QStringLiteral("activation_function \"%1\" is not supported (gelu_new, "
                                "gelu_pytorch_tanh and gelu are)")
                     .arg(c.activation));
    if (!k.flag("scale_attn_weights", true))
        k.refuse(QStringLiteral("scale_attn_weights false is not supported"));
    if (k.flag("scale_attn_by_inverse_layer_idx", false))
        k.refuse(QStringLiteral("scale_attn_by_inverse_layer_idx is not supported"));
    if (!c.tieEmbeddings)
        k.refuse(QStringLiteral("GPT-2 with untied embeddings is not supported"));
}

void readRopeScaling(Keys& k, const QJsonObject& o, HfConfig& c) {
    const QJsonValue v = o.value(QLatin1String("rope_scaling"));
    if (v.isUndefined() || v.isNull())
        return;
    const QJsonObject s = v.toObject();
    Keys sk(s, QStringLiteral("rope_scaling"));
    QString type = s.value(QLatin1String("rope_type")).toString();
    if (type.isEmpty())
        type = s.value(QLatin1String("type")).toString();
    RopeScaling& r = c.ropeScaling;
    if (type == QLatin1String("default") || type.isEmpty()) {
        r.type = RopeScaling::Type::None;
    } else if (type == QLatin1String("linear")) {
        r.type = RopeScaling::Type::Linear;
        r.factor = sk.number("factor", 1.0);
    } else if (type == QLatin1String("llama3")) {
        r.type = RopeScaling::Type::Llama3;
        r.factor = sk.number("factor", 8.0);
        r.lowFreqFactor = sk.number("low_freq_factor", 1.0);
        r.highFreqFactor = sk.number("high_freq_factor", 4.0);
        r.originalMaxPositions = sk.count({"original_max_position_embeddings"}, 8192);
        if (!(r.highFreqFactor > r.lowFreqFactor))
            k.fail(QStringLiteral("rope_scaling: high_freq_factor must be above low_freq_factor"));
    } else {
        k.refuse(QStringLiteral("rope_scaling of type \"%1\" is not supported (default, linear "
                                "and llama3 are)")
                     .arg(type));
    }
    if (const Error* e = sk.error())
        k.fail(e->message);
}

void readLlama(Keys& k, const QJsonObject& o, HfConfig& c) {
    c.vocab = k.count({"vocab_size"});
    c.hidden = k.count({"hidden_size"});
    c.layers = k.count({"num_hidden_layers"});
    c.heads = k.count({"num_attention_heads"});
    c.kvHeads = k.count({"num_key_value_heads"}, std::max<int64_t>(c.heads, 1));
    c.headDim = k.count({"head_dim"}, c.heads > 0 ? std::max<int64_t>(c.hidden / c.heads, 1) : 1);
    c.intermediate = k.count({"intermediate_size"});
    c.maxPositions = k.count({"max_position_embeddings"}, 2048);
    c.normEps = k.number("rms_norm_eps", 1e-6);
    c.tieEmbeddings = k.flag("tie_word_embeddings", c.modelType == QLatin1String("qwen2"));
    const bool attentionBias = k.flag("attention_bias", false);
    // Qwen2 puts biases on q, k and v always, and none on the output projection.
    c.qkvBias = c.modelType == QLatin1String("qwen2") || attentionBias;
    c.oBias = attentionBias;
    c.mlpBias = k.flag("mlp_bias", false);
    c.activation = k.text("hidden_act", QStringLiteral("silu"));
    if (c.activation != QLatin1String("silu"))
        k.refuse(QStringLiteral("hidden_act \"%1\" is not supported (silu is)").arg(c.activation));
    c.ropeTheta = k.number("rope_theta", 10000.0);
    readRopeScaling(k, o, c);
    // Mistral's window; Qwen2's only where use_sliding_window says so.
    if (c.modelType == QLatin1String("mistral") || k.flag("use_sliding_window", false))
        c.slidingWindow = k.count({"sliding_window"}, c.maxPositions);
    if (c.heads > 0 && c.kvHeads > 0 && c.heads % c.kvHeads != 0)
        k.fail(QStringLiteral("num_attention_heads (%1) is not a multiple of num_key_value_heads "
                              "(%2)")
                   .arg(c.heads)
                   .arg(c.kvHeads));
    if (o.value(QLatin1String("pretraining_tp")).toInt(1) > 1)
        k.refuse(QStringLiteral("pretraining_tp above 1 is not supported"));
}

} // namespace

QString supportedHfArchitectures() {
    QStringList names;
    for (const Family& f : kFamilies)
        names << QLatin1String(f.architecture);
    return names.join(QStringLiteral(", "));
}

int64_t HfConfig::parameterCount() const {
    const int64_t embed = vocab * hidden;
    const int64_t output = tieEmbeddings ? 0 : vocab * hidden;
    if (family == HfFamily::Gpt2) {
        const int64_t block = 2 * 2 * hidden                     // two LayerNorms
                              + hidden * 3 * hidden + 3 * hidden // c_attn
                              + hidden * hidden + hidden         // attn.c_proj
                              + hidden * intermediate + intermediate + intermediate * hidden +
                              hidden;
        return embed + maxPositions * hidden + layers * block + 2 * hidden + output;
    }
    const int64_t q = heads * headDim, kv = kvHeads * headDim;
    const int64_t attn = hidden * q + 2 * hidden * kv + q * hidden + (qkvBias ? q + 2 * kv : 0) +
                         (oBias ? hidden : 0);
    const int64_t mlp = 3 * hidden * intermediate + (mlpBias ? 2 * intermediate + hidden : 0);
    return embed + layers * (attn + mlp + 2 * hidden) + hidden + output;
}

Expected<HfConfig> parseHfConfig(const QByteArray& json, const QString& name) {
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &perr);
    if (!doc.isObject())
        return corrupt(name, QStringLiteral("not a JSON object (%1)").arg(perr.errorString()));
    const QJsonObject o = doc.object();
    HfConfig c;
    c.source = o;
    c.modelType = o.value(QLatin1String("model_type")).toString();
    const QJsonArray archs = o.value(QLatin1String("architectures")).toArray();
    const Family* family = nullptr;
    for (const Family& f : kFamilies)
        if (c.modelType == QLatin1String(f.modelType))
            family = &f;
    if (!family)
        return refused(name, QStringLiteral("model_type \"%1\" is not supported; Tandem builds %2")
                                 .arg(c.modelType, supportedHfArchitectures()));
    c.family = family->family;
    c.architecture = QLatin1String(family->architecture);
    for (const QJsonValue& a : archs)
        if (a.toString() != c.architecture)
            return refused(name, QStringLiteral("architecture \"%1\" is not supported; Tandem "
                                                "builds %2")
                                     .arg(a.toString(), supportedHfArchitectures()));
    Keys k(o, name);
    if (c.family == HfFamily::Gpt2)
        readGpt2(k, c);
    else
        readLlama(k, o, c);
    if (c.family == HfFamily::Gpt2 && c.heads > 0) {
        if (c.hidden % c.heads != 0)
            k.fail(QStringLiteral("n_embd (%1) is not a multiple of n_head (%2)")
                       .arg(c.hidden)
                       .arg(c.heads));
        c.headDim = c.hidden / c.heads;
    }
    if (c.family == HfFamily::Llama && c.headDim % 2 != 0)
        k.fail(QStringLiteral("head_dim (%1) must be even for rotary embeddings").arg(c.headDim));
    QString dtype = k.text("torch_dtype", k.text("dtype", QStringLiteral("float32")));
    if (dtype == QLatin1String("float32"))
        c.dtype = DType::F32;
    else if (dtype == QLatin1String("float16"))
        c.dtype = DType::F16;
    else if (dtype == QLatin1String("bfloat16"))
        c.dtype = DType::BF16;
    else
        k.refuse(QStringLiteral("torch_dtype \"%1\" is not supported (float32, float16 and "
                                "bfloat16 are)")
                     .arg(dtype));
    c.bosTokens = k.tokens("bos_token_id");
    c.eosTokens = k.tokens("eos_token_id");
    if (const Error* e = k.error())
        return *e;
    return c;
}

Expected<HfConfig> readHfConfig(const QString& dir) {
    const QString path = dir + QStringLiteral("/config.json");
    QFile f(path);
    if (!f.exists())
        return Error{ErrorCode::NotFound,
                     QStringLiteral("%1 has no config.json: a Hugging Face model folder holds "
                                    "config.json and model.safetensors")
                         .arg(dir),
                     ErrorSubject::Model};
    if (!f.open(QIODevice::ReadOnly) || f.size() > (16 << 20))
        return Error{ErrorCode::Io, QStringLiteral("cannot read %1").arg(path),
                     ErrorSubject::Model};
    return parseHfConfig(f.readAll(), path);
}

} // namespace tandem
