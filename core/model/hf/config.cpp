#include "model/hf/config.h"

#include "formats/json.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>

namespace tandem {

namespace {

Error refused(const QString& name, const QString& why) {
    return Error{ErrorCode::Unsupported, QStringLiteral("%1: %2").arg(name, why),
                 ErrorSubject::Model};
}

Error corrupt(const QString& name, const QString& why) {
    return Error{ErrorCode::Corrupt, QStringLiteral("%1: %2").arg(name, why), ErrorSubject::Model};
}

// The largest size any key may give: more than any model has, and small enough that products
// of two stay far inside int64.
constexpr double kMaxCount = 1e9;

// The sizes a config may give, each beyond the largest published model's (Llama 3.1 405B: 126
// blocks 16,384 wide with a feed-forward of 53,248; Gemma 3: 262,144 tokens; contexts of
// millions), so that no file makes Tandem plan, map or allocate for a model no machine holds.
// GPT-2's configs name them otherwise (`alt`).
struct SizeCap {
    const char* key;
    const char* alt;
    int64_t max;
};
constexpr SizeCap kSizeCaps[] = {
    {"vocab_size", nullptr, int64_t(1) << 22},
    {"hidden_size", "n_embd", int64_t(1) << 16},
    {"num_hidden_layers", "n_layer", 1024},
    {"num_attention_heads", "n_head", 1024},
    {"num_key_value_heads", nullptr, 1024},
    {"head_dim", nullptr, 4096},
    {"intermediate_size", "n_inner", int64_t(1) << 20},
    {"max_position_embeddings", "n_positions", int64_t(1) << 24},
};
// A trillion weights: 2 TB in bf16, past any machine Tandem runs on.
constexpr double kMaxParameters = 1e12;

// The parameters `c` describes, counted in floating point so that no size can overflow: the
// embeddings, each block's attention and MLP, and an output layer of its own.
double parameterEstimate(const HfConfig& c) {
    const double h = double(c.hidden), q = double(c.heads) * double(c.headDim),
                 kv = double(c.kvHeads) * double(c.headDim), ff = double(c.intermediate);
    const double block = h * (q + 2 * kv) + q * h + 3 * h * ff + 4 * h;
    double n = double(c.vocab) * h + double(c.layers) * block;
    if (c.family && c.family->learnedPositions)
        n += double(c.maxPositions) * h;
    if (!c.tieEmbeddings)
        n += double(c.vocab) * h;
    return n;
}

// Sizes past the caps, refused before a family's rules read them: a count of blocks sizes
// per-block tables as it is read.
void checkSizeKeys(ConfigKeys& k) {
    for (const SizeCap& cap : kSizeCaps)
        for (const char* key : {cap.key, cap.alt}) {
            const QJsonValue v = key ? k.json().value(QLatin1String(key)) : QJsonValue();
            if (v.isDouble() && v.toDouble() > double(cap.max)) {
                k.refuse(QStringLiteral("\"%1\" is %2, more than any model has (Tandem takes up "
                                        "to %3)")
                             .arg(QLatin1String(key))
                             .arg(v.toDouble() < 1e18 && v.toDouble() == std::floor(v.toDouble())
                                      ? QString::number(qint64(v.toDouble()))
                                      : QString::number(v.toDouble(), 'g', 6))
                             .arg(cap.max));
                return;
            }
        }
}

// Sizes that each pass but together describe more weights than any machine holds.
void checkParameterCount(ConfigKeys& k, const HfConfig& c) {
    if (const double n = parameterEstimate(c); n > kMaxParameters)
        k.refuse(
            QStringLiteral("its sizes describe a model of %1 billion parameters, more than any "
                           "machine holds (Tandem takes up to %2 billion)")
                .arg(n / 1e9, 0, 'f', 0)
                .arg(kMaxParameters / 1e9, 0, 'f', 0));
}

QString activationName(Activation a) {
    switch (a) {
    case Activation::Gelu:
        return QStringLiteral("gelu");
    case Activation::GeluTanh:
        return QStringLiteral("gelu_pytorch_tanh");
    case Activation::Silu:
        return QStringLiteral("silu");
    }
    return {};
}

} // namespace

void ConfigKeys::fail(const QString& why) {
    if (!m_error)
        m_error = corrupt(m_name, why);
}

void ConfigKeys::refuse(const QString& why) {
    if (!m_error)
        m_error = refused(m_name, why);
}

int64_t ConfigKeys::count(std::initializer_list<const char*> keys, int64_t fallback) {
    for (const char* k : keys) {
        const QJsonValue v = m_o.value(QLatin1String(k));
        if (v.isUndefined() || v.isNull())
            continue;
        const double d = v.toDouble(-1);
        if (!v.isDouble() || !(d >= 1 && d <= kMaxCount) || d != double(int64_t(d))) {
            fail(QStringLiteral("\"%1\" must be a whole number from 1 to %2")
                     .arg(QLatin1String(k))
                     .arg(qint64(kMaxCount)));
            return 0;
        }
        return int64_t(d);
    }
    if (fallback == 0)
        fail(QStringLiteral("\"%1\" is missing").arg(QLatin1String(*keys.begin())));
    return fallback;
}

double ConfigKeys::number(const char* key, double fallback) {
    const QJsonValue v = m_o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return fallback;
    if (!v.isDouble() || !(v.toDouble() > 0) || !std::isfinite(v.toDouble())) {
        fail(QStringLiteral("\"%1\" must be a positive number").arg(QLatin1String(key)));
        return fallback;
    }
    return v.toDouble();
}

bool ConfigKeys::flag(const char* key, bool fallback) {
    const QJsonValue v = m_o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return fallback;
    if (!v.isBool())
        fail(QStringLiteral("\"%1\" must be true or false").arg(QLatin1String(key)));
    return v.toBool(fallback);
}

QString ConfigKeys::text(const char* key, const QString& fallback) {
    const QJsonValue v = m_o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return fallback;
    if (!v.isString())
        fail(QStringLiteral("\"%1\" must be a string").arg(QLatin1String(key)));
    return v.toString(fallback);
}

QList<int64_t> ConfigKeys::tokens(const char* key) {
    QList<int64_t> out;
    const QJsonValue v = m_o.value(QLatin1String(key));
    const QJsonArray list = v.isArray() ? v.toArray() : QJsonArray{v};
    for (const QJsonValue& t : list)
        if (t.isDouble() && t.toDouble() >= 0 && t.toDouble() < kMaxCount)
            out.append(int64_t(t.toDouble()));
    return out;
}

Activation ConfigKeys::activation(const char* key, const QString& fallback,
                                  std::initializer_list<Activation> allowed) {
    const QString name = text(key, fallback);
    // transformers' names for the two GELUs (gelu_new and gelu_pytorch_tanh are both the tanh
    // approximation).
    std::optional<Activation> a;
    if (name == QLatin1String("gelu"))
        a = Activation::Gelu;
    else if (name == QLatin1String("gelu_new") || name == QLatin1String("gelu_pytorch_tanh"))
        a = Activation::GeluTanh;
    else if (name == QLatin1String("silu") || name == QLatin1String("swish"))
        a = Activation::Silu;
    QStringList names;
    for (Activation x : allowed)
        names << activationName(x);
    if (!a || std::find(allowed.begin(), allowed.end(), *a) == allowed.end()) {
        refuse(QStringLiteral("%1 \"%2\" is not supported (%3 are)")
                   .arg(QLatin1String(key), name, names.join(QStringLiteral(", "))));
        return *allowed.begin();
    }
    return *a;
}

Rope ConfigKeys::ropeFrom(const QJsonObject& r, double theta, const QString& where) {
    Rope rope;
    ConfigKeys k(r, where);
    rope.theta = k.number("rope_theta", theta);
    QString type = r.value(QLatin1String("rope_type")).toString();
    if (type.isEmpty())
        type = r.value(QLatin1String("type")).toString();
    // Where the pretrained context ends: the rope's own key (5.x), else the config's (Phi-3's
    // 4.x configs), else max_position_embeddings.
    auto originalMax = [&](int64_t fallback) {
        if (r.contains(QLatin1String("original_max_position_embeddings")))
            return k.count({"original_max_position_embeddings"});
        return count({"original_max_position_embeddings", "max_position_embeddings"}, fallback);
    };
    if (type.isEmpty() || type == QLatin1String("default")) {
        rope.type = Rope::Type::Default;
    } else if (type == QLatin1String("linear")) {
        rope.type = Rope::Type::Linear;
        rope.factor = k.number("factor", 1.0);
    } else if (type == QLatin1String("llama3")) {
        rope.type = Rope::Type::Llama3;
        rope.factor = k.number("factor", 8.0);
        rope.lowFreqFactor = k.number("low_freq_factor", 1.0);
        rope.highFreqFactor = k.number("high_freq_factor", 4.0);
        rope.originalMaxPositions = k.count({"original_max_position_embeddings"}, 8192);
        if (!(rope.highFreqFactor > rope.lowFreqFactor))
            fail(QStringLiteral("%1: high_freq_factor must be above low_freq_factor").arg(where));
    } else if (type == QLatin1String("longrope") || type == QLatin1String("su")) {
        // LongRoPE (Phi-3, whose first configs called it "su").
        rope.type = Rope::Type::LongRope;
        rope.originalMaxPositions = originalMax(4096);
        auto factors = [&](const char* key, std::vector<double>& out) {
            const QJsonValue v = r.value(QLatin1String(key));
            for (const QJsonValue& f : v.toArray()) {
                if (!f.isDouble() || !(f.toDouble() > 0) || !std::isfinite(f.toDouble())) {
                    k.fail(QStringLiteral("\"%1\" must list positive numbers")
                               .arg(QLatin1String(key)));
                    return;
                }
                out.push_back(f.toDouble());
            }
            if (!v.isArray() || out.empty())
                k.fail(QStringLiteral("\"%1\" is missing").arg(QLatin1String(key)));
        };
        factors("short_factor", rope.shortFactors);
        factors("long_factor", rope.longFactors);
        const double maxPositions = double(count({"max_position_embeddings"}, 4096));
        rope.factor = k.number("factor", maxPositions / double(rope.originalMaxPositions));
        rope.attentionFactor = k.number(
            "attention_factor",
            rope.factor <= 1.0
                ? 1.0
                : std::sqrt(1 + std::log(rope.factor) / std::log(rope.originalMaxPositions)));
    } else {
        refuse(QStringLiteral("%1 of type \"%2\" is not supported (default, linear, llama3 and "
                              "longrope are)")
                   .arg(where, type));
    }
    if (const Error* e = k.error())
        fail(e->message);
    return rope;
}

Rope ConfigKeys::rope(double theta, const char* layerType, bool scaled) {
    const QJsonValue params = m_o.value(QLatin1String("rope_parameters"));
    if (params.isObject()) {
        const QJsonObject p = params.toObject();
        if (layerType && p.value(QLatin1String(layerType)).isObject())
            return ropeFrom(p.value(QLatin1String(layerType)).toObject(), theta,
                            QStringLiteral("rope_parameters.%1").arg(QLatin1String(layerType)));
        if (!p.contains(QLatin1String("full_attention")) &&
            !p.contains(QLatin1String("sliding_attention")))
            return ropeFrom(p, number("rope_theta", theta), QStringLiteral("rope_parameters"));
    }
    if (!scaled)
        return ropeFrom(QJsonObject{{QStringLiteral("rope_theta"), theta}}, theta,
                        QStringLiteral("the rotary embedding"));
    const QJsonValue scaling = m_o.value(QLatin1String("rope_scaling"));
    QJsonObject s = scaling.isObject() ? scaling.toObject() : QJsonObject{};
    if (!scaling.isUndefined() && !scaling.isNull() && !scaling.isObject())
        fail(QStringLiteral("\"rope_scaling\" must be an object"));
    s.insert(QStringLiteral("rope_theta"), number("rope_theta", theta));
    return ropeFrom(s, theta, QStringLiteral("rope_scaling"));
}

double ConfigKeys::real(const char* key, double fallback) {
    const QJsonValue v = m_o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return fallback;
    if (!v.isDouble() || !std::isfinite(v.toDouble())) {
        fail(QStringLiteral("\"%1\" must be a number").arg(QLatin1String(key)));
        return fallback;
    }
    return v.toDouble();
}

Expected<HfConfig> parseHfConfig(const QByteArray& json, const QString& name) {
    QJsonParseError perr;
    const QJsonDocument doc = parseJson(json, &perr);
    if (!doc.isObject())
        return corrupt(name, QStringLiteral("not a JSON object (%1)").arg(perr.errorString()));
    const QJsonObject o = doc.object();
    HfConfig c;
    c.source = o;
    c.modelType = o.value(QLatin1String("model_type")).toString();
    c.family = familyOf(c.modelType);
    if (c.modelType == QLatin1String("gemma3"))
        return refused(name, QStringLiteral("Gemma3ForConditionalGeneration (Gemma 3 with its "
                                            "vision tower: 4B and up) is not supported; Tandem "
                                            "fine-tunes Gemma 3's text-only checkpoints "
                                            "(model_type gemma3_text: gemma-3-270m, gemma-3-1b "
                                            "and their -it versions)"));
    if (!c.family)
        return refused(name, QStringLiteral("model_type \"%1\" is not supported; Tandem builds %2")
                                 .arg(c.modelType, supportedHfArchitectures()));
    c.architecture = QLatin1String(c.family->architecture);
    for (const QJsonValue& a : o.value(QLatin1String("architectures")).toArray())
        if (a.toString() != c.architecture)
            return refused(name, QStringLiteral("architecture \"%1\" is not supported; Tandem "
                                                "builds %2")
                                     .arg(a.toString(), supportedHfArchitectures()));
    ConfigKeys k(o, name);
    checkSizeKeys(k);
    if (const Error* e = k.error())
        return *e;
    c.family->readConfig(k, c);
    if (const Error* e = k.error())
        return *e;
    // What every family must satisfy.
    checkParameterCount(k, c);
    if (c.heads > 0 && c.kvHeads > 0 && c.heads % c.kvHeads != 0)
        k.fail(QStringLiteral("num_attention_heads (%1) is not a multiple of num_key_value_heads "
                              "(%2)")
                   .arg(c.heads)
                   .arg(c.kvHeads));
    if (!c.family->learnedPositions && c.headDim % 2 != 0)
        k.fail(QStringLiteral("head_dim (%1) must be even for rotary embeddings").arg(c.headDim));
    if (c.rotaryDims % 2 != 0 || c.rotaryDims > c.headDim)
        k.fail(QStringLiteral("partial_rotary_factor gives %1 rotated dimensions of each head's "
                              "%2; they must be even and no more than the head's")
                   .arg(c.rotaryDims)
                   .arg(c.headDim));
    for (const Rope* r : {&c.rope, c.localRope ? &*c.localRope : nullptr}) {
        if (!r || r->type != Rope::Type::LongRope)
            continue;
        const size_t half = size_t(c.rotated() / 2);
        if (r->shortFactors.size() != half || r->longFactors.size() != half)
            k.fail(QStringLiteral("longrope's short_factor and long_factor list %1 and %2 "
                                  "numbers; the rotated dimensions call for %3")
                       .arg(r->shortFactors.size())
                       .arg(r->longFactors.size())
                       .arg(half));
    }
    const QString dtype = k.text("torch_dtype", k.text("dtype", QStringLiteral("float32")));
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
