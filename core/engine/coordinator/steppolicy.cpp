#include "engine/coordinator/steppolicy.h"

#include <algorithm>

namespace tandem {

double StepContext::lr() const {
    return scheduledLr(cfg.lr, step, cfg.warmupSteps, totalSteps, cfg.schedule == Schedule::Cosine);
}

uint64_t StepContext::seedFor(size_t worker, uint64_t round) const {
    uint64_t s = cfg.seed ^ (uint64_t(step) << 8) ^ (worker + (round << 16));
    return splitmix64(s);
}

double innerLrScale(const RunConfig& cfg, const std::vector<int64_t>& counts) {
    if (cfg.innerLrScaling == LrScaling::None)
        return 1.0;
    double sum = 0, squares = 0;
    for (const int64_t n : counts) {
        sum += double(n);
        squares += double(n) * double(n);
    }
    return squares > 0 ? sum * sum / squares : 1.0;
}

void InnerLrNote::observe(WorkerPool& pool, const RunConfig& cfg,
                          const std::vector<int64_t>& counts, double lr, double scale) {
    const auto workers =
        size_t(std::count_if(counts.begin(), counts.end(), [](int64_t n) { return n > 0; }));
    if (workers == m_workers)
        return;
    const bool first = m_workers == 0;
    m_workers = workers;
    if (first && workers <= 1)
        return; // one machine's run: nothing to say
    if (cfg.innerLrScaling == LrScaling::None) {
        pool.note(QStringLiteral("%1 worker(s) share each round; their inner learning rate is "
                                 "%2 as given (--inner-lr-scaling none), so a round moves the "
                                 "model less than one machine's %3 steps would")
                      .arg(workers)
                      .arg(lr, 0, 'g', 4)
                      .arg(cfg.localSteps));
        return;
    }
    pool.note(QStringLiteral("%1 worker(s) share each round; their inner learning rate is %2, "
                             "the run's %3 times %4, so that a round moves the model about as "
                             "far as one machine's %5 steps (--inner-lr-scaling none keeps %3)")
                  .arg(workers)
                  .arg(lr * scale, 0, 'g', 4)
                  .arg(lr, 0, 'g', 4)
                  .arg(scale, 0, 'f', 2)
                  .arg(cfg.localSteps));
}

std::unique_ptr<StepPolicy> makeStepPolicy(const RunConfig& cfg) {
    switch (cfg.mode) {
#define TANDEM_MODE_CASE(value, name)                                                              \
    case TrainMode::value:                                                                         \
        return makeMode##value(cfg);
        TANDEM_TRAIN_MODES(TANDEM_MODE_CASE)
#undef TANDEM_MODE_CASE
    case TrainMode::Auto: // resolved before a policy is made
        break;
    }
    return makeModeSync(cfg);
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

double shareOf(const std::vector<int64_t>& counts, size_t i) {
    int64_t total = 0;
    for (int64_t c : counts)
        total += std::max<int64_t>(0, c);
    return total > 0 && i < counts.size() ? double(std::max<int64_t>(0, counts[i])) / double(total)
                                          : 0.0;
}

} // namespace tandem
