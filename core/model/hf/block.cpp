#include "model/hf/block.h"

#include "model/torchcompat.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>

#include <cmath>
#include <limits>

namespace tandem {

namespace {

// ---- the equations -----------------------------------------------------------------------------

at::Tensor activate(Activation a, const at::Tensor& x) {
    switch (a) {
    case Activation::Gelu:
        return at::gelu(x, "none");
    case Activation::GeluTanh:
        return at::gelu(x, "tanh");
    case Activation::Silu:
        return at::silu(x);
    }
    return x;
}

at::Tensor rotateHalf(const at::Tensor& t) {
    const int64_t half = t.size(-1) / 2;
    return at::cat({-t.narrow(-1, half, half), t.narrow(-1, 0, half)}, -1);
}

// The inverse frequencies of `rope` for `dims` rotating dimensions, scaled as its type says;
// `length` is how far the pass's positions reach (LongRoPE's long factors apply past the
// pretrained context).
at::Tensor inverseFrequencies(const Rope& rope, int64_t dims, int64_t length) {
    const int64_t half = dims / 2;
    at::Tensor inv = at::empty({half}, at::kFloat);
    float* out = inv.data_ptr<float>();
    const bool longContext = length > rope.originalMaxPositions;
    for (int64_t i = 0; i < half; ++i) {
        // As transformers computes it: the exponent and the power in fp32.
        const float exponent = float(2 * i) / float(dims);
        double f = 1.0 / double(std::pow(float(rope.theta), exponent));
        if (rope.type == Rope::Type::Linear) {
            f /= rope.factor;
        } else if (rope.type == Rope::Type::Llama3) {
            // Long wavelengths are slowed by the factor, short ones kept, and those between
            // blended by where their wavelength falls.
            const double orig = double(rope.originalMaxPositions);
            const double wavelen = 2 * M_PI / f;
            if (wavelen > orig / rope.lowFreqFactor) {
                f /= rope.factor;
            } else if (wavelen >= orig / rope.highFreqFactor) {
                const double smooth = (orig / wavelen - rope.lowFreqFactor) /
                                      (rope.highFreqFactor - rope.lowFreqFactor);
                f = (1 - smooth) * f / rope.factor + smooth * f;
            }
        } else if (rope.type == Rope::Type::LongRope) {
            const auto& factors = longContext ? rope.longFactors : rope.shortFactors;
            f = 1.0 / (factors[size_t(i)] * double(std::pow(float(rope.theta), exponent)));
        }
        out[i] = float(f);
    }
    return inv;
}

// A linear layer (torch.nn.Linear's [out, in] weight, or a Conv1D's [in, out]) with its adapter.
at::Tensor linear(const BoundWeights& w, const BoundLinear& l, const at::Tensor& x,
                  const TransformerPass& pass) {
    at::Tensor y;
    if (l.quant) {
        y = quantizedLinear(x, l.quant);
        if (l.bias.defined())
            y = y + l.bias;
    } else if (w.conv1d) {
        std::vector<int64_t> shape = x.sizes().vec();
        shape.back() = l.weight.size(1);
        const at::Tensor flat = x.reshape({-1, l.weight.size(0)});
        y = (l.bias.defined() ? at::addmm(l.bias, flat, l.weight) : at::mm(flat, l.weight))
                .view(shape);
    } else {
        y = l.bias.defined() ? at::linear(x, l.weight, l.bias) : at::linear(x, l.weight);
    }
    if (!l.loraA.defined() || !pass.adapters)
        return y;
    at::Tensor in = x.to(l.loraA.scalar_type());
    if (pass.training && w.loraDropout > 0) {
        // The mask follows from the pass's seed and the layer, so that a block computed again
        // for its backward pass draws the same one.
        const double keep = 1.0 - w.loraDropout;
        at::Generator gen =
            at::detail::createCPUGenerator(pass.seed * 0x9E3779B97F4A7C15ULL ^ l.id);
        const at::Tensor mask = at::empty(in.sizes(), at::kFloat).bernoulli_(keep, gen);
        in = in * mask.to(in.device()) / keep;
    }
    const at::Tensor delta = at::linear(at::linear(in, l.loraA), l.loraB);
    return y + (delta * w.loraScale).to(y.scalar_type());
}

// q [B, H, T, D]; k and v [B, H, S, D] once grouped heads are repeated, S >= T: the last T keys
// are the queries' own positions, the S - T before them cached ones. Causal, and with `window`
// each query sees only itself and the window - 1 tokens before it. Scores are scaled by `scale`
// (0: 1/√D) and, with `softcap`, capped as softcap·tanh(score/softcap).
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window,
                  double scale, double softcap) {
    const int64_t t = q.size(2), s = k.size(2), past = s - t;
    const bool windowed = window > 0 && s > window;
    const double factor = scale > 0 ? scale : 1.0 / std::sqrt(double(q.size(-1)));
#if TANDEM_TORCH_AT_LEAST(2, 1)
    if (!windowed && softcap == 0 && past == 0)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true, factor);
    if (!windowed && softcap == 0 && t == 1)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, false, factor);
#elif TANDEM_TORCH_AT_LEAST(2, 0)
    if (!windowed && softcap == 0 && scale == 0 && past == 0)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
    if (!windowed && softcap == 0 && scale == 0 && t == 1)
        return at::scaled_dot_product_attention(q, k, v, {}, 0.0, false);
#endif
    at::Tensor scores = at::matmul(q, k.transpose(-2, -1)).to(at::kFloat) * factor;
    if (softcap > 0)
        scores = at::tanh(scores / softcap) * softcap;
    const at::Tensor rows = at::arange(past, past + t, q.options().dtype(at::kLong)).unsqueeze(1);
    const at::Tensor cols = at::arange(0, s, q.options().dtype(at::kLong)).unsqueeze(0);
    at::Tensor blocked = cols > rows;
    if (windowed)
        blocked = blocked.logical_or(cols <= rows - window);
    const at::Tensor weights =
        at::softmax(scores.masked_fill(blocked, -std::numeric_limits<float>::infinity()), -1);
    return at::matmul(weights.to(q.scalar_type()), v);
}

// x [B, H, T, D] rotated by the pass's tables over its leading dimensions (all of them, or the
// partial rotary fraction's); the rest pass through.
at::Tensor rotate(const at::Tensor& x, const RotaryPair& rope) {
    const int64_t dims = rope.cos.size(-1), all = x.size(-1);
    if (dims == all)
        return x * rope.cos + rotateHalf(x) * rope.sin;
    const at::Tensor r = x.narrow(-1, 0, dims);
    return at::cat({r * rope.cos + rotateHalf(r) * rope.sin, x.narrow(-1, dims, all - dims)}, -1);
}

at::Tensor block(const BoundWeights& w, int64_t layer, const at::Tensor& in, const RotaryPair& rope,
                 const TransformerPass& pass) {
    const HfConfig& c = w.config;
    const Family& f = *c.family;
    const BoundLayer& l = w.layers[size_t(layer)];
    const int64_t b = in.size(0), t = in.size(1), hd = c.headDim;
    const int64_t q = c.heads * hd, kv = c.kvHeads * hd;
    auto heads = [&](const at::Tensor& y, int64_t n) {
        return y.view({b, t, n, hd}).transpose(1, 2);
    };
    const at::Tensor a = norm(l.attnNorm, f.norm, in, c.normEps);
    at::Tensor qs, ks, vs;
    if (l.qkv.defined()) {
        const auto parts = linear(w, l.qkv, a, pass).split_with_sizes({q, kv, kv}, -1);
        qs = parts[0], ks = parts[1], vs = parts[2];
    } else {
        qs = linear(w, l.q, a, pass), ks = linear(w, l.k, a, pass), vs = linear(w, l.v, a, pass);
    }
    if (l.qNorm.defined() && !f.qkNormPerHead) {
        qs = norm(l.qNorm, f.norm, qs, c.normEps);
        ks = norm(l.kNorm, f.norm, ks, c.normEps);
    }
    qs = heads(qs, c.heads), ks = heads(ks, c.kvHeads), vs = heads(vs, c.kvHeads);
    if (l.qNorm.defined() && f.qkNormPerHead) {
        qs = norm(l.qNorm, f.norm, qs, c.normEps);
        ks = norm(l.kNorm, f.norm, ks, c.normEps);
    }
    if (rope.cos.defined()) {
        qs = rotate(qs, rope);
        ks = rotate(ks, rope);
    }
    if (TransformerCache* cache = pass.cache) {
        at::Tensor& ck = cache->keys[size_t(layer)];
        at::Tensor& cv = cache->values[size_t(layer)];
        if (ck.defined()) {
            ks = at::cat({ck, ks}, 2);
            vs = at::cat({cv, vs}, 2);
        }
        ck = ks;
        cv = vs;
    }
    if (const int64_t group = c.heads / c.kvHeads; group > 1) {
        ks = ks.repeat_interleave(group, 1);
        vs = vs.repeat_interleave(group, 1);
    }
    const int64_t window = c.isSliding(layer) ? c.slidingWindow : 0;
    at::Tensor att =
        attend(qs, ks, vs, window, c.attnScale, c.attnSoftcap).transpose(1, 2).reshape({b, t, q});
    att = linear(w, l.o, att, pass);
    if (l.postAttnNorm.defined())
        att = norm(l.postAttnNorm, f.norm, att, c.normEps);
    const at::Tensor x = in + (c.residualScale != 1.0 ? att * c.residualScale : att);
    const at::Tensor m = norm(l.mlpNorm, f.norm, x, c.normEps);
    at::Tensor mlp;
    if (!f.gatedMlp) {
        mlp = linear(w, l.down, activate(c.activation, linear(w, l.up, m, pass)), pass);
    } else if (l.gateUp.defined()) {
        const auto gu = linear(w, l.gateUp, m, pass).chunk(2, -1);
        mlp = linear(w, l.down, activate(c.activation, gu[0]) * gu[1], pass);
    } else {
        mlp = linear(w, l.down,
                     activate(c.activation, linear(w, l.gate, m, pass)) * linear(w, l.up, m, pass),
                     pass);
    }
    if (l.postMlpNorm.defined())
        mlp = norm(l.postMlpNorm, f.norm, mlp, c.normEps);
    return x + (c.residualScale != 1.0 ? mlp * c.residualScale : mlp);
}

// What a quantized product keeps for its backward pass: the quantized weight, not its
// dequantized copy.
struct QuantHolder : torch::CustomClassHolder {
    explicit QuantHolder(std::shared_ptr<const QuantizedWeight> w)
        : weight(std::move(w)) {}
    std::shared_ptr<const QuantizedWeight> weight;
};

struct QuantProduct : torch::autograd::Function<QuantProduct> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                              const std::shared_ptr<const QuantizedWeight>& q) {
        ctx->saved_data["weight"] = c10::IValue::make_capsule(c10::make_intrusive<QuantHolder>(q));
        ctx->saved_data["dtype"] = int64_t(x.scalar_type());
        return at::linear(x, dequantize(*q, x.scalar_type()));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto holder =
            c10::static_intrusive_pointer_cast<QuantHolder>(ctx->saved_data["weight"].toCapsule());
        const auto dtype = at::ScalarType(ctx->saved_data["dtype"].toInt());
        const at::Tensor w = dequantize(*holder->weight, dtype);
        return {at::matmul(grads[0].to(dtype), w), at::Tensor()};
    }
};

// Autograd functions take no undefined tensors, so an empty one stands for "no rotary" on the
// way through BlockRecompute.
RotaryPair rotary(const at::Tensor& cos, const at::Tensor& sin) {
    return cos.numel() > 0 ? RotaryPair{cos, sin} : RotaryPair{};
}

// What a recomputed block keeps: the weights it reads, owned, so that no pointer to the model
// outlives it in autograd's graph.
struct BlockWeights : torch::CustomClassHolder {
    explicit BlockWeights(std::shared_ptr<const BoundWeights> w)
        : weights(std::move(w)) {}
    std::shared_ptr<const BoundWeights> weights;
};

// Gradient checkpointing as an autograd function: the forward pass runs the block without
// recording it and keeps only its input; the backward pass runs it again with autograd on and
// takes the gradients of the input and of the block's trainable tensors from that graph.
struct BlockRecompute : torch::autograd::Function<BlockRecompute> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx,
                              const std::shared_ptr<const BoundWeights>& w, int64_t layer,
                              int64_t seed, bool training, const at::Tensor& x,
                              const at::Tensor& cos, const at::Tensor& sin,
                              at::TensorList /*params*/) {
        // The block's trainable tensors are arguments only so that autograd counts them as
        // inputs and asks backward for their gradients.
        ctx->saved_data["weights"] =
            c10::IValue::make_capsule(c10::make_intrusive<BlockWeights>(w));
        ctx->saved_data["layer"] = layer;
        ctx->saved_data["seed"] = seed;
        ctx->saved_data["training"] = training;
        ctx->save_for_backward({x, cos, sin});
        return block(*w, layer, x, rotary(cos, sin), {training, uint64_t(seed), nullptr});
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto holder = c10::static_intrusive_pointer_cast<BlockWeights>(
            ctx->saved_data["weights"].toCapsule());
        const BoundWeights& w = *holder->weights;
        const int64_t layer = ctx->saved_data["layer"].toInt();
        const TransformerPass pass{ctx->saved_data["training"].toBool(),
                                   uint64_t(ctx->saved_data["seed"].toInt()), nullptr};
        const auto saved = ctx->get_saved_variables();
        const at::Tensor x = saved[0].detach().requires_grad_(saved[0].requires_grad());
        at::Tensor y;
        {
            at::AutoGradMode on(true);
            y = block(w, layer, x, rotary(saved[1], saved[2]), pass);
        }
        std::vector<at::Tensor> inputs;
        if (x.requires_grad())
            inputs.push_back(x);
        const auto& params = w.layers[size_t(layer)].trainable;
        inputs.insert(inputs.end(), params.begin(), params.end());
        // The outputs follow forward's arguments: weights, layer, seed, training, x, cos, sin,
        // then one per trainable tensor.
        torch::autograd::variable_list out(4);
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

} // namespace

at::Tensor quantizedLinear(const at::Tensor& x, const std::shared_ptr<const QuantizedWeight>& q) {
    if (!x.requires_grad() || !at::GradMode::is_enabled())
        return at::linear(x, dequantize(*q, x.scalar_type()));
    return QuantProduct::apply(x, q);
}

at::Tensor norm(const BoundNorm& n, NormKind kind, const at::Tensor& x, double eps) {
    if (!n.defined()) // a family without this norm (OLMo 2 has none before attention)
        return x;
    switch (kind) {
    case NormKind::LayerNorm:
        return at::layer_norm(x, {x.size(-1)}, n.weight, n.bias, eps);
    case NormKind::Rms: {
        const at::Tensor f = x.to(at::kFloat);
        const at::Tensor normed = f * at::rsqrt(f.pow(2).mean({-1}, true) + eps);
        return n.weight * normed.to(x.scalar_type());
    }
    case NormKind::RmsWeightInFloat: {
        const at::Tensor f = x.to(at::kFloat);
        const at::Tensor normed = f * at::rsqrt(f.pow(2).mean({-1}, true) + eps);
        return (n.weight * normed).to(x.scalar_type());
    }
    case NormKind::RmsOnePlus: {
        const at::Tensor f = x.to(at::kFloat);
        const at::Tensor normed = f * at::rsqrt(f.pow(2).mean({-1}, true) + eps);
        return (normed * (1.0 + n.weight.to(at::kFloat))).to(x.scalar_type());
    }
    }
    return x;
}

RotaryPair rotaryTables(const Rope& rope, int64_t dims, int64_t past, int64_t t,
                        const at::Tensor& like) {
    const at::Tensor inv = inverseFrequencies(rope, dims, past + t).to(like.device());
    const at::Tensor positions = at::arange(past, past + t, inv.options());
    const at::Tensor freqs = at::outer(positions, inv);
    const at::Tensor angles = at::cat({freqs, freqs}, -1);
    at::Tensor cos = angles.cos(), sin = angles.sin();
    if (rope.attentionFactor != 1.0) // LongRoPE's
        cos = cos * rope.attentionFactor, sin = sin * rope.attentionFactor;
    return {cos.to(like.scalar_type()), sin.to(like.scalar_type())};
}

at::Tensor runBlock(const std::shared_ptr<const BoundWeights>& w, int64_t layer,
                    const at::Tensor& x, const RotaryPair& rope, const TransformerPass& pass,
                    bool recompute) {
    const auto& params = w->layers[size_t(layer)].trainable;
    // The base alone trains nothing (its pass runs without a graph): nothing to recompute.
    if (!recompute || !pass.adapters || (params.empty() && !x.requires_grad()))
        return block(*w, layer, x, rope, pass);
    // Autograd functions take no undefined tensors: an empty one stands for "no rotary".
    const at::Tensor none = at::empty({0}, x.options().requires_grad(false));
    return BlockRecompute::apply(w, layer, int64_t(pass.seed), pass.training, x,
                                 rope.cos.defined() ? rope.cos : none,
                                 rope.sin.defined() ? rope.sin : none, at::TensorList(params));
}

} // namespace tandem
