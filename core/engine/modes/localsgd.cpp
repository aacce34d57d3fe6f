// Local-SGD (DiLoCo's outer/inner split): each worker takes `local_steps` optimizer steps of
// the run's own optimizer over consecutive slices of its share and returns its parameter
// delta. The coordinator averages the deltas by share and applies them with Nesterov momentum
// at the outer learning rate. Communication happens once per round instead of once per step.
//
// Both sides are here: the coordinator's LocalSgdPolicy, and the round a worker runs
// (LocalSgdRound), in process or over the wire.

#include "engine/modes/rounds.h"
#include "engine/modes/sync.h"
#include "engine/step/replica.h"
#include "model/model.h"

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
        const double scale = innerLrScale(ctx.cfg, counts);
        m_note.observe(ctx.pool, ctx.cfg, counts, lr, scale);
        req.local = localSgdRound(int(std::clamp<long long>(steps, 1, ctx.cfg.localSteps * 4LL)),
                                  lr * scale);
    }
    double serverLr(const StepContext& ctx, double) const override { return ctx.cfg.outerLr; }

private:
    InnerLrNote m_note;
};

// Where the worker's weights stood when the round began.
struct RoundStart final : RoundState {
    std::vector<at::Tensor> params;
};

class LocalSgdRound final : public LocalRound {
public:
    using LocalRound::LocalRound;

    std::unique_ptr<RoundState> adopt(std::unique_ptr<RoundState> held) const override {
        if (held && dynamic_cast<RoundStart*>(held.get()))
            return held;
        return std::make_unique<RoundStart>();
    }
    void begin(ModelReplica& replica, RoundState& state, bool) const override {
        auto& start = static_cast<RoundStart&>(state).params;
        at::NoGradGuard noGrad;
        start.clear();
        for (const at::Tensor& p : replica.params())
            start.push_back(p.detach().clone());
    }
    // The parameter delta, start - end: the coordinator's outer optimizer takes it as a
    // gradient. It is computed in the start's own memory, which the round needs no more (the
    // next one takes its start afresh), so the round ends with one copy of the model, not two.
    std::vector<at::Tensor> end(ModelReplica& replica, RoundState& state) const override {
        auto& start = static_cast<RoundStart&>(state).params;
        at::NoGradGuard noGrad;
        std::vector<at::Tensor> delta;
        delta.reserve(start.size());
        for (size_t i = 0; i < start.size(); ++i)
            delta.push_back(start[i].sub_(replica.params()[i].detach()).to(at::kCPU));
        start.clear();
        return delta;
    }

    // The weights go whole the first time and as the outer-wire difference from what the
    // worker holds after that; nothing when it holds them already.
    void shapeForWire(RemoteRoundSide& side, WorkRequest& req, const ModelLayout&, DType wire,
                      OuterWire outer) override {
        side.awaitFragment = -1;
        side.awaitValues = -1;
        if (!req.params || !req.packedWeights)
            return;
        if (req.weightsVersion == side.mirrorVersion) {
            req.packedWeights.reset();
            return;
        }
        at::Tensor flat = flattenParams(*req.params);
        if (side.mirror.empty()) {
            // What the worker decodes from the bundle in the run's wire dtype.
            side.mirror.sentWhole(flat.to(scalarTypeOf(wire)).to(at::kFloat));
        } else {
            req.packedWeights =
                std::make_shared<const QByteArray>(side.mirror.update(flat, *req.buffers, outer));
            req.weightsDelta = true;
        }
        side.mirrorVersion = req.weightsVersion;
    }
    void describe(wire::Assign& a) const override {
        a.innerSteps = innerSteps;
        a.lr = innerLr;
    }
    Status takeUpdate(OuterWorkerSide& outer, const ModelLayout& layout, const QByteArray& update,
                      ModelReplica& replica) override {
        return outer.applyDifference(update, layout, replica.params(), replica.buffers());
    }
    Expected<QByteArray> pack(OuterWorkerSide& outer, const ModelLayout&,
                              WorkResult& r) const override {
        return outer.packDelta(std::move(r.grads), r.buffers);
    }
};

} // namespace

std::shared_ptr<LocalRound> localSgdRound(int innerSteps, double innerLr) {
    return std::make_shared<LocalSgdRound>(innerSteps, innerLr);
}

// With an outer learning rate of 1 and no momentum, the outer step takes the averaged weights as
// they are.
OptimizerConfig outerOptimizer(const RunConfig& cfg) {
    return outerStepOptimizer(cfg.outerMomentum);
}

std::unique_ptr<StepPolicy> makeLocalSgdPolicy() {
    return std::make_unique<LocalSgdPolicy>();
}

// Local-SGD streams its exchange when the model is cut into fragments (modes/streaming.cpp).
std::unique_ptr<StepPolicy> makeModeLocalSgd(const RunConfig& cfg) {
    return cfg.fragments > 1 ? makeStreamingPolicy() : makeLocalSgdPolicy();
}

} // namespace tandem
