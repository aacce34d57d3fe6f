// Local-SGD (DiLoCo's outer/inner split): each worker takes `local_steps` optimizer steps of
// the run's own optimizer over consecutive slices of its share and returns its parameter
// delta. The coordinator averages the deltas by share and applies them with Nesterov momentum
// at the outer learning rate. Communication happens once per round instead of once per step.

#include "engine/syncpolicy.h"

namespace tandem {

namespace {

class LocalSgdPolicy final : public SyncPolicy {
public:
    int64_t samplesPerStep(const RunConfig& cfg) const override {
        return int64_t(cfg.batch) * cfg.localSteps;
    }
    OptimizerConfig serverOptimizer(const RunConfig& cfg, const OptimizerConfig&) const override {
        OptimizerConfig outer;
        outer.kind = OptimizerKind::Sgd;
        outer.momentum = cfg.outerMomentum;
        outer.nesterov = true;
        return outer;
    }

protected:
    int64_t passes(const RunConfig& cfg) const override { return cfg.localSteps; }
    void shapeRequest(WorkRequest& req, const StepContext& ctx, double lr) const override {
        req.innerSteps = ctx.cfg.localSteps;
        req.innerLr = lr;
    }
    double serverLr(const StepContext& ctx, double) const override { return ctx.cfg.outerLr; }
};

} // namespace

std::unique_ptr<StepPolicy> makeLocalSgdPolicy() {
    return std::make_unique<LocalSgdPolicy>();
}

} // namespace tandem
