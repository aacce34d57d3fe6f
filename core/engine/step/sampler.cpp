#include "engine/step/sampler.h"

#include <algorithm>
#include <cmath>

namespace tandem {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

EpochSampler::EpochSampler(int64_t size, uint64_t seed)
    : m_size(std::max<int64_t>(size, 0))
    , m_seed(seed) {
    shuffle();
}

void EpochSampler::shuffle() {
    m_perm.resize(static_cast<size_t>(m_size));
    for (int64_t i = 0; i < m_size; ++i)
        m_perm[static_cast<size_t>(i)] = i;
    uint64_t state = m_seed * 0x2545f4914f6cdd1dULL + static_cast<uint64_t>(m_epoch) + 1;
    // Fisher-Yates with an unbiased bounded draw (rejection of the short last bucket).
    for (int64_t i = m_size - 1; i > 0; --i) {
        const uint64_t n = static_cast<uint64_t>(i) + 1;
        const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
        uint64_t r;
        do
            r = splitmix64(state);
        while (r >= limit);
        std::swap(m_perm[static_cast<size_t>(i)], m_perm[static_cast<size_t>(r % n)]);
    }
}

std::vector<int64_t> EpochSampler::next(int64_t batch) {
    const int64_t n = std::min(batch, remaining());
    std::vector<int64_t> out(m_perm.begin() + m_pos, m_perm.begin() + m_pos + n);
    m_pos += n;
    return out;
}

void EpochSampler::nextEpoch() {
    ++m_epoch;
    m_pos = 0;
    shuffle();
}

bool EpochSampler::seek(int epoch, int64_t position) {
    if (epoch < 0 || position < 0 || position > m_size)
        return false;
    if (epoch != m_epoch) {
        m_epoch = epoch;
        shuffle();
    }
    m_pos = position;
    return true;
}

double scheduledLr(double base, int64_t step, int64_t warmup, int64_t total, bool cosine) {
    if (warmup > 0 && step < warmup)
        return base * double(step + 1) / double(warmup);
    if (!cosine || total <= warmup)
        return base;
    const double progress = std::min(1.0, double(step - warmup) / double(total - warmup));
    return base * 0.5 * (1.0 + std::cos(kPi * progress));
}

} // namespace tandem
