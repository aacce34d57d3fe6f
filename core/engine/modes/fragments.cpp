#include "engine/modes/fragments.h"

#include "model/tensors.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tandem {

std::vector<Fragment> cutFragments(const std::vector<int64_t>& numels, int f) {
    std::vector<Fragment> out;
    const auto tensors = int64_t(numels.size());
    const int64_t want = std::clamp<int64_t>(f, 1, std::max<int64_t>(tensors, 1));
    int64_t total = 0;
    for (int64_t n : numels)
        total += n;
    Fragment cur;
    int64_t at = 0;
    for (size_t i = 0; i < numels.size(); ++i) {
        cur.count += numels[i];
        at += numels[i];
        cur.endParam = i + 1;
        const auto done = int64_t(out.size()) + 1; // fragments once this one closes
        if (done == want)
            continue; // the last takes the rest
        // Close at the cut nearest this fragment's share of the values, and no later than
        // leaves one tensor for each fragment still to come.
        const double target = double(total) * double(done) / double(want);
        const bool mustClose = tensors - int64_t(i) - 1 == want - done;
        const bool nextIsFurther =
            std::abs(double(at + numels[i + 1]) - target) >= std::abs(double(at) - target);
        if (mustClose || nextIsFurther) {
            out.push_back(cur);
            cur = Fragment{i + 1, i + 1, at, 0};
        }
    }
    if (cur.endParam > cur.firstParam || out.empty())
        out.push_back(cur);
    return out;
}

std::vector<int64_t> paramNumels(const ModelLayout& layout) {
    std::vector<int64_t> out;
    for (const auto& shape : layout.paramShapes) {
        int64_t n = 1;
        for (int64_t d : shape)
            n *= d;
        out.push_back(n);
    }
    return out;
}

std::vector<int64_t> paramNumels(const std::vector<at::Tensor>& params) {
    std::vector<int64_t> out;
    for (const at::Tensor& p : params)
        out.push_back(p.numel());
    return out;
}

at::Tensor gatherFragment(const std::vector<at::Tensor>& params, const Fragment& f) {
    at::NoGradGuard noGrad;
    std::vector<at::Tensor> parts;
    for (size_t i = f.firstParam; i < f.endParam; ++i)
        parts.push_back(params[i].detach().to(at::kCPU, at::kFloat).reshape(-1));
    return parts.empty() ? at::empty({0}, at::kFloat) : at::cat(parts);
}

QByteArray packFragment(const std::vector<at::Tensor>& grads, const Fragment& f, DType wire) {
    at::NoGradGuard noGrad;
    std::vector<at::Tensor> parts;
    for (size_t i = f.endParam; i-- > f.firstParam;)
        parts.push_back(grads[i].detach().reshape(-1).to(at::kCPU, scalarTypeOf(wire)));
    if (parts.empty())
        return {};
    const at::Tensor flat = at::cat(parts).contiguous();
    return QByteArray(static_cast<const char*>(flat.data_ptr()),
                      qsizetype(flat.numel() * flat.element_size()));
}

void copyFragment(std::vector<at::Tensor>& params, const Fragment& f,
                  const std::vector<at::Tensor>& values) {
    at::NoGradGuard noGrad;
    for (size_t i = f.firstParam; i < f.endParam && i < values.size(); ++i)
        params[i].copy_(values[i].view(params[i].sizes()));
}

void addToFragment(std::vector<at::Tensor>& params, const Fragment& f, const at::Tensor& flat) {
    at::NoGradGuard noGrad;
    int64_t at = 0;
    for (size_t i = f.firstParam; i < f.endParam; ++i) {
        const int64_t n = params[i].numel();
        params[i].add_(flat.narrow(0, at, n).view(params[i].sizes()).to(params[i].options()));
        at += n;
    }
}

std::vector<at::Tensor> fragmentGrads(const at::Tensor& flat, const Fragment& f,
                                      const std::vector<std::vector<int64_t>>& shapes) {
    std::vector<at::Tensor> out(shapes.size());
    int64_t at = 0;
    for (size_t i = f.firstParam; i < f.endParam && i < shapes.size(); ++i) {
        int64_t n = 1;
        for (int64_t d : shapes[i])
            n *= d;
        out[i] = flat.narrow(0, at, n).view(shapes[i]);
        at += n;
    }
    return out;
}

std::vector<at::Tensor> fragmentGrads(const at::Tensor& flat, const Fragment& f,
                                      const std::vector<at::Tensor>& like) {
    std::vector<std::vector<int64_t>> shapes;
    for (const at::Tensor& t : like)
        shapes.push_back(t.sizes().vec());
    return fragmentGrads(flat, f, shapes);
}

void FragmentTracker::restart(const std::vector<at::Tensor>& params, int fragments) {
    m_requested = fragments;
    m_frags = cutFragments(paramNumels(params), fragments);
    m_global.clear();
    m_sent.assign(m_frags.size(), at::Tensor());
    for (const Fragment& f : m_frags)
        m_global.push_back(gatherFragment(params, f));
}

void FragmentTracker::merge(int k, const at::Tensor& global, std::vector<at::Tensor>& params) {
    const auto i = size_t(k);
    // Before any send, the parameters stand at the last global values plus their progress.
    const at::Tensor& base = m_sent[i].defined() ? m_sent[i] : m_global[i];
    addToFragment(params, m_frags[i], global - base);
    m_global[i] = global.clone();
    m_sent[i] = at::Tensor();
}

at::Tensor FragmentTracker::delta(int k, const std::vector<at::Tensor>& params) {
    const auto i = size_t(k);
    if (!m_global[i].defined())
        throw std::runtime_error("fragment " + std::to_string(k) +
                                 " was to be sent again before its update came");
    at::Tensor now = gatherFragment(params, m_frags[i]);
    at::Tensor d = m_global[i] - now;
    m_sent[i] = std::move(now);
    // With two fragments or more, the fragment's update comes before its next send (the round
    // after next), and the merge needs only the values as sent: the global ones can go.
    if (m_frags.size() >= 2)
        m_global[i] = at::Tensor();
    return d;
}

int64_t FragmentTracker::heldValues() const {
    int64_t n = 0;
    for (size_t i = 0; i < m_frags.size(); ++i)
        n += (m_global[i].defined() ? m_global[i].numel() : 0) +
             (m_sent[i].defined() ? m_sent[i].numel() : 0);
    return n;
}

} // namespace tandem
