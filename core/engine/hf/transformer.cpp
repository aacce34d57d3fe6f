#include "engine/hf/transformer.h"

#include "engine/scriptmodel.h"
#include "engine/torchcompat.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>

#include <cmath>
#include <cstring>

namespace tandem {

namespace {

using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (int64_t d : shape)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

Shapes gpt2Tensors(const HfConfig& c) {
    const int64_t h = c.hidden, f = c.intermediate;
    Shapes s{{"transformer.wte.weight", {c.vocab, h}},
             {"transformer.wpe.weight", {c.maxPositions, h}}};
    for (int64_t i = 0; i < c.layers; ++i) {
        const std::string b = "transformer.h." + std::to_string(i) + ".";
        s.push_back({b + "ln_1.weight", {h}});
        s.push_back({b + "ln_1.bias", {h}});
        s.push_back({b + "attn.c_attn.weight", {h, 3 * h}});
        s.push_back({b + "attn.c_attn.bias", {3 * h}});
        s.push_back({b + "attn.c_proj.weight", {h, h}});
        s.push_back({b + "attn.c_proj.bias", {h}});
        s.push_back({b + "ln_2.weight", {h}});
        s.push_back({b + "ln_2.bias", {h}});
        s.push_back({b + "mlp.c_fc.weight", {h, f}});
        s.push_back({b + "mlp.c_fc.bias", {f}});
        s.push_back({b + "mlp.c_proj.weight", {f, h}});
        s.push_back({b + "mlp.c_proj.bias", {h}});
    }
    s.push_back({"transformer.ln_f.weight", {h}});
    s.push_back({"transformer.ln_f.bias", {h}});
    return s;
}

Shapes llamaTensors(const HfConfig& c) {
    const int64_t h = c.hidden, q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
    const int64_t f = c.intermediate;
    Shapes s{{"model.embed_tokens.weight", {c.vocab, h}}};
    for (int64_t i = 0; i < c.layers; ++i) {
        const std::string b = "model.layers." + std::to_string(i) + ".";
        s.push_back({b + "input_layernorm.weight", {h}});
        s.push_back({b + "self_attn.q_proj.weight", {q, h}});
        s.push_back({b + "self_attn.k_proj.weight", {kv, h}});
        s.push_back({b + "self_attn.v_proj.weight", {kv, h}});
        if (c.qkvBias) {
            s.push_back({b + "self_attn.q_proj.bias", {q}});
            s.push_back({b + "self_attn.k_proj.bias", {kv}});
            s.push_back({b + "self_attn.v_proj.bias", {kv}});
        }
        s.push_back({b + "self_attn.o_proj.weight", {h, q}});
        if (c.oBias)
            s.push_back({b + "self_attn.o_proj.bias", {h}});
        s.push_back({b + "post_attention_layernorm.weight", {h}});
        s.push_back({b + "mlp.gate_proj.weight", {f, h}});
        s.push_back({b + "mlp.up_proj.weight", {f, h}});
        s.push_back({b + "mlp.down_proj.weight", {h, f}});
        if (c.mlpBias) {
            s.push_back({b + "mlp.gate_proj.bias", {f}});
            s.push_back({b + "mlp.up_proj.bias", {f}});
            s.push_back({b + "mlp.down_proj.bias", {h}});
        }
    }
    s.push_back({"model.norm.weight", {h}});
    if (!c.tieEmbeddings)
        s.push_back({"lm_head.weight", {c.vocab, h}});
    return s;
}

// The folder's name for a tensor, as the model keeps it: GPT-2 checkpoints saved from
// GPT2Model lack the "transformer." prefix.
std::string canonicalName(const HfConfig& c, const QString& name) {
    std::string n = name.toStdString();
    if (c.family == HfFamily::Gpt2 && n.rfind("transformer.", 0) != 0 && n != "lm_head.weight")
        n = "transformer." + n;
    return n;
}

// Tensors a folder may hold that the model recomputes or shares instead.
bool ignorable(const HfConfig& c, const std::string& n) {
    auto endsWith = [&](const char* tail) {
        const size_t len = std::strlen(tail);
        return n.size() >= len && n.compare(n.size() - len, len, tail) == 0;
    };
    if (c.family == HfFamily::Gpt2)
        return endsWith(".attn.bias") || endsWith(".attn.masked_bias") || n == "lm_head.weight";
    return endsWith(".rotary_emb.inv_freq") || (c.tieEmbeddings && n == "lm_head.weight");
}

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& w, double eps) {
    const at::Tensor f = x.to(at::kFloat);
    const at::Tensor normed = f * at::rsqrt(f.pow(2).mean({-1}, true) + eps);
    return w * normed.to(x.scalar_type());
}

at::Tensor rotateHalf(const at::Tensor& t) {
    const int64_t half = t.size(-1) / 2;
    return at::cat({-t.narrow(-1, half, half), t.narrow(-1, 0, half)}, -1);
}

} // namespace

HfTransformer::HfTransformer(HfConfig config)
    : m_config(std::move(config)) {}

std::vector<std::pair<std::string, std::vector<int64_t>>> HfTransformer::expectedTensors() const {
    return m_config.family == HfFamily::Gpt2 ? gpt2Tensors(m_config) : llamaTensors(m_config);
}

Status HfTransformer::load(const QList<TensorRecord>& weights) {
    NamedTensors tensors;
    tensors.reserve(size_t(weights.size()));
    for (const TensorRecord& r : weights) {
        auto t = fromRecord(r);
        if (!t)
            return t.error();
        tensors.emplace_back(r.name.toStdString(), *t);
    }
    return load(tensors);
}

Status HfTransformer::load(const NamedTensors& weights) {
    auto refuse = [](ErrorCode code, const QString& why) {
        return Error{code, why, ErrorSubject::Model};
    };
    const Shapes expected = expectedTensors();
    std::map<std::string, size_t> wanted;
    for (size_t i = 0; i < expected.size(); ++i)
        wanted[expected[i].first] = i;
    std::vector<at::Tensor> found(expected.size());
    for (const auto& [written, t] : weights) {
        const QString shown = QString::fromStdString(written);
        const std::string name = canonicalName(m_config, shown);
        auto it = wanted.find(name);
        if (it == wanted.end()) {
            if (ignorable(m_config, name))
                continue;
            return refuse(ErrorCode::Incompatible,
                          QStringLiteral("the checkpoint holds %1, which a %2 with this config "
                                         "does not have")
                              .arg(shown, m_config.architecture));
        }
        const auto& shape = expected[it->second].second;
        if (t.sizes().vec() != shape)
            return refuse(ErrorCode::Incompatible,
                          QStringLiteral("%1 is %2 in the checkpoint; this config makes it %3")
                              .arg(shown, shapeText(t.sizes().vec()), shapeText(shape)));
        if (found[it->second].defined())
            return refuse(ErrorCode::Corrupt, QStringLiteral("%1 appears twice").arg(shown));
        found[it->second] = t;
    }
    NamedTensors params;
    for (size_t i = 0; i < expected.size(); ++i) {
        if (!found[i].defined())
            return refuse(ErrorCode::Incompatible,
                          QStringLiteral("the checkpoint lacks %1 %2, which a %3 with this config "
                                         "needs")
                              .arg(QString::fromStdString(expected[i].first),
                                   shapeText(expected[i].second), m_config.architecture));
        params.emplace_back(expected[i].first, found[i].detach().set_requires_grad(true));
    }
    m_params = std::move(params);
    m_adapters.clear();
    m_lora.reset();
    reindex();
    return success();
}

HfTransformer HfTransformer::copy() const {
    HfTransformer c(m_config);
    c.m_lora = m_lora;
    c.m_training = m_training;
    c.m_checkpoint = m_checkpoint;
    at::NoGradGuard noGrad;
    for (const auto& [name, t] : m_params)
        c.m_params.emplace_back(name,
                                t.requires_grad() ? t.detach().clone().set_requires_grad(true) : t);
    c.reindex();
    return c;
}

void HfTransformer::to(const c10::Device& device) {
    at::NoGradGuard noGrad;
    for (auto& [name, t] : m_params)
        if (t.device() != device)
            t = t.detach().to(device).set_requires_grad(t.requires_grad());
    reindex();
}

void HfTransformer::convertWeights(at::ScalarType dtype) {
    at::NoGradGuard noGrad;
    for (auto& [name, t] : m_params)
        if (t.is_floating_point() && t.scalar_type() != dtype)
            t = t.detach().to(dtype).set_requires_grad(t.requires_grad());
    m_config.dtype = dtype == at::kFloat  ? DType::F32
                     : dtype == at::kHalf ? DType::F16
                                          : DType::BF16;
    m_config.source.insert(QStringLiteral("torch_dtype"),
                           dtype == at::kFloat  ? QStringLiteral("float32")
                           : dtype == at::kHalf ? QStringLiteral("float16")
                                                : QStringLiteral("bfloat16"));
    reindex();
}

const at::Tensor& HfTransformer::p(const std::string& name) const {
    return m_params[m_index.at(name)].second;
}

at::Tensor HfTransformer::logits(const at::Tensor& ids) const {
    auto refuse = [](const QString& why) { throw std::invalid_argument(why.toStdString()); };
    if (m_params.empty())
        refuse(QStringLiteral("the model's weights are not loaded"));
    if (ids.dim() != 2 || ids.scalar_type() != at::kLong)
        refuse(QStringLiteral("token ids must be an int64 [batch, length] tensor"));
    const int64_t length = ids.size(1) + (m_cache ? m_cache->length : 0);
    if (m_config.family == HfFamily::Gpt2 && length > m_config.maxPositions)
        refuse(QStringLiteral("%1 tokens is more than the model's %2 positions")
                   .arg(length)
                   .arg(m_config.maxPositions));
    if (m_config.slidingWindow > 0 && length > m_config.slidingWindow)
        throw std::domain_error(
            QStringLiteral("%1 tokens is more than the model's sliding window of %2, which "
                           "Tandem does not implement: use a shorter context")
                .arg(length)
                .arg(m_config.slidingWindow)
                .toStdString());
    if (ids.numel() > 0 &&
        (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= m_config.vocab))
        refuse(QStringLiteral("token ids must lie in [0, %1), the model's vocabulary")
                   .arg(m_config.vocab));
    ++m_forwards;
    return m_config.family == HfFamily::Gpt2 ? gpt2(ids) : llama(ids);
}

at::Tensor HfTransformer::logits(const at::Tensor& ids, KvCache& cache) const {
    struct Using {
        KvCache*& slot;
        ~Using() { slot = nullptr; }
    } using_{m_cache};
    m_cache = &cache;
    cache.keys.resize(size_t(m_config.layers));
    cache.values.resize(size_t(m_config.layers));
    at::Tensor out = logits(ids);
    cache.length += ids.size(1);
    return out;
}

std::pair<at::Tensor, at::Tensor> HfTransformer::withCache(int64_t layer, at::Tensor k,
                                                           at::Tensor v) const {
    if (!m_cache)
        return {k, v};
    at::Tensor& ck = m_cache->keys[size_t(layer)];
    at::Tensor& cv = m_cache->values[size_t(layer)];
    if (ck.defined()) {
        k = at::cat({ck, k}, 2);
        v = at::cat({cv, v}, 2);
    }
    ck = k;
    cv = v;
    return {k, v};
}

Expected<at::Tensor> HfTransformer::forward(const at::Tensor& ids) const {
    try {
        return logits(ids);
    } catch (const std::invalid_argument& e) {
        return Error{ErrorCode::InvalidArgument, QString::fromUtf8(e.what())};
    } catch (const std::domain_error& e) { // what Tandem does not build
        return Error{ErrorCode::Unsupported, QString::fromUtf8(e.what())};
    } catch (const std::exception& e) {
        return Error{isOutOfMemory(e) ? ErrorCode::OutOfMemory : ErrorCode::Runtime,
                     QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)};
    }
}

at::Tensor HfTransformer::attention(const at::Tensor& q, const at::Tensor& k,
                                    const at::Tensor& v) const {
    // q [B, H, T, D]; k and v [B, H, S, D] once grouped heads are repeated, S >= T: the last T
    // keys are the queries' own positions, the S - T before them cached ones all may see.
    const int64_t t = q.size(2), past = k.size(2) - t;
#if TANDEM_TORCH_AT_LEAST(2, 0)
    if (past == 0)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
    if (t == 1)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, false);
#endif
    const at::Tensor scores =
        at::matmul(q, k.transpose(-2, -1)).to(at::kFloat) / std::sqrt(double(q.size(-1)));
    const at::Tensor future = at::ones({t, t + past}, q.options().dtype(at::kBool)).triu(1 + past);
    const at::Tensor weights =
        at::softmax(scores.masked_fill(future, -std::numeric_limits<float>::infinity()), -1);
    return at::matmul(weights.to(q.scalar_type()), v);
}

at::Tensor HfTransformer::gpt2(const at::Tensor& ids) const {
    const HfConfig& c = m_config;
    const int64_t b = ids.size(0), t = ids.size(1), h = c.hidden;
    const at::Tensor& wte = p("transformer.wte.weight");
    const int64_t past = m_cache ? m_cache->length : 0;
    at::Tensor x = wte.index_select(0, ids.reshape({-1})).view({b, t, h}) +
                   p("transformer.wpe.weight").narrow(0, past, t);
    // GPT-2 has no rotary tables; an empty tensor stands in (autograd functions take no
    // undefined ones).
    const at::Tensor none = at::empty({0}, x.options().requires_grad(false));
    for (int64_t i = 0; i < c.layers; ++i)
        x = runBlock(i, x, none, none);
    x = at::layer_norm(x, {h}, p("transformer.ln_f.weight"), p("transformer.ln_f.bias"), c.normEps);
    return at::linear(x, wte);
}

at::Tensor HfTransformer::gpt2Block(int64_t layer, const at::Tensor& in) const {
    const HfConfig& c = m_config;
    const int64_t b = in.size(0), t = in.size(1), h = c.hidden;
    const char* gelu = c.activation == QLatin1String("gelu") ? "none" : "tanh";
    auto heads = [&](const at::Tensor& y) {
        return y.view({b, t, c.heads, c.headDim}).transpose(1, 2);
    };
    const std::string n = "transformer.h." + std::to_string(layer) + ".";
    const at::Tensor a =
        at::layer_norm(in, {h}, p(n + "ln_1.weight"), p(n + "ln_1.bias"), c.normEps);
    const auto qkv = conv1d(n + "attn.c_attn", a).split(h, -1);
    const auto [k, v] = withCache(layer, heads(qkv[1]), heads(qkv[2]));
    const at::Tensor att = attention(heads(qkv[0]), k, v).transpose(1, 2).reshape({b, t, h});
    const at::Tensor x = in + conv1d(n + "attn.c_proj", att);
    const at::Tensor m =
        at::layer_norm(x, {h}, p(n + "ln_2.weight"), p(n + "ln_2.bias"), c.normEps);
    return x + conv1d(n + "mlp.c_proj", at::gelu(conv1d(n + "mlp.c_fc", m), gelu));
}

at::Tensor HfTransformer::invFreq() const {
    const HfConfig& c = m_config;
    const int64_t half = c.headDim / 2;
    at::Tensor inv = at::empty({half}, at::kFloat);
    float* out = inv.data_ptr<float>();
    const RopeScaling& s = c.ropeScaling;
    for (int64_t i = 0; i < half; ++i) {
        double f = 1.0 / std::pow(c.ropeTheta, double(2 * i) / double(c.headDim));
        if (s.type == RopeScaling::Type::Linear) {
            f /= s.factor;
        } else if (s.type == RopeScaling::Type::Llama3) {
            // Long wavelengths are slowed by the factor, short ones kept, and those between
            // blended by where their wavelength falls.
            const double wavelen = 2 * M_PI / f;
            const double lowWavelen = double(s.originalMaxPositions) / s.lowFreqFactor;
            const double highWavelen = double(s.originalMaxPositions) / s.highFreqFactor;
            if (wavelen > lowWavelen) {
                f /= s.factor;
            } else if (wavelen >= highWavelen) {
                const double smooth = (double(s.originalMaxPositions) / wavelen - s.lowFreqFactor) /
                                      (s.highFreqFactor - s.lowFreqFactor);
                f = (1 - smooth) * f / s.factor + smooth * f;
            }
        }
        out[i] = float(f);
    }
    return inv;
}

at::Tensor HfTransformer::llama(const at::Tensor& ids) const {
    const HfConfig& c = m_config;
    const int64_t b = ids.size(0), t = ids.size(1), h = c.hidden;
    const at::Tensor& embed = p("model.embed_tokens.weight");
    at::Tensor x = embed.index_select(0, ids.reshape({-1})).view({b, t, h});
    const at::Tensor inv = invFreq().to(x.device());
    const int64_t past = m_cache ? m_cache->length : 0;
    const at::Tensor positions = at::arange(past, past + t, inv.options());
    const at::Tensor freqs = at::outer(positions, inv);
    const at::Tensor angles = at::cat({freqs, freqs}, -1);
    const at::Tensor cos = angles.cos().to(x.scalar_type()), sin = angles.sin().to(x.scalar_type());
    for (int64_t i = 0; i < c.layers; ++i)
        x = runBlock(i, x, cos, sin);
    x = rmsNorm(x, p("model.norm.weight"), c.normEps);
    return at::linear(x, c.tieEmbeddings ? embed : p("lm_head.weight"));
}

at::Tensor HfTransformer::llamaBlock(int64_t layer, const at::Tensor& in, const at::Tensor& cos,
                                     const at::Tensor& sin) const {
    const HfConfig& c = m_config;
    const int64_t b = in.size(0), t = in.size(1);
    auto rope = [&](const at::Tensor& y) { return y * cos + rotateHalf(y) * sin; };
    auto heads = [&](const at::Tensor& y, int64_t n) {
        return y.view({b, t, n, c.headDim}).transpose(1, 2);
    };
    const int64_t group = c.heads / c.kvHeads;
    const std::string n = "model.layers." + std::to_string(layer) + ".";
    const std::string a = n + "self_attn.", m = n + "mlp.";
    const at::Tensor r = rmsNorm(in, p(n + "input_layernorm.weight"), c.normEps);
    const at::Tensor q = rope(heads(linear(a + "q_proj", r, c.qkvBias), c.heads));
    auto [k, v] = withCache(layer, rope(heads(linear(a + "k_proj", r, c.qkvBias), c.kvHeads)),
                            heads(linear(a + "v_proj", r, c.qkvBias), c.kvHeads));
    if (group > 1) {
        k = k.repeat_interleave(group, 1);
        v = v.repeat_interleave(group, 1);
    }
    const at::Tensor att = attention(q, k, v).transpose(1, 2).reshape({b, t, c.heads * c.headDim});
    const at::Tensor x = in + linear(a + "o_proj", att, c.oBias);
    const at::Tensor r2 = rmsNorm(x, p(n + "post_attention_layernorm.weight"), c.normEps);
    const at::Tensor gate = at::silu(linear(m + "gate_proj", r2, c.mlpBias));
    return x + linear(m + "down_proj", gate * linear(m + "up_proj", r2, c.mlpBias), c.mlpBias);
}

at::Tensor HfTransformer::block(int64_t layer, const at::Tensor& x, const at::Tensor& cos,
                                const at::Tensor& sin, uint64_t seed) const {
    m_blockSeed = seed;
    return m_config.family == HfFamily::Gpt2 ? gpt2Block(layer, x) : llamaBlock(layer, x, cos, sin);
}

// Gradient checkpointing as an autograd function: the forward pass runs the block without
// recording it and keeps only its input; the backward pass runs it again with autograd on and
// takes the gradients of the input and of the block's trainable tensors from that graph.
struct BlockRecompute : torch::autograd::Function<BlockRecompute> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const HfTransformer* model,
                              int64_t layer, int64_t seed, const at::Tensor& x,
                              const at::Tensor& cos, const at::Tensor& sin,
                              at::TensorList /*params*/) {
        // The block's trainable tensors are arguments only so that autograd counts them as
        // inputs and asks backward for their gradients. The model outlives every backward pass
        // through it: the replica that owns it runs them.
        ctx->saved_data["model"] = int64_t(reinterpret_cast<intptr_t>(model));
        ctx->saved_data["layer"] = layer;
        ctx->saved_data["seed"] = seed;
        ctx->save_for_backward({x, cos, sin});
        return model->block(layer, x, cos, sin, uint64_t(seed));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto* model =
            reinterpret_cast<const HfTransformer*>(intptr_t(ctx->saved_data["model"].toInt()));
        const int64_t layer = ctx->saved_data["layer"].toInt();
        const auto saved = ctx->get_saved_variables();
        const at::Tensor x = saved[0].detach().requires_grad_(saved[0].requires_grad());
        at::Tensor y;
        {
            at::AutoGradMode on(true);
            y = model->block(layer, x, saved[1], saved[2],
                             uint64_t(ctx->saved_data["seed"].toInt()));
        }
        std::vector<at::Tensor> inputs;
        if (x.requires_grad())
            inputs.push_back(x);
        const auto& params = model->m_layerParams[size_t(layer)];
        inputs.insert(inputs.end(), params.begin(), params.end());
        torch::autograd::variable_list out{at::Tensor(), at::Tensor(), at::Tensor()};
        const auto g = inputs.empty()
                           ? torch::autograd::variable_list()
                           : torch::autograd::grad({y}, inputs, {grads[0]}, false, false, true);
        out.push_back(x.requires_grad() ? g[0] : at::Tensor());
        out.push_back(at::Tensor());
        out.push_back(at::Tensor());
        out.insert(out.end(), g.begin() + (x.requires_grad() ? 1 : 0), g.end());
        return out;
    }
};

at::Tensor HfTransformer::runBlock(int64_t layer, const at::Tensor& x, const at::Tensor& cos,
                                   const at::Tensor& sin) const {
    const uint64_t seed = m_forwards * 1000003ULL + uint64_t(layer);
    const auto& params = m_layerParams[size_t(layer)];
    if (!m_checkpoint || !at::GradMode::is_enabled() || (params.empty() && !x.requires_grad()))
        return block(layer, x, cos, sin, seed);
    return BlockRecompute::apply(this, layer, int64_t(seed), x, cos, sin, at::TensorList(params));
}

std::string HfTransformer::weightModule(const std::string& name) {
    const std::string suffix = ".weight";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    return name.substr(0, name.size() - suffix.size());
}

void HfTransformer::reindex() {
    m_index.clear();
    m_adapters.clear();
    for (size_t i = 0; i < m_params.size(); ++i) {
        const std::string& name = m_params[i].first;
        m_index[name] = i;
        for (const char* part : {".lora_A.weight", ".lora_B.weight"}) {
            const size_t at = name.rfind(part);
            if (at != std::string::npos && at + std::strlen(part) == name.size()) {
                Adapter& ad = m_adapters[name.substr(0, at)];
                (part[6] == 'A' ? ad.a : ad.b) = m_params[i].second;
            }
        }
    }
    m_layerParams.assign(size_t(m_config.layers), {});
    const std::string prefix =
        m_config.family == HfFamily::Gpt2 ? "transformer.h." : "model.layers.";
    for (const auto& [name, t] : m_params) {
        if (!t.requires_grad() || name.rfind(prefix, 0) != 0)
            continue;
        const size_t layer = std::stoul(name.substr(prefix.size()));
        if (layer < m_layerParams.size())
            m_layerParams[layer].push_back(t);
    }
}

at::Tensor HfTransformer::linear(const std::string& module, const at::Tensor& x, bool bias) const {
    const at::Tensor y = bias ? at::linear(x, p(module + ".weight"), p(module + ".bias"))
                              : at::linear(x, p(module + ".weight"));
    return adapted(module, x, y);
}

at::Tensor HfTransformer::conv1d(const std::string& module, const at::Tensor& x) const {
    const at::Tensor& w = p(module + ".weight");
    const at::Tensor y = at::addmm(p(module + ".bias"), x.reshape({-1, w.size(0)}), w);
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = w.size(1);
    return adapted(module, x, y.view(shape));
}

at::Tensor HfTransformer::adapted(const std::string& module, const at::Tensor& x,
                                  const at::Tensor& y) const {
    if (m_adapters.empty())
        return y;
    auto it = m_adapters.find(module);
    if (it == m_adapters.end())
        return y;
    at::Tensor in = x.to(it->second.a.scalar_type());
    if (m_training && m_lora->dropout > 0) {
        // The mask comes from the block's seed and the layer's name, so that a block computed
        // again for gradient checkpointing draws the same one.
        const double keep = 1.0 - m_lora->dropout;
        at::Generator gen = at::detail::createCPUGenerator(m_blockSeed * 0x9E3779B97F4A7C15ULL ^
                                                           std::hash<std::string>()(module));
        const at::Tensor mask = at::empty(in.sizes(), at::kFloat).bernoulli_(keep, gen);
        in = in * mask.to(in.device()) / keep;
    }
    const at::Tensor delta = at::linear(at::linear(in, it->second.a), it->second.b);
    return y + (delta * m_lora->scale()).to(y.scalar_type());
}

Status HfTransformer::addLora(const LoraConfig& lora, uint64_t seed) {
    if (m_params.empty() || m_lora)
        return Error{ErrorCode::Runtime, QStringLiteral("adapters go on a loaded model, once")};
    const QStringList valid = loraTargetsOf(m_config.family);
    for (const QString& target : lora.targets)
        if (!valid.contains(target))
            return Error{ErrorCode::InvalidArgument,
                         QStringLiteral("\"%1\" is not a linear layer of %2; adapters can target "
                                        "%3")
                             .arg(target, m_config.architecture, valid.join(QStringLiteral(", ")))};
    for (auto& [name, t] : m_params)
        t.set_requires_grad(false);
    at::Generator gen = at::detail::createCPUGenerator(seed);
    std::vector<std::pair<std::string, at::Tensor>> added;
    int adapters = 0;
    for (const auto& [name, t] : m_params) {
        const std::string module = weightModule(name);
        if (module.empty())
            continue;
        const QString leaf = QString::fromStdString(module.substr(module.rfind('.') + 1));
        if (!lora.targets.contains(leaf) || t.dim() != 2)
            continue;
        // GPT-2's Conv1D stores [in, out]; torch.nn.Linear [out, in].
        const bool conv = m_config.family == HfFamily::Gpt2;
        const int64_t in = conv ? t.size(0) : t.size(1), out = conv ? t.size(1) : t.size(0);
        const double bound = 1.0 / std::sqrt(double(in));
        Adapter ad;
        ad.a = at::empty({lora.rank, in}, at::kFloat).uniform_(-bound, bound, gen).to(t.device());
        ad.b = at::zeros({out, lora.rank}, at::TensorOptions(at::kFloat).device(t.device()));
        ad.a.set_requires_grad(true);
        ad.b.set_requires_grad(true);
        added.emplace_back(module + ".lora_A.weight", ad.a);
        added.emplace_back(module + ".lora_B.weight", ad.b);
        ++adapters;
    }
    if (adapters == 0)
        return Error{ErrorCode::InvalidArgument,
                     QStringLiteral("no layer of this model matches the adapters' targets")};
    for (auto& entry : added)
        m_params.push_back(std::move(entry));
    m_lora = lora;
    reindex();
    return success();
}

} // namespace tandem
