#include "engine/step/blockwiseadam.h"
#include "engine/step/statename.h"

#include <QString>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

namespace tandem {

namespace {

// The dynamic-tree map of the paper (bitsandbytes' create_dynamic_map with 7 exponent bits):
// for each decade 10^-6 .. 10^0, the midpoints of an even split of [0.1, 1] into 2^i parts
// (signed, with their negatives) or 2^(i+1) parts (unsigned); then 0 and 1, ascending.
std::vector<float> dynamicMap(bool signedMap) {
    constexpr int kExponentBits = 7;
    std::vector<float> data;
    for (int i = 0; i < kExponentBits; ++i) {
        const int items = signedMap ? (1 << i) + 1 : (1 << (i + 1)) + 1;
        const float scale = float(std::pow(10.0, double(-(kExponentBits - 1) + i)));
        for (int k = 0; k + 1 < items; ++k) {
            // torch.linspace(0.1, 1, items) in fp32, then the means of neighbours.
            const float step = (1.0f - 0.1f) / float(items - 1);
            const float a = 0.1f + step * float(k), b = 0.1f + step * float(k + 1);
            const float mean = (a + b) / 2.0f;
            data.push_back(scale * mean);
            if (signedMap)
                data.push_back(-scale * mean);
        }
    }
    data.push_back(0.0f);
    data.push_back(1.0f);
    data.resize(256, 0.0f);
    std::sort(data.begin(), data.end());
    return data;
}

// The map and the midpoints between its neighbours (what a value is rounded to the nearest by),
// on one device.
struct DeviceMap {
    at::Tensor values, mids;
};
const DeviceMap& deviceMap(bool signedMap, const at::Device& device) {
    thread_local std::map<std::pair<bool, std::string>, DeviceMap> cache;
    DeviceMap& m = cache[{signedMap, device.str()}];
    if (!m.values.defined()) {
        const std::vector<float>& v = BlockwiseAdamW::map(signedMap);
        std::vector<float> mids(v.size() - 1);
        for (size_t k = 0; k + 1 < v.size(); ++k)
            mids[k] = (v[k] + v[k + 1]) / 2.0f;
        const auto cpu = at::TensorOptions(at::kFloat);
        m.values = at::from_blob(const_cast<float*>(v.data()), {int64_t(v.size())}, cpu)
                       .to(device, /*non_blocking=*/false, /*copy=*/true);
        m.mids = at::from_blob(mids.data(), {int64_t(mids.size())}, cpu).to(device, false, true);
    }
    return m;
}

// The nearest code of a value on the CPU, as at::bucketize finds it over the midpoints (how
// many lie below the value): a first guess from a table indexed by the value's top 16 bits, then
// a step or two to the midpoints on either side, where one falls inside the guess's range.
struct CodeTable {
    float mids[256]; // the last one past every value
    uint8_t guess[1 << 16];

    uint8_t nearest(float x) const {
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        int at = guess[bits >> 16];
        while (at < 255 && mids[at] < x)
            ++at;
        while (at > 0 && !(mids[at - 1] < x))
            --at;
        return uint8_t(at);
    }
};

const CodeTable& codeTable(bool signedMap) {
    static const auto make = [](bool s) {
        auto t = std::make_unique<CodeTable>();
        const std::vector<float>& v = BlockwiseAdamW::map(s);
        for (size_t k = 0; k < 255; ++k)
            t->mids[k] = (v[k] + v[k + 1]) / 2.0f;
        t->mids[255] = std::numeric_limits<float>::infinity();
        for (uint32_t key = 0; key < (1u << 16); ++key) {
            const uint32_t bits = key << 16;
            float x;
            std::memcpy(&x, &bits, sizeof x);
            t->guess[key] = std::isfinite(x)
                                ? uint8_t(std::lower_bound(t->mids, t->mids + 255, x) - t->mids)
                                : 0;
        }
        return t;
    };
    static const std::unique_ptr<CodeTable> s = make(true), u = make(false);
    return signedMap ? *s : *u;
}

// Blocks [b0, b0 + blocks) of one moment in fp32, padded with zeros to whole blocks: `codes`
// (flat) values [from, from + len) land at `at` of the buffer.
at::Tensor dequantize(const at::Tensor& codes, const at::Tensor& absmax, const DeviceMap& map,
                      int64_t b0, int64_t blocks, int64_t from, int64_t len, int64_t at) {
    at::Tensor buf = at::zeros({blocks * BlockwiseAdamW::kBlock},
                               at::TensorOptions(at::kFloat).device(codes.device()));
    buf.narrow(0, at, len)
        .copy_(map.values.index_select(0, codes.narrow(0, from, len).to(at::kInt)));
    buf.view({blocks, BlockwiseAdamW::kBlock}).mul_(absmax.narrow(0, b0, blocks).unsqueeze(1));
    return buf;
}

// The buffer back to codes: each block's new largest magnitude, and each value the nearest of
// the map's times that.
void quantize(const at::Tensor& buf, at::Tensor& codes, at::Tensor& absmax, const DeviceMap& map,
              int64_t b0, int64_t blocks, int64_t from, int64_t len, int64_t at) {
    const at::Tensor rows = buf.view({blocks, BlockwiseAdamW::kBlock});
    const at::Tensor largest = std::get<0>(rows.abs().max(1));
    absmax.narrow(0, b0, blocks).copy_(largest);
    const at::Tensor scale = at::where(largest > 0, largest, at::ones_like(largest));
    const at::Tensor unit = rows.div(scale.unsqueeze(1)).view({-1}).narrow(0, at, len);
    codes.narrow(0, from, len).copy_(at::bucketize(unit, map.mids, /*out_int32=*/true));
}

} // namespace

const std::vector<float>& BlockwiseAdamW::map(bool signedMap) {
    static const std::vector<float> s = dynamicMap(true), u = dynamicMap(false);
    return signedMap ? s : u;
}

int64_t BlockwiseAdamW::blocksOf(int64_t values, int64_t phase) {
    return values <= 0 ? 0 : (phase + values + kBlock - 1) / kBlock;
}

std::vector<int64_t> BlockwiseAdamW::flatPhases(const std::vector<at::Tensor>& params) {
    std::vector<int64_t> phases(params.size(), 0);
    int64_t offset = 0;
    for (size_t k = params.size(); k-- > 0;) {
        phases[k] = offset % kBlock;
        offset += params[k].numel();
    }
    return phases;
}

BlockwiseAdamW::BlockwiseAdamW(const Options& c, std::vector<at::Tensor> params,
                               std::vector<int64_t> phases)
    : m_beta1(c.beta1)
    , m_beta2(c.beta2)
    , m_eps(c.eps)
    , m_weightDecay(c.weightDecay)
    , m_passValues(std::max<int64_t>(kBlock, c.passValues))
    , m_cpuLoop(c.cpuLoop)
    , m_params(std::move(params))
    , m_phases(phases.empty() ? flatPhases(m_params) : std::move(phases))
    , m_state(m_params.size()) {
    m_phases.resize(m_params.size(), 0);
    for (int64_t& p : m_phases)
        p = ((p % kBlock) + kBlock) % kBlock;
}

BlockwiseAdamW::State BlockwiseAdamW::emptyState(size_t i) const {
    const at::Tensor& p = m_params[i];
    const auto codes = at::TensorOptions(at::kByte).device(p.device());
    const auto scales = at::TensorOptions(at::kFloat).device(p.device());
    const int64_t blocks = blocksOf(p.numel(), m_phases[i]);
    State s;
    s.m = at::zeros({p.numel()}, codes);
    s.v = at::zeros({p.numel()}, codes);
    s.mMax = at::zeros({blocks}, scales);
    s.vMax = at::zeros({blocks}, scales);
    return s;
}

BlockwiseAdamW::State& BlockwiseAdamW::stateOf(size_t i) {
    if (!m_state[i].m.defined())
        m_state[i] = emptyState(i);
    return m_state[i];
}

void BlockwiseAdamW::step(const std::vector<at::Tensor>& grads, double lr) {
    at::NoGradGuard noGrad;
    for (size_t i = 0; i < m_params.size(); ++i)
        if (i < grads.size() && grads[i].defined())
            stepOne(i, grads[i], lr);
}

void BlockwiseAdamW::stepOne(size_t i, const at::Tensor& grad, double lr) {
    at::Tensor& p = m_params[i];
    State& s = stateOf(i);
    ++s.step;
    const double bias1 = 1 - std::pow(m_beta1, double(s.step));
    const double bias2 = 1 - std::pow(m_beta2, double(s.step));
    if (stepOnCpu(i, grad, lr, bias1, bias2))
        return;
    const DeviceMap& signedMap = deviceMap(true, p.device());
    const DeviceMap& unsignedMap = deviceMap(false, p.device());
    const int64_t n = p.numel(), phase = m_phases[i], blocks = s.mMax.numel();
    const bool inPlace = p.is_contiguous() && p.scalar_type() == at::kFloat;
    at::Tensor flat = inPlace ? p.view({-1}) : p.reshape({-1}).to(at::kFloat);
    const at::Tensor g = grad.reshape({-1});
    const int64_t perPass = std::max<int64_t>(1, m_passValues / kBlock);
    for (int64_t b0 = 0; b0 < blocks; b0 += perPass) {
        const int64_t nb = std::min(blocks - b0, perPass);
        const int64_t from = std::max<int64_t>(0, b0 * kBlock - phase);
        const int64_t to = std::min(n, (b0 + nb) * kBlock - phase);
        const int64_t len = to - from, at = b0 == 0 ? phase : 0;
        at::Tensor m = dequantize(s.m, s.mMax, signedMap, b0, nb, from, len, at);
        at::Tensor v = dequantize(s.v, s.vMax, unsignedMap, b0, nb, from, len, at);
        at::Tensor w = flat.narrow(0, from, len);
        const at::Tensor d = g.narrow(0, from, len).to(at::kFloat);
        at::Tensor mv = m.narrow(0, at, len), vv = v.narrow(0, at, len);
        // PyTorch's AdamW, in its order.
        if (m_weightDecay != 0)
            w.mul_(1 - lr * m_weightDecay);
        mv.mul_(m_beta1).add_(d, 1 - m_beta1);
        vv.mul_(m_beta2).addcmul_(d, d, 1 - m_beta2);
        const at::Tensor denom = vv.sqrt().div_(std::sqrt(bias2)).add_(m_eps);
        w.addcdiv_(mv, denom, -lr / bias1);
        quantize(m, s.m, s.mMax, signedMap, b0, nb, from, len, at);
        quantize(v, s.v, s.vMax, unsignedMap, b0, nb, from, len, at);
    }
    if (!inPlace)
        p.copy_(flat.view(p.sizes()));
}

bool BlockwiseAdamW::stepOnCpu(size_t i, const at::Tensor& grad, double lr, double bias1,
                               double bias2) {
    at::Tensor& p = m_params[i];
    if (!m_cpuLoop || !p.is_cpu() || !p.is_contiguous() || p.scalar_type() != at::kFloat)
        return false;
    State& s = m_state[i];
    const at::Tensor g = grad.reshape({-1}).to(at::kCPU, at::kFloat).contiguous();
    const std::vector<float>& sm = map(true);
    const std::vector<float>& um = map(false);
    const CodeTable& signedCodes = codeTable(true);
    const CodeTable& unsignedCodes = codeTable(false);
    float* w = p.data_ptr<float>();
    const float* d = g.data_ptr<float>();
    uint8_t* qm = s.m.data_ptr<uint8_t>();
    uint8_t* qv = s.v.data_ptr<uint8_t>();
    float* am = s.mMax.data_ptr<float>();
    float* av = s.vMax.data_ptr<float>();
    const int64_t n = p.numel(), phase = m_phases[i];
    const float decay = float(1 - lr * m_weightDecay), b1 = float(m_beta1), b2 = float(m_beta2),
                c1 = float(1 - m_beta1), c2 = float(1 - m_beta2), root2 = float(std::sqrt(bias2)),
                eps = float(m_eps), rate = float(-lr / bias1);
    const bool decays = m_weightDecay != 0;
    at::parallel_for(0, s.mMax.numel(), 64, [&](int64_t begin, int64_t end) {
        float mf[kBlock], vf[kBlock];
        for (int64_t b = begin; b < end; ++b) {
            const int64_t from = std::max<int64_t>(0, b * kBlock - phase);
            const int64_t to = std::min(n, (b + 1) * kBlock - phase);
            float mMax = 0, vMax = 0;
            for (int64_t j = from; j < to; ++j) {
                float m = sm[qm[j]] * am[b], v = um[qv[j]] * av[b];
                const float gj = d[j];
                if (decays)
                    w[j] = w[j] * decay;
                m = m * b1 + c1 * gj;
                v = v * b2 + c2 * gj * gj;
                const float denom = std::sqrt(v) / root2 + eps;
                w[j] = w[j] + rate * m / denom;
                mf[j - from] = m;
                vf[j - from] = v;
                mMax = std::max(mMax, std::fabs(m));
                vMax = std::max(vMax, v);
            }
            am[b] = mMax;
            av[b] = vMax;
            const float ms = mMax > 0 ? mMax : 1.0f, vs = vMax > 0 ? vMax : 1.0f;
            for (int64_t j = from; j < to; ++j) {
                qm[j] = signedCodes.nearest(mf[j - from] / ms);
                qv[j] = unsignedCodes.nearest(vf[j - from] / vs);
            }
        }
    });
    return true;
}

NamedTensors BlockwiseAdamW::stateTensors() const {
    NamedTensors out;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const State& s = m_state[i];
        if (!s.m.defined())
            continue;
        const std::string idx = std::to_string(i);
        out.emplace_back("exp_avg." + idx, s.m.view(m_params[i].sizes()));
        out.emplace_back("exp_avg_sq." + idx, s.v.view(m_params[i].sizes()));
        out.emplace_back("exp_avg_absmax." + idx, s.mMax);
        out.emplace_back("exp_avg_sq_absmax." + idx, s.vMax);
        out.emplace_back("step." + idx, at::scalar_tensor(s.step, at::kLong));
    }
    return out;
}

Status BlockwiseAdamW::restore(const NamedTensors& tensors) {
    struct Taken {
        at::Tensor m, v, mMax, vMax;
        int64_t step = 0;
        bool counted = false;
    };
    std::vector<Taken> taken(m_params.size());
    for (const auto& [key, t] : tensors) {
        auto parsed = parseStateName(key, m_params.size());
        if (!parsed)
            return parsed.error();
        const auto& [slot, i] = *parsed;
        const QString name = QString::fromStdString(key);
        Taken& k = taken[i];
        const at::Tensor& p = m_params[i];
        if (slot == QLatin1String("step")) {
            if (t.numel() != 1)
                return makeError(ErrorCode::Corrupt, QStringLiteral("bad optimizer step count"));
            k.step = t.item<int64_t>();
            k.counted = true;
            continue;
        }
        const bool scales = keptByBlock(slot.toStdString());
        const int64_t want = scales ? blocksOf(p.numel(), m_phases[size_t(i)]) : p.numel();
        if (t.numel() != want || (!scales && !t.sizes().equals(p.sizes())))
            return makeError(
                ErrorCode::Incompatible,
                QStringLiteral("optimizer state %1 does not fit its parameter").arg(name));
        if (slot == QLatin1String("exp_avg"))
            k.m = t;
        else if (slot == QLatin1String("exp_avg_sq"))
            k.v = t;
        else if (slot == QLatin1String("exp_avg_absmax"))
            k.mMax = t;
        else if (slot == QLatin1String("exp_avg_sq_absmax"))
            k.vMax = t;
        else
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("unknown optimizer state %1").arg(name));
    }
    std::vector<State> state(m_params.size());
    for (size_t i = 0; i < m_params.size(); ++i) {
        Taken& k = taken[i];
        if (!k.m.defined() && !k.v.defined() && !k.mMax.defined() && !k.vMax.defined())
            continue;
        const bool codes = k.m.defined() && k.m.scalar_type() == at::kByte;
        const bool whole =
            k.m.defined() && k.v.defined() &&
            (codes ? k.mMax.defined() && k.vMax.defined() && k.v.scalar_type() == at::kByte
                   : !k.mMax.defined() && !k.vMax.defined() && k.m.is_floating_point() &&
                         k.v.is_floating_point());
        if (!whole)
            return makeError(
                ErrorCode::Corrupt,
                QStringLiteral("optimizer state for parameter %1 is incomplete").arg(i));
        const at::Device device = m_params[i].device();
        State& s = state[i];
        s.step = k.step;
        if (codes) {
            s.m = k.m.reshape({-1}).to(device, at::kByte);
            s.v = k.v.reshape({-1}).to(device, at::kByte);
            s.mMax = k.mMax.reshape({-1}).to(device, at::kFloat);
            s.vMax = k.vMax.reshape({-1}).to(device, at::kFloat);
            continue;
        }
        // A full-precision Adam's moments: stored as a step stores them.
        s = emptyState(i);
        const int64_t n = m_params[i].numel(), blocks = s.mMax.numel(), phase = m_phases[i];
        const at::Tensor mf = k.m.reshape({-1}).to(device, at::kFloat);
        const at::Tensor vf = k.v.reshape({-1}).to(device, at::kFloat);
        for (int64_t b0 = 0; b0 < blocks; b0 += 4096) {
            const int64_t nb = std::min<int64_t>(blocks - b0, 4096);
            const int64_t from = std::max<int64_t>(0, b0 * kBlock - phase);
            const int64_t len = std::min(n, (b0 + nb) * kBlock - phase) - from;
            const int64_t at = b0 == 0 ? phase : 0;
            const auto pad = [&](const at::Tensor& src) {
                at::Tensor buf = at::zeros({nb * kBlock}, src.options());
                buf.narrow(0, at, len).copy_(src.narrow(0, from, len));
                return buf;
            };
            quantize(pad(mf), s.m, s.mMax, deviceMap(true, device), b0, nb, from, len, at);
            quantize(pad(vf), s.v, s.vMax, deviceMap(false, device), b0, nb, from, len, at);
        }
        s.step = k.step;
    }
    m_state = std::move(state);
    return success();
}

} // namespace tandem
