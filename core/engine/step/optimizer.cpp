#include "engine/step/optimizer.h"

#include "engine/step/blockwiseadam.h"
#include "engine/step/statename.h"

#include "model/emulatedaccelerator.h"
#include "model/model.h"
#include "model/torchversion.h"
#include "model/trafficledger.h"

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <type_traits>

namespace tandem {

namespace {

// LibTorch keys an optimizer's per-parameter state by the parameter's TensorImpl: as a string
// before 2.1, as the pointer itself from then on.
template <typename Map> typename Map::key_type stateKey(const at::Tensor& p) {
    using Key = typename Map::key_type;
    if constexpr (std::is_same_v<Key, std::string>) {
        std::ostringstream key; // what c10::guts::to_string wrote: the address, as text
        key << static_cast<const void*>(p.unsafeGetTensorImpl());
        return key.str();
    } else {
        return p.unsafeGetTensorImpl();
    }
}

using StateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;

// Adam and AdamW differ only in how they apply weight decay; their options and state have the
// same fields.
template <typename Opt, typename Options>
std::unique_ptr<torch::optim::Optimizer>
makeAdam(const OptimizerConfig& c, const std::vector<at::Tensor>& params, double lr) {
    return std::make_unique<Opt>(params, Options(lr)
                                             .betas(std::make_tuple(c.beta1, c.beta2))
                                             .eps(c.eps)
                                             .weight_decay(c.weightDecay));
}

std::unique_ptr<torch::optim::Optimizer> makeImpl(const OptimizerConfig& c,
                                                  const std::vector<at::Tensor>& params) {
    const double lr = 1e-3; // set before every step
    switch (c.kind) {
    case OptimizerKind::Sgd:
        return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(lr)
                                                               .momentum(c.momentum)
                                                               .nesterov(c.nesterov)
                                                               .weight_decay(c.weightDecay));
    case OptimizerKind::Adam:
        return makeAdam<torch::optim::Adam, torch::optim::AdamOptions>(c, params, lr);
    case OptimizerKind::AdamW:
        return makeAdam<torch::optim::AdamW, torch::optim::AdamWOptions>(c, params, lr);
    case OptimizerKind::RmsProp: // PyTorch's defaults: alpha 0.99, no momentum, not centred
        return std::make_unique<torch::optim::RMSprop>(
            params,
            torch::optim::RMSpropOptions(lr).alpha(c.alpha).eps(c.eps).weight_decay(c.weightDecay));
    case OptimizerKind::Adagrad:
        return std::make_unique<torch::optim::Adagrad>(
            params, torch::optim::AdagradOptions(lr).eps(c.adagradEps).weight_decay(c.weightDecay));
    case OptimizerKind::AdamW8bit: // BlockwiseAdamW
        return nullptr;
    }
    return nullptr;
}

// One parameter's state, whichever optimizer holds it, as named tensors.
struct Slots {
    at::Tensor momentum, expAvg, expAvgSq, squareAvg, sum;
    int64_t step = 0;
};

template <typename State> Slots readAdam(torch::optim::OptimizerParamState* s) {
    auto* a = static_cast<State*>(s);
    Slots out;
    out.expAvg = a->exp_avg();
    out.expAvgSq = a->exp_avg_sq();
    out.step = a->step();
    return out;
}

template <typename State>
std::unique_ptr<torch::optim::OptimizerParamState> makeAdamState(const Slots& v) {
    auto s = std::make_unique<State>();
    s->exp_avg(v.expAvg).exp_avg_sq(v.expAvgSq).step(v.step);
    return s;
}

Slots readSlots(torch::optim::OptimizerParamState* s, OptimizerKind kind) {
    if (!s)
        return {};
    switch (kind) {
    case OptimizerKind::Sgd: {
        Slots out;
        out.momentum = static_cast<torch::optim::SGDParamState*>(s)->momentum_buffer();
        return out;
    }
    case OptimizerKind::Adam:
        return readAdam<torch::optim::AdamParamState>(s);
    case OptimizerKind::AdamW:
        return readAdam<torch::optim::AdamWParamState>(s);
    case OptimizerKind::RmsProp: {
        auto* r = static_cast<torch::optim::RMSpropParamState*>(s);
        Slots out;
        out.squareAvg = r->square_avg();
        out.step = r->step();
        return out;
    }
    case OptimizerKind::Adagrad: {
        auto* a = static_cast<torch::optim::AdagradParamState*>(s);
        Slots out;
        out.sum = a->sum();
        out.step = int64_t(a->step());
        return out;
    }
    case OptimizerKind::AdamW8bit:
        return {};
    }
    return {};
}

// The state to install for one parameter, or null for none yet (the optimizer then makes it on
// the parameter's first step).
std::unique_ptr<torch::optim::OptimizerParamState> makeState(const Slots& v, OptimizerKind kind,
                                                             const at::Tensor& param) {
    switch (kind) {
    case OptimizerKind::Sgd: {
        if (!v.momentum.defined())
            return nullptr;
        auto s = std::make_unique<torch::optim::SGDParamState>();
        s->momentum_buffer(v.momentum);
        return s;
    }
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
        if (!v.expAvg.defined())
            return nullptr;
        return kind == OptimizerKind::Adam ? makeAdamState<torch::optim::AdamParamState>(v)
                                           : makeAdamState<torch::optim::AdamWParamState>(v);
    case OptimizerKind::RmsProp: {
        if (!v.squareAvg.defined())
            return nullptr;
        auto s = std::make_unique<torch::optim::RMSpropParamState>();
        s->square_avg(v.squareAvg).step(v.step);
        return s;
    }
    case OptimizerKind::Adagrad: {
        // Adagrad makes every parameter's state up front and expects to find it on each step.
        auto s = std::make_unique<torch::optim::AdagradParamState>();
        s->sum(v.sum.defined() ? v.sum : at::zeros_like(param)).step(v.step);
        return s;
    }
    case OptimizerKind::AdamW8bit:
        return nullptr;
    }
    return nullptr;
}

bool countsSteps(OptimizerKind kind) {
    return kind != OptimizerKind::Sgd;
}

// The tensors of one multi-tensor update.
struct Lists {
    std::vector<at::Tensor> params, grads, expAvg, expAvgSq;
};

// `l` in passes of at most `most` values, each tensor larger than that in contiguous parts of
// it.
template <typename Pass> void inChunks(const Lists& l, int64_t most, Pass&& pass) {
    Lists chunk;
    int64_t values = 0;
    const auto flush = [&] {
        if (!chunk.params.empty())
            pass(chunk);
        chunk = Lists();
        values = 0;
    };
    for (size_t i = 0; i < l.params.size(); ++i) {
        const at::Tensor* t[4] = {&l.params[i], &l.grads[i], &l.expAvg[i], &l.expAvgSq[i]};
        const int64_t n = l.params[i].numel();
        bool split = n > most;
        for (const at::Tensor* x : t)
            split = split && x->is_contiguous();
        if (!split) {
            if (values + n > most)
                flush();
            chunk.params.push_back(l.params[i]);
            chunk.grads.push_back(l.grads[i]);
            chunk.expAvg.push_back(l.expAvg[i]);
            chunk.expAvgSq.push_back(l.expAvgSq[i]);
            values += n;
            continue;
        }
        flush();
        for (int64_t at = 0; at < n; at += most) {
            const int64_t len = std::min(most, n - at);
            chunk.params.push_back(l.params[i].view({-1}).narrow(0, at, len));
            chunk.grads.push_back(l.grads[i].view({-1}).narrow(0, at, len));
            chunk.expAvg.push_back(l.expAvg[i].view({-1}).narrow(0, at, len));
            chunk.expAvgSq.push_back(l.expAvgSq[i].view({-1}).narrow(0, at, len));
            flush();
        }
    }
    flush();
}

// Adam's or AdamW's state for `p` in torch::optim's own map, made as its first step there
// would make it, so that checkpoints and the per-tensor path read the same state.
template <typename State> State& adamState(torch::optim::Optimizer& opt, const at::Tensor& p) {
    auto& state = opt.state();
    const auto key = stateKey<StateMap>(p);
    auto it = state.find(key);
    if (it == state.end()) {
        auto s = std::make_unique<State>();
        s->step(0);
        s->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        s->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        state[key] = std::move(s);
        it = state.find(key);
    }
    return static_cast<State&>(*it->second);
}

// torch::optim's Adam (AdamW with `decoupled`) over every tensor at once: the same operations
// in the same order, each a multi-tensor one, or LibTorch's fused kernel. Tensors are grouped
// by their step count, which differs only for a parameter that missed steps.
template <typename State>
void adamAll(torch::optim::Optimizer& opt, const OptimizerConfig& c, bool decoupled, bool fused,
             const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
             double lr) {
    std::map<int64_t, Lists> groups;
    for (size_t i = 0; i < params.size(); ++i) {
        if (i >= grads.size() || !grads[i].defined())
            continue;
        State& s = adamState<State>(opt, params[i]);
        s.step(s.step() + 1);
        Lists& l = groups[s.step()];
        l.params.push_back(params[i]);
        l.grads.push_back(grads[i]);
        l.expAvg.push_back(s.exp_avg());
        l.expAvgSq.push_back(s.exp_avg_sq());
    }
    for (auto& [step, l] : groups) {
#if TANDEM_TORCH_AT_LEAST(2, 4)
        if (fused) {
            // The kernel reads each tensor's step count from the device.
            const at::Tensor count = at::full({}, double(step), l.params[0].options());
            const std::vector<at::Tensor> steps(l.params.size(), count);
            if (decoupled)
                at::_fused_adamw_(l.params, l.grads, l.expAvg, l.expAvgSq, {}, steps, lr, c.beta1,
                                  c.beta2, c.weightDecay, c.eps, false, false, c10::nullopt,
                                  c10::nullopt);
            else
                at::_fused_adam_(l.params, l.grads, l.expAvg, l.expAvgSq, {}, steps, lr, c.beta1,
                                 c.beta2, c.weightDecay, c.eps, false, false, c10::nullopt,
                                 c10::nullopt);
            continue;
        }
#else
        (void)fused;
#endif
        const double bias1 = 1 - std::pow(c.beta1, double(step));
        const double bias2 = 1 - std::pow(c.beta2, double(step));
        inChunks(l, std::max<int64_t>(1, c.passValues), [&](const Lists& part) {
            std::vector<at::Tensor> grad = part.grads;
            if (c.weightDecay != 0) {
                if (decoupled)
                    at::_foreach_mul_(part.params, 1 - lr * c.weightDecay);
                else
                    grad = at::_foreach_add(grad, part.params, c.weightDecay);
            }
            at::_foreach_mul_(part.expAvg, c.beta1);
            at::_foreach_add_(part.expAvg, grad, 1 - c.beta1);
            at::_foreach_mul_(part.expAvgSq, c.beta2);
            at::_foreach_addcmul_(part.expAvgSq, grad, grad, 1 - c.beta2);
            std::vector<at::Tensor> denom = at::_foreach_sqrt(part.expAvgSq);
            at::_foreach_div_(denom, std::sqrt(bias2));
            at::_foreach_add_(denom, c.eps);
            at::_foreach_addcdiv_(part.params, part.expAvg, denom, -lr / bias1);
        });
    }
}

// torch::optim's SGD (dampening 0) over every tensor at once.
void sgdAll(torch::optim::Optimizer& opt, const OptimizerConfig& c,
            const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
            double lr) {
    std::vector<at::Tensor> p, d;
    for (size_t i = 0; i < params.size(); ++i)
        if (i < grads.size() && grads[i].defined()) {
            p.push_back(params[i]);
            d.push_back(grads[i]);
        }
    if (p.empty())
        return;
    if (c.weightDecay != 0)
        d = at::_foreach_add(d, p, c.weightDecay);
    if (c.momentum != 0) {
        auto& state = opt.state();
        std::vector<at::Tensor> buffers, held, heldGrads;
        for (size_t i = 0; i < p.size(); ++i) {
            const auto key = stateKey<StateMap>(p[i]);
            auto it = state.find(key);
            if (it == state.end()) {
                // The first step's buffer is the gradient itself, as torch::optim makes it.
                auto s = std::make_unique<torch::optim::SGDParamState>();
                s->momentum_buffer(d[i].clone().detach());
                buffers.push_back(s->momentum_buffer());
                state[key] = std::move(s);
            } else {
                at::Tensor b =
                    static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer();
                buffers.push_back(b);
                held.push_back(b);
                heldGrads.push_back(d[i]);
            }
        }
        if (!held.empty()) {
            at::_foreach_mul_(held, c.momentum);
            at::_foreach_add_(held, heldGrads, 1.0);
        }
        d = c.nesterov ? at::_foreach_add(d, buffers, c.momentum) : buffers;
    }
    at::_foreach_add_(p, d, -lr);
}

// LibTorch's fused Adam kernels: from 2.4 on CUDA and the CPU (the emulated accelerator runs
// the CPU's). Auto takes them on an accelerator, where one kernel instead of a few a tensor is
// the difference; on the CPU the multi-tensor update keeps runs bit for bit what they were.
bool hasFusedAdam(const at::Tensor& p, bool asked) {
#if TANDEM_TORCH_AT_LEAST(2, 4)
    return p.is_cuda() || isEmulatedAccelerator(p.device()) || (asked && p.is_cpu());
#else
    (void)p;
    (void)asked;
    return false;
#endif
}

} // namespace

OptimizerConfig outerStepOptimizer(double momentum) {
    OptimizerConfig outer;
    outer.kind = OptimizerKind::Sgd;
    outer.momentum = momentum;
    outer.nesterov = momentum > 0;
    return outer;
}

Optimizer::Optimizer(OptimizerConfig config, std::vector<at::Tensor> params,
                     std::vector<int64_t> blockPhases)
    : m_cfg(config)
    , m_params(std::move(params))
    , m_impl(makeImpl(m_cfg, m_params)) {
    if (m_cfg.kind == OptimizerKind::AdamW8bit)
        m_blockwise = std::make_unique<BlockwiseAdamW>(
            BlockwiseAdamW::Options{m_cfg.beta1, m_cfg.beta2, m_cfg.eps, m_cfg.weightDecay,
                                    m_cfg.passValues,
                                    m_cfg.kernels == OptimizerConfig::Kernels::Auto ||
                                        m_cfg.kernels == OptimizerConfig::Kernels::Fused},
            m_params, std::move(blockPhases));
}

Optimizer::~Optimizer() = default;

void Optimizer::step(const std::vector<at::Tensor>& grads, double lr, bool counts) {
    at::NoGradGuard noGrad;
    LedgerScope purpose(LedgerPurpose::Optimizer);
    if (counts) {
        noteOptimizerStep();
        ++m_steps;
    }
    if (m_blockwise) {
        m_used = OptimizerConfig::Kernels::PerTensor;
        m_blockwise->step(grads, lr);
        return;
    }
    if (stepAll(grads, lr))
        return;
    m_used = OptimizerConfig::Kernels::PerTensor;
    // A parameter without a gradient is left alone (and so is its state), as torch.optim does.
    for (size_t i = 0; i < m_params.size(); ++i)
        m_params[i].mutable_grad() = i < grads.size() ? grads[i] : at::Tensor();
    for (torch::optim::OptimizerParamGroup& g : m_impl->param_groups())
        g.options().set_lr(lr);
    m_impl->step();
    for (at::Tensor& p : m_params)
        p.mutable_grad() = at::Tensor();
}

bool Optimizer::stepAll(const std::vector<at::Tensor>& grads, double lr) {
    using K = OptimizerConfig::Kernels;
    const bool adam = m_cfg.kind == OptimizerKind::Adam || m_cfg.kind == OptimizerKind::AdamW;
    if (m_cfg.kernels == K::PerTensor || m_params.empty() ||
        !(adam || m_cfg.kind == OptimizerKind::Sgd))
        return false;
    const bool fused = adam && m_cfg.kernels != K::MultiTensor &&
                       hasFusedAdam(m_params[0], m_cfg.kernels == K::Fused);
    m_used = fused ? K::Fused : K::MultiTensor;
    if (m_cfg.kind == OptimizerKind::Sgd)
        sgdAll(*m_impl, m_cfg, m_params, grads, lr);
    else if (m_cfg.kind == OptimizerKind::Adam)
        adamAll<torch::optim::AdamParamState>(*m_impl, m_cfg, false, fused, m_params, grads, lr);
    else
        adamAll<torch::optim::AdamWParamState>(*m_impl, m_cfg, true, fused, m_params, grads, lr);
    return true;
}

QList<TensorRecord> Optimizer::stateRecords() const {
    QList<TensorRecord> out;
    for (const auto& [name, t] : stateTensors())
        out << toRecord(name, t);
    return out;
}

NamedTensors Optimizer::stateTensors() const {
    if (m_blockwise)
        return m_blockwise->stateTensors();
    NamedTensors out;
    auto& state = m_impl->state();
    for (size_t i = 0; i < m_params.size(); ++i) {
        auto it = state.find(stateKey<StateMap>(m_params[i]));
        const Slots s = readSlots(it == state.end() ? nullptr : it->second.get(), m_cfg.kind);
        const std::string idx = std::to_string(i);
        if (s.momentum.defined())
            out.emplace_back("momentum_buffer." + idx, s.momentum);
        if (s.expAvg.defined()) {
            out.emplace_back("exp_avg." + idx, s.expAvg);
            out.emplace_back("exp_avg_sq." + idx, s.expAvgSq);
        }
        if (s.squareAvg.defined())
            out.emplace_back("square_avg." + idx, s.squareAvg);
        if (s.sum.defined())
            out.emplace_back("sum." + idx, s.sum);
        if (countsSteps(m_cfg.kind) &&
            (s.expAvg.defined() || s.squareAvg.defined() || s.sum.defined()))
            out.emplace_back("step." + idx, at::scalar_tensor(s.step, at::kLong));
    }
    return out;
}

Status Optimizer::restore(int64_t steps, const QList<TensorRecord>& records) {
    NamedTensors state;
    for (const TensorRecord& r : records) {
        auto t = fromRecord(r);
        if (!t)
            return t.error();
        state.emplace_back(r.name.toStdString(), std::move(*t));
    }
    return restore(steps, state);
}

Status Optimizer::restore(int64_t steps, const NamedTensors& tensors) {
    if (m_blockwise) {
        if (auto st = m_blockwise->restore(tensors); !st)
            return st;
        m_steps = steps;
        return success();
    }
    std::vector<Slots> slots(m_params.size());
    for (const auto& [key, t] : tensors) {
        auto parsed = parseStateName(key, m_params.size());
        if (!parsed)
            return parsed.error();
        const auto& [slot, i] = *parsed;
        const QString name = QString::fromStdString(key);
        Slots& s = slots[i];
        if (slot == QLatin1String("step")) {
            if (t.numel() != 1)
                return makeError(ErrorCode::Corrupt, QStringLiteral("bad optimizer step count"));
            s.step = t.item<int64_t>();
            continue;
        }
        if (!t.is_floating_point() || keptByBlock(slot.toStdString()))
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("optimizer state %1 is 8-bit AdamW's: resume with "
                                            "--optimizer adamw8bit")
                                 .arg(name));
        if (!t.sizes().equals(m_params[i].sizes()))
            return makeError(
                ErrorCode::Incompatible,
                QStringLiteral("optimizer state %1 does not fit its parameter").arg(name));
        at::Tensor v = t.to(m_params[i].options());
        if (slot == QLatin1String("momentum_buffer"))
            s.momentum = v;
        else if (slot == QLatin1String("exp_avg"))
            s.expAvg = v;
        else if (slot == QLatin1String("exp_avg_sq"))
            s.expAvgSq = v;
        else if (slot == QLatin1String("square_avg"))
            s.squareAvg = v;
        else if (slot == QLatin1String("sum"))
            s.sum = v;
        else
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("unknown optimizer state %1").arg(name));
    }
    for (size_t i = 0; i < m_params.size(); ++i)
        if (slots[i].expAvg.defined() != slots[i].expAvgSq.defined())
            return makeError(
                ErrorCode::Corrupt,
                QStringLiteral("optimizer state for parameter %1 is incomplete").arg(i));
    auto& state = m_impl->state();
    state.clear();
    for (size_t i = 0; i < m_params.size(); ++i)
        if (auto s = makeState(slots[i], m_cfg.kind, m_params[i]))
            state[stateKey<StateMap>(m_params[i])] = std::move(s);
    m_steps = steps;
    return success();
}

} // namespace tandem
