#include "engine/steppolicy.h"

namespace tandem {

double StepContext::lr() const {
    return scheduledLr(cfg.lr, step, cfg.warmupSteps, totalSteps, cfg.schedule == Schedule::Cosine);
}

uint64_t StepContext::seedFor(size_t worker, uint64_t round) const {
    uint64_t s = cfg.seed ^ (uint64_t(step) << 8) ^ (worker + (round << 16));
    return splitmix64(s);
}

std::unique_ptr<StepPolicy> makeStepPolicy(const RunConfig& cfg) {
    switch (cfg.mode) {
    case TrainMode::Sync:
    case TrainMode::Auto: // resolved before a policy is made
        return makeSyncPolicy();
    case TrainMode::LocalSgd:
        return cfg.fragments > 1 ? makeStreamingPolicy() : makeLocalSgdPolicy();
    case TrainMode::Async:
        return makeAsyncPolicy();
    }
    return makeSyncPolicy();
}

std::vector<std::vector<int64_t>> sliceBatch(const std::vector<int64_t>& indices,
                                             const std::vector<int64_t>& counts) {
    std::vector<std::vector<int64_t>> out(counts.size());
    size_t pos = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
        const size_t n = std::min(size_t(std::max<int64_t>(0, counts[i])), indices.size() - pos);
        out[i].assign(indices.begin() + long(pos), indices.begin() + long(pos + n));
        pos += n;
    }
    return out;
}

} // namespace tandem
