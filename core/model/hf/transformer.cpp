#include "model/hf/transformer.h"

#include "model/hf/block.h"
#include "model/hf/weights.h"
#include "model/torchcompat.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tandem {

namespace {

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (int64_t d : shape)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

// A role's name in block `layer` ("%1" replaced), or its one name.
std::string nameOf(const Family& f, Role r, int64_t layer) {
    std::string n = f.name(r);
    const size_t at = n.find("%1");
    return at == std::string::npos ? n : n.replace(at, 2, std::to_string(layer));
}

bool endsWith(const std::string& s, const char* tail) {
    const size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// The folder's name for a tensor as the model keeps it: a base model's own checkpoint (GPT2Model,
// LlamaModel) lacks the causal-LM wrapper's prefix.
std::string canonicalName(const Family& f, const std::string& n) {
    const std::string prefix = f.basePrefix;
    if (n.rfind(prefix, 0) == 0 || n == "lm_head.weight")
        return n;
    return prefix + n;
}

// Tensors a folder may hold that the model recomputes or shares instead.
bool ignorable(const HfConfig& c, const std::string& n) {
    if (n == "lm_head.weight" && c.tieEmbeddings)
        return true;
    return endsWith(n, ".attn.bias") || endsWith(n, ".attn.masked_bias") ||
           endsWith(n, ".rotary_emb.inv_freq");
}

} // namespace

// ---- the model ---------------------------------------------------------------------------------

struct HfTransformer::RotaryCache {
    using Key = std::tuple<bool, int64_t, int64_t, int, int, int>;
    std::mutex mutex;
    std::map<Key, RotaryPair> tables;
};

HfTransformer::HfTransformer(HfConfig config)
    : m_config(std::move(config))
    , m_rotary(std::make_shared<RotaryCache>()) {}

RotaryPair HfTransformer::rotaryFor(bool local, int64_t past, int64_t t,
                                    const at::Tensor& like) const {
    const RotaryCache::Key key{local,
                               past,
                               t,
                               int(like.device().type()),
                               int(like.device().index()),
                               int(like.scalar_type())};
    std::lock_guard<std::mutex> lock(m_rotary->mutex);
    auto it = m_rotary->tables.find(key);
    if (it != m_rotary->tables.end())
        return it->second;
    // Generation asks for every length in turn: the cache keeps a few.
    if (m_rotary->tables.size() >= 16)
        m_rotary->tables.clear();
    at::NoGradGuard noGrad;
    const Rope& rope = local ? *m_config.localRope : m_config.rope;
    RotaryPair r = rotaryTables(rope, m_config.rotated(), past, t, like);
    m_rotary->tables.emplace(key, r);
    return r;
}

std::string weightModule(const std::string& name) {
    return endsWith(name, ".weight") && name.size() > 7 ? name.substr(0, name.size() - 7)
                                                        : std::string();
}

HfTransformer::Shapes HfTransformer::expectedTensors() const {
    const HfConfig& c = m_config;
    const Family& f = *c.family;
    const int64_t h = c.hidden, hd = c.headDim, q = c.heads * hd, kv = c.kvHeads * hd;
    const int64_t ff = c.intermediate;
    Shapes s;
    // A linear layer of [out, in] (stored [in, out] by Conv1D families), its bias after it or,
    // with `biasesLater`, after its siblings' weights (Llama's order: q, k, v, then their biases).
    auto linear = [&](Role r, int64_t layer, int64_t out, int64_t in, bool bias, Shapes* later) {
        if (!f.has(r))
            return;
        const std::string m = nameOf(f, r, layer);
        s.push_back({m + ".weight",
                     f.conv1d ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in}});
        if (bias)
            (later ? *later : s).push_back({m + ".bias", {out}});
    };
    auto normOf = [&](Role r, int64_t layer, int64_t dims) {
        if (!f.has(r))
            return;
        const std::string m = nameOf(f, r, layer);
        s.push_back({m + ".weight", {dims}});
        if (f.norm == NormKind::LayerNorm)
            s.push_back({m + ".bias", {dims}});
    };
    s.push_back({f.name(Role::Embed), {c.vocab, h}});
    if (f.has(Role::Positions))
        s.push_back({f.name(Role::Positions), {c.maxPositions, h}});
    for (int64_t i = 0; i < c.layers; ++i) {
        normOf(Role::AttnNorm, i, h);
        Shapes later;
        if (f.has(Role::Qkv)) {
            linear(Role::Qkv, i, q + 2 * kv, h, c.qkvBias, nullptr);
        } else {
            linear(Role::Q, i, q, h, c.qkvBias, &later);
            linear(Role::K, i, kv, h, c.qkvBias, &later);
            linear(Role::V, i, kv, h, c.qkvBias, &later);
            s.insert(s.end(), later.begin(), later.end());
        }
        linear(Role::O, i, h, q, c.oBias, nullptr);
        normOf(Role::QNorm, i, f.qkNormPerHead ? hd : q);
        normOf(Role::KNorm, i, f.qkNormPerHead ? hd : kv);
        normOf(Role::PostAttnNorm, i, h);
        normOf(Role::MlpNorm, i, h);
        later.clear();
        if (f.gatedMlp && f.has(Role::GateUp)) {
            linear(Role::GateUp, i, 2 * ff, h, c.mlpBias, nullptr);
        } else if (f.gatedMlp) {
            linear(Role::Gate, i, ff, h, c.mlpBias, &later);
            linear(Role::Up, i, ff, h, c.mlpBias, &later);
        } else {
            linear(Role::Up, i, ff, h, c.mlpBias, nullptr);
        }
        linear(Role::Down, i, h, ff, c.mlpBias, f.gatedMlp ? &later : nullptr);
        s.insert(s.end(), later.begin(), later.end());
        normOf(Role::PostMlpNorm, i, h);
    }
    normOf(Role::FinalNorm, 0, h);
    if (!c.tieEmbeddings && f.has(Role::LmHead))
        s.push_back({f.name(Role::LmHead), {c.vocab, h}});
    return s;
}

int64_t HfTransformer::parameterCount() const {
    int64_t n = 0;
    for (const auto& [name, shape] : expectedTensors()) {
        int64_t e = 1;
        for (int64_t d : shape)
            e *= d;
        n += e;
    }
    return n;
}

Status HfTransformer::load(const NamedTensors& weights) {
    auto refuse = [](ErrorCode code, const QString& why) {
        return Error{code, why, ErrorSubject::Model};
    };
    const Shapes expected = expectedTensors();
    std::map<std::string, size_t> wanted;
    for (size_t i = 0; i < expected.size(); ++i)
        wanted[expected[i].first] = i;
    const std::vector<std::string> linearNames = linearWeights();
    const std::set<std::string> linear(linearNames.begin(), linearNames.end());
    std::vector<at::Tensor> found(expected.size());
    // The parts of quantized weights (bitsandbytes' absmax, quant_map, …), read with them.
    std::map<std::string, at::Tensor> parts;
    for (const auto& [written, t] : weights) {
        const QString shown = QString::fromStdString(written);
        const std::string name = canonicalName(*m_config.family, written);
        auto it = wanted.find(name);
        if (it == wanted.end()) {
            if (isBnbCompanion(name)) {
                if (!parts.emplace(name, t).second)
                    return refuse(ErrorCode::Corrupt,
                                  QStringLiteral("%1 appears twice").arg(shown));
                continue;
            }
            if (ignorable(m_config, name))
                continue;
            return refuse(ErrorCode::Incompatible,
                          QStringLiteral("the weights hold %1, which a %2 with this config "
                                         "does not have")
                              .arg(shown, m_config.architecture));
        }
        const auto& shape = expected[it->second].second;
        const bool quantized = isQuantizedWeight(name, t);
        if (quantized && !linear.count(name))
            return refuse(ErrorCode::Incompatible,
                          QStringLiteral("%1 is quantized; Tandem reads quantized weights in the "
                                         "blocks' linear layers only")
                              .arg(shown));
        if (!quantized && t.sizes().vec() != shape)
            return refuse(ErrorCode::Incompatible,
                          QStringLiteral("%1 is %2 in the weights; this config makes it %3")
                              .arg(shown, shapeText(t.sizes().vec()), shapeText(shape)));
        if (found[it->second].defined())
            return refuse(ErrorCode::Corrupt, QStringLiteral("%1 appears twice").arg(shown));
        found[it->second] = t;
    }
    NamedTensors params;
    for (size_t i = 0; i < expected.size(); ++i) {
        const auto& [name, shape] = expected[i];
        if (!found[i].defined())
            return refuse(
                ErrorCode::Incompatible,
                QStringLiteral("the weights lack %1 %2, which a %3 with this config needs")
                    .arg(QString::fromStdString(name), shapeText(shape), m_config.architecture));
        if (!isQuantizedWeight(name, found[i])) {
            params.emplace_back(name, found[i].detach().set_requires_grad(true));
            continue;
        }
        // A quantized weight is [out, in] whatever the family stores.
        std::vector<int64_t> own = shape;
        if (m_config.family->conv1d)
            std::swap(own[0], own[1]);
        parts[name] = found[i];
        auto q = readBnb(name, parts, own);
        if (!q)
            return q.error();
        for (auto& [part, t] : bnbTensors(name, *q)) {
            parts.erase(part);
            params.emplace_back(part, t.detach());
        }
        parts.erase(name.substr(0, name.size() - 6) + "weight_format");
    }
    if (!parts.empty())
        return refuse(ErrorCode::Incompatible,
                      QStringLiteral("the checkpoint holds %1, a part of a quantized weight, "
                                     "beside no quantized weight it belongs to")
                          .arg(QString::fromStdString(parts.begin()->first)));
    m_params = std::move(params);
    m_lora.reset();
    bind();
    return success();
}

std::vector<std::string> HfTransformer::linearWeights() const {
    const Family& f = *m_config.family;
    std::vector<std::string> out;
    for (int64_t i = 0; i < m_config.layers; ++i)
        for (Role r : {Role::Q, Role::K, Role::V, Role::Qkv, Role::O, Role::Gate, Role::Up,
                       Role::GateUp, Role::Down})
            if (f.has(r))
                out.push_back(nameOf(f, r, i) + ".weight");
    return out;
}

struct HfTransformer::Widened {
    std::mutex mutex;
    // By the base tensor, which each entry holds so that its address names no other tensor.
    std::unordered_map<const c10::TensorImpl*, std::pair<at::Tensor, at::Tensor>> fp32;
    int64_t bytes = 0;
};

at::Tensor HfTransformer::computed(const at::Tensor& t) const {
    if (!m_widened || !t.defined() || t.requires_grad() || !t.is_floating_point() ||
        t.element_size() != 2 || !t.device().is_cpu())
        return t;
    std::lock_guard<std::mutex> lock(m_widened->mutex);
    auto& [base, wide] = m_widened->fp32[t.unsafeGetTensorImpl()];
    if (!wide.defined()) {
        at::NoGradGuard noGrad;
        base = t;
        wide = t.to(at::kFloat).contiguous();
        m_widened->bytes += wide.numel() * 4;
    }
    return wide;
}

int64_t HfTransformer::widenFrozenBase() {
    if (!m_widened) {
        m_widened = std::make_shared<Widened>();
        bind();
    }
    return widenedBytes();
}

int64_t HfTransformer::widenedBytes() const {
    if (!m_widened)
        return 0;
    std::lock_guard<std::mutex> lock(m_widened->mutex);
    return m_widened->bytes;
}

int64_t HfTransformer::tiedGradientBytes() const {
    const std::shared_ptr<const BoundWeights> w = m_bound;
    if (!w || !w->embed.defined() || !w->lmHead.is_same(w->embed) || !w->embed.requires_grad())
        return 0;
    return w->embed.numel() * int64_t(w->embed.element_size());
}

void HfTransformer::bind() {
    auto w = std::make_shared<BoundWeights>();
    w->config = m_config;
    w->conv1d = m_config.family->conv1d;
    if (m_lora) {
        w->loraScale = m_lora->scale();
        w->loraDropout = m_lora->dropout;
    }
    std::map<std::string, at::Tensor> byName(m_params.begin(), m_params.end());
    auto tensor = [&](const std::string& n) {
        auto it = byName.find(n);
        return it == byName.end() ? at::Tensor() : computed(it->second);
    };
    const Family& f = *m_config.family;
    auto normOf = [&](Role r, int64_t layer) {
        if (!f.has(r))
            return BoundNorm{};
        const std::string m = nameOf(f, r, layer);
        return BoundNorm{tensor(m + ".weight"), tensor(m + ".bias")};
    };
    auto linearOf = [&](Role r, int64_t layer) {
        BoundLinear l;
        if (!f.has(r))
            return l;
        const std::string m = nameOf(f, r, layer);
        auto it = byName.find(m + ".weight");
        if (it != byName.end() && isQuantizedWeight(it->first, it->second)) {
            auto q = readBnb(it->first, byName, {});
            if (!q) // load() read it already
                throw std::runtime_error(q.error().message.toStdString());
            l.quant = std::make_shared<const QuantizedWeight>(std::move(*q));
        } else {
            l.weight = tensor(m + ".weight");
        }
        l.bias = tensor(m + ".bias");
        l.loraA = tensor(m + ".lora_A.weight");
        l.loraB = tensor(m + ".lora_B.weight");
        l.id = std::hash<std::string>()(m);
        return l;
    };
    w->embed = tensor(f.name(Role::Embed));
    if (f.has(Role::Positions))
        w->positions = tensor(f.name(Role::Positions));
    w->lmHead =
        m_config.tieEmbeddings || !f.has(Role::LmHead) ? w->embed : tensor(f.name(Role::LmHead));
    w->finalNorm = normOf(Role::FinalNorm, 0);
    const std::string pattern = f.name(Role::O); // every family has one
    const std::string layerStart = pattern.substr(0, pattern.find("%1"));
    for (int64_t i = 0; i < m_config.layers; ++i) {
        BoundLayer l;
        l.attnNorm = normOf(Role::AttnNorm, i);
        l.q = linearOf(Role::Q, i), l.k = linearOf(Role::K, i), l.v = linearOf(Role::V, i);
        l.qkv = linearOf(Role::Qkv, i), l.o = linearOf(Role::O, i);
        l.qNorm = normOf(Role::QNorm, i), l.kNorm = normOf(Role::KNorm, i);
        l.postAttnNorm = normOf(Role::PostAttnNorm, i);
        l.mlpNorm = normOf(Role::MlpNorm, i);
        l.gate = linearOf(Role::Gate, i), l.up = linearOf(Role::Up, i);
        l.gateUp = linearOf(Role::GateUp, i), l.down = linearOf(Role::Down, i);
        l.postMlpNorm = normOf(Role::PostMlpNorm, i);
        // The block's own trainable tensors: the names under its prefix ("model.layers.3.").
        const std::string prefix = layerStart + std::to_string(i) + ".";
        for (const auto& [name, t] : m_params)
            if (t.requires_grad() && name.rfind(prefix, 0) == 0)
                l.trainable.push_back(t);
        w->layers.push_back(std::move(l));
    }
    m_bound = std::move(w);
}

HfTransformer HfTransformer::copy() const {
    HfTransformer c(m_config);
    c.m_lora = m_lora;
    c.m_checkpoint = m_checkpoint;
    c.m_widened = m_widened;
    at::NoGradGuard noGrad;
    for (const auto& [name, t] : m_params)
        c.m_params.emplace_back(name,
                                t.requires_grad() ? t.detach().clone().set_requires_grad(true) : t);
    c.bind();
    return c;
}

void HfTransformer::to(const c10::Device& device) {
    at::NoGradGuard noGrad;
    for (auto& [name, t] : m_params)
        if (t.device() != device)
            t = t.detach().to(device).set_requires_grad(t.requires_grad());
    bind();
}

void HfTransformer::convertWeights(at::ScalarType dtype) {
    at::NoGradGuard noGrad;
    for (auto& [name, t] : m_params)
        if (t.is_floating_point() && t.scalar_type() != dtype && !isBnbCompanion(name))
            t = t.detach().to(dtype).set_requires_grad(t.requires_grad());
    m_config.dtype = dtype == at::kFloat  ? DType::F32
                     : dtype == at::kHalf ? DType::F16
                                          : DType::BF16;
    m_config.source.insert(QStringLiteral("torch_dtype"),
                           dtype == at::kFloat  ? QStringLiteral("float32")
                           : dtype == at::kHalf ? QStringLiteral("float16")
                                                : QStringLiteral("bfloat16"));
    bind();
}

at::Tensor HfTransformer::logits(const at::Tensor& ids, const Pass& pass) const {
    auto refuse = [](const QString& why) { throw std::invalid_argument(why.toStdString()); };
    if (!m_bound)
        refuse(QStringLiteral("the model's weights are not loaded"));
    if (ids.dim() != 2 || ids.scalar_type() != at::kLong)
        refuse(QStringLiteral("token ids must be an int64 [batch, length] tensor"));
    const std::shared_ptr<const BoundWeights> bound = m_bound;
    const BoundWeights& w = *bound;
    const HfConfig& c = m_config;
    const int64_t b = ids.size(0), t = ids.size(1), h = c.hidden;
    const int64_t past = pass.cache ? pass.cache->length : 0;
    if (c.positionLimit() > 0 && past + t > c.positionLimit())
        refuse(QStringLiteral("%1 tokens is more than the model's %2 positions")
                   .arg(past + t)
                   .arg(c.positionLimit()));
    // Checked where the ids are in the host's memory: on a device the check would wait for it
    // every pass, and training data is checked once, when it is read (resolveObjective()).
    if (ids.numel() > 0 && ids.device().is_cpu() &&
        (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= c.vocab))
        refuse(
            QStringLiteral("token ids must lie in [0, %1), the model's vocabulary").arg(c.vocab));
    if (pass.cache) {
        pass.cache->keys.resize(size_t(c.layers));
        pass.cache->values.resize(size_t(c.layers));
    }
    // A tied embedding's gradient comes from the output layer, whole, and from this lookup.
    // Dense, the lookup's is a second table of mostly zeros, and their sum a third (1.6 GB at
    // once for a 151,936-token vocabulary of 896 values); sparse, it is its rows alone. Kept to
    // fp32 on the CPU, where that is measured (bench/README.md).
    const bool sparseLookup = w.lmHead.is_same(w.embed) && w.embed.requires_grad() &&
                              w.embed.device().is_cpu() && w.embed.scalar_type() == at::kFloat &&
                              at::GradMode::is_enabled();
    at::Tensor x =
        at::embedding(w.embed, ids.reshape({-1}), -1, false, sparseLookup).view({b, t, h});
    if (c.embedScale != 1.0) {
        // Gemma rounds its √hidden to the weights' dtype before multiplying.
        const double scale =
            c.embedScaleInDtype
                ? at::scalar_tensor(c.embedScale, at::TensorOptions(x.scalar_type())).item<double>()
                : c.embedScale;
        x = x * scale;
    }
    if (w.positions.defined())
        x = x + w.positions.narrow(0, past, t);
    // Each rotary embedding the blocks use, once per pass.
    RotaryPair full, local;
    if (!c.family->learnedPositions) {
        full = rotaryFor(false, past, t, x);
        if (c.localRope)
            local = rotaryFor(true, past, t, x);
    }
    const bool recompute = m_checkpoint && at::GradMode::is_enabled() && !pass.cache;
    for (int64_t i = 0; i < c.layers; ++i) {
        const RotaryPair rope = !c.hasRope(i)                   ? RotaryPair{}
                                : c.isSliding(i) && c.localRope ? local
                                                                : full;
        x = runBlock(bound, i, x, rope, pass, recompute);
    }
    if (pass.cache)
        pass.cache->length += t;
    // The final norm and the output layer work position by position: the positions not asked
    // for are left out before them.
    if (pass.rows.defined() && !pass.cache)
        x = x.reshape({b * t, h}).index_select(0, pass.rows);
    x = norm(w.finalNorm, c.family->norm, x, c.normEps);
    at::Tensor out = at::linear(x, w.lmHead);
    if (c.logitsDivisor != 1.0)
        out = out / c.logitsDivisor;
    if (c.finalSoftcap > 0)
        out = at::tanh(out / c.finalSoftcap) * c.finalSoftcap;
    return out;
}

Expected<at::Tensor> HfTransformer::forward(const at::Tensor& ids, const Pass& pass) const {
    try {
        return logits(ids, pass);
    } catch (const std::invalid_argument& e) {
        return Error{ErrorCode::InvalidArgument, QString::fromUtf8(e.what())};
    } catch (const std::exception& e) {
        return Error{isOutOfMemory(e) ? ErrorCode::OutOfMemory : ErrorCode::Runtime,
                     QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)};
    }
}

int64_t HfTransformer::bytesPerSample(int64_t tokens, int64_t elem) const {
    const HfConfig& c = m_config;
    const Family& f = *c.family;
    const int64_t h = c.hidden, q = c.heads * c.headDim, kv = c.kvHeads * c.headDim;
    // Per token and block: the norms' inputs and outputs, q/k/v (rotated, with grouped keys
    // repeated), the attention output and projection, the MLP's gate, up and their product;
    // per query, the attention scores in fp32 and their softmax.
    int64_t perToken = 10 * h + 5 * q + 3 * kv + (f.gatedMlp ? 4 : 3) * c.intermediate;
    if (f.has(Role::QNorm))
        perToken += 2 * (q + kv);
    if (f.has(Role::PostAttnNorm))
        perToken += 4 * h;
    if (m_lora) {
        // A frozen layer keeps no input for its weight's gradient, and a frozen norm no output
        // for its own: only adapted layers keep their inputs (in the adapters' fp32, counted
        // at the pass's width).
        auto adapted = [&](std::initializer_list<Role> roles) {
            for (Role r : roles) {
                if (!f.has(r))
                    continue;
                const std::string n = f.name(r);
                if (m_lora->targets.contains(QString::fromStdString(n.substr(n.rfind('.') + 1))))
                    return true;
            }
            return false;
        };
        int64_t frozen = 2 * h; // the two norms' outputs
        if (f.has(Role::PostAttnNorm))
            frozen += 2 * h;
        if (f.has(Role::QNorm))
            frozen += q + kv;
        if (!adapted({Role::Q, Role::K, Role::V, Role::Qkv}))
            frozen += h;
        if (!adapted({Role::O}))
            frozen += q;
        if (!adapted({Role::Gate, Role::Up, Role::GateUp}))
            frozen += h;
        if (!adapted({Role::Down}))
            frozen += c.intermediate;
        perToken -= frozen;
    }
    const int64_t block = tokens * (perToken * elem + c.heads * tokens * 9);
    // The backward pass of a block holds, beside what the block kept, the gradients of its
    // scores and of their softmax, in fp32: all the more next to one recomputed block.
    const int64_t backward = tokens * c.heads * tokens * 8;
    const int64_t blocks =
        (m_checkpoint ? c.layers * tokens * h * elem + block : c.layers * block) + backward;
    // The logits and their gradient. Where one sample's logits are more than one of the loss's
    // parts (64 MB in fp32, engine/step/objective.h), the loss takes them a part at a time, and its
    // fp32 copies are those of one part, whatever the batch; below that, in fp32 whole: the
    // copy, its log-softmax and that one's gradient.
    const bool inParts = tokens * c.vocab * 4 > (int64_t(64) << 20);
    const int64_t logits = tokens * c.vocab * (inParts ? 2 * elem : elem + 3 * 4);
    return blocks + logits + 2 * tokens * h * elem;
}

Status HfTransformer::addLora(const LoraConfig& lora, uint64_t seed) {
    if (m_params.empty() || m_lora)
        return Error{ErrorCode::Runtime, QStringLiteral("adapters go on a loaded model, once")};
    for (auto& [name, t] : m_params)
        t.set_requires_grad(false);
    at::Generator gen = at::detail::createCPUGenerator(seed);
    NamedTensors added;
    const bool conv = m_config.family->conv1d;
    const std::map<std::string, at::Tensor> byName(m_params.begin(), m_params.end());
    for (const auto& [name, t] : m_params) {
        const std::string module = weightModule(name);
        if (module.empty() || t.dim() != 2)
            continue;
        const QString leaf = QString::fromStdString(module.substr(module.rfind('.') + 1));
        if (!lora.targets.contains(leaf))
            continue;
        // A Conv1D stores [in, out]; torch.nn.Linear, and every quantized weight, [out, in].
        int64_t in = conv ? t.size(0) : t.size(1), out = conv ? t.size(1) : t.size(0);
        if (isQuantizedWeight(name, t)) {
            auto q = readBnb(name, byName, {});
            if (!q)
                return q.error();
            in = q->shape[1], out = q->shape[0];
        }
        const double bound = 1.0 / std::sqrt(double(in));
        at::Tensor a =
            at::empty({lora.rank, in}, at::kFloat).uniform_(-bound, bound, gen).to(t.device());
        at::Tensor b =
            at::zeros({out, lora.rank}, at::TensorOptions(at::kFloat).device(t.device()));
        added.emplace_back(module + ".lora_A.weight", a.set_requires_grad(true));
        added.emplace_back(module + ".lora_B.weight", b.set_requires_grad(true));
    }
    if (added.empty())
        return Error{ErrorCode::InvalidArgument,
                     QStringLiteral("no layer of this model matches the adapters' targets")};
    for (auto& entry : added)
        m_params.push_back(std::move(entry));
    m_lora = lora;
    bind();
    return success();
}

} // namespace tandem
