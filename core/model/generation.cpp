#include "model/generation.h"

#include <algorithm>

namespace tandem {

Sampler::Sampler(double temperature, double topP, uint64_t seed)
    : m_temperature(temperature)
    , m_topP(topP)
    , m_rng(seed) {}

int64_t Sampler::pick(const at::Tensor& logits) {
    if (m_temperature <= 0)
        return logits.argmax().item<int64_t>();
    const at::Tensor p =
        at::softmax(logits.to(at::kDouble).div(m_temperature), 0).contiguous().cpu();
    const double* prob = p.data_ptr<double>();
    std::vector<int64_t> order(size_t(p.numel()));
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int64_t(i);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return prob[a] > prob[b] || (prob[a] == prob[b] && a < b);
    });
    double kept = 0;
    size_t n = 0;
    while (n < order.size() && (n == 0 || kept < m_topP))
        kept += prob[order[n++]];
    double u = double(m_rng() >> 11) * (1.0 / 9007199254740992.0) * kept;
    for (size_t i = 0; i < n; ++i) {
        u -= prob[order[i]];
        if (u < 0)
            return order[i];
    }
    return order[n - 1];
}

} // namespace tandem
