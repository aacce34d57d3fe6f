#pragma once

#include "engine/internal.h"

#include <cstdint>
#include <vector>

namespace tandem {

// Hands out sample indices: every epoch is a fresh permutation of [0, size) drawn from the
// run's seed and the epoch number alone, so a resumed run (or another machine) reproduces it
// from (epoch, position) without storing it. The permutation uses its own generator and
// shuffle, not <random>'s distributions, whose results differ between standard libraries.
class EpochSampler {
public:
    EpochSampler(int64_t size, uint64_t seed);

    int64_t size() const { return m_size; }
    int epoch() const { return m_epoch; }
    int64_t position() const { return m_pos; }
    int64_t remaining() const { return m_size - m_pos; }
    int64_t stepsPerEpoch(int64_t batch) const { return (m_size + batch - 1) / batch; }

    // The next min(batch, remaining()) indices of the current epoch.
    std::vector<int64_t> next(int64_t batch);
    // Moves to the start of the next epoch.
    void nextEpoch();
    // Restores a position saved from epoch() and position().
    bool seek(int epoch, int64_t position);

private:
    void shuffle();

    int64_t m_size;
    uint64_t m_seed;
    int m_epoch = 0;
    int64_t m_pos = 0;
    std::vector<int64_t> m_perm;
};

// splitmix64: small, fast and the same everywhere; used for permutations and step seeds.
uint64_t splitmix64(uint64_t& state);

// Learning rate at a 0-based step: linear warm-up over `warmup` steps, then constant or a
// cosine decay to zero at `total` steps.
double scheduledLr(double base, int64_t step, int64_t warmup, int64_t total, bool cosine);

} // namespace tandem
