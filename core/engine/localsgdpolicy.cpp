// Local-SGD (DiLoCo's outer/inner split): each worker takes `local_steps` optimizer steps of
// the run's own optimizer over consecutive slices of its share and returns its parameter
// delta. The coordinator averages the deltas by share and applies them with Nesterov momentum
// at the outer learning rate. Communication happens once per round instead of once per step.

#include "engine/syncpolicy.h"

#include <algorithm>
#include <cmath>

namespace tandem {

namespace {

class LocalSgdPolicy final : public SyncPolicy {
public:
    int64_t samplesPerStep(const RunConfig& cfg) const override {
        return int64_t(cfg.batch) * cfg.localSteps;
    }
    OptimizerConfig serverOptimizer(const RunConfig& cfg, const OptimizerConfig&) const override {
        return outerOptimizer(cfg);
    }

protected:
    int64_t passes(const RunConfig& cfg) const override { return cfg.localSteps; }
    // Each worker takes as many inner steps of about the run's batch as its share holds: a
    // faster worker is given more samples and so takes more steps, and the round ends for
    // both at once. The outer update weighs each delta by the samples behind it; the inner
    // learning rate follows the split (innerLrScale).
    void shapeRequest(WorkRequest& req, StepContext& ctx, double lr,
                      const std::vector<int64_t>& counts) override {
        const auto steps = std::llround(double(req.indices.size()) / double(ctx.cfg.batch));
        req.innerSteps = int(std::clamp<long long>(steps, 1, ctx.cfg.localSteps * 4LL));
        const double scale = innerLrScale(ctx.cfg, counts);
        m_note.observe(ctx.pool, ctx.cfg, counts, lr, scale);
        req.innerLr = lr * scale;
    }
    double serverLr(const StepContext& ctx, double) const override { return ctx.cfg.outerLr; }

private:
    InnerLrNote m_note;
};

} // namespace

OptimizerConfig outerOptimizer(const RunConfig& cfg) {
    OptimizerConfig outer;
    outer.kind = OptimizerKind::Sgd;
    outer.momentum = cfg.outerMomentum;
    // Nesterov needs momentum; at 0 the outer step is plain SGD (with an outer learning rate
    // of 1, it takes the averaged weights as they are).
    outer.nesterov = cfg.outerMomentum > 0;
    return outer;
}

std::unique_ptr<StepPolicy> makeLocalSgdPolicy() {
    return std::make_unique<LocalSgdPolicy>();
}

} // namespace tandem
