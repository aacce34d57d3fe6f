// Asynchronous parameter server: every worker takes batches of B on its own and its gradient
// is applied the moment it arrives, unless the weights moved on by more than the staleness
// bound since the worker read them; such gradients are dropped and counted. A worker that
// leaves hands its outstanding samples back, so none is skipped.

#include "engine/coordinator/steppolicy.h"
#include "engine/wire/wiretensors.h"

#include <QElapsedTimer>

#include <deque>
#include <optional>

namespace tandem {

namespace {

class AsyncPolicy final : public StepPolicy {
public:
    Expected<EpochEnd> runEpoch(StepContext& ctx) override;

private:
    struct Outstanding {
        std::vector<int64_t> indices;
        int64_t version = 0;
        qint64 submittedNs = 0;
        std::shared_ptr<std::vector<at::Tensor>> params, buffers; // the snapshot it reads
    };
    // Gives every idle worker a batch; returns whether any work is outstanding.
    bool handOut(StepContext& ctx);
    // Takes in the results that are ready; applies the fresh ones unless `stopping`.
    Status collect(StepContext& ctx, bool stopping);

    std::vector<std::optional<Outstanding>> m_out; // per pool member
    std::deque<std::vector<int64_t>> m_returned;   // samples of workers that left
    QElapsedTimer m_wall;
    qint64 m_lastApplied = 0;
    QByteArray m_packSpare; // the memory weights are packed into, version after version
};

Expected<EpochEnd> AsyncPolicy::runEpoch(StepContext& ctx) {
    m_out.clear();
    m_returned.clear();
    m_wall.start();
    m_lastApplied = 0;
    bool stop = false;
    for (;;) {
        if (!stop) {
            const qint64 before = m_wall.nsecsElapsed();
            stop = ctx.gate() == Gate::Stop;
            // Time spent paused is not training time.
            m_lastApplied += m_wall.nsecsElapsed() - before;
        }
        m_out.resize(ctx.pool.size());
        const bool anyOut = !stop ? handOut(ctx)
                                  : std::any_of(m_out.begin(), m_out.end(),
                                                [](const auto& o) { return o.has_value(); });
        if (!anyOut) {
            if (stop || (ctx.sampler.remaining() == 0 && m_returned.empty()))
                break;
            if (!ctx.pool.anyAlive())
                if (auto st = ctx.waitForAnyWorker(); !st)
                    return st.error();
            continue;
        }
        ctx.pool.waitUntil(
            [&] {
                for (size_t w = 0; w < m_out.size(); ++w)
                    if (m_out[w] && ctx.pool.at(w).link->ready())
                        return true;
                return false;
            },
            200);
        if (auto st = collect(ctx, stop); !st)
            return st.error();
    }
    return stop ? EpochEnd::Stopped : EpochEnd::Complete;
}

bool AsyncPolicy::handOut(StepContext& ctx) {
    bool anyOut = false;
    for (size_t w = 0; w < ctx.pool.size(); ++w) {
        PoolMember& m = ctx.pool.at(w);
        if (m.alive() && !m_out[w]) {
            std::vector<int64_t> idx;
            if (!m_returned.empty()) {
                idx = std::move(m_returned.front());
                m_returned.pop_front();
            } else if (ctx.sampler.remaining() > 0) {
                idx = ctx.sampler.next(ctx.cfg.batch);
            }
            if (!idx.empty()) {
                Outstanding o;
                o.indices = idx;
                o.version = ctx.step;
                o.submittedNs = m_wall.nsecsElapsed();
                WorkRequest req;
                req.step = ctx.step;
                req.indices = std::move(idx);
                req.seed = ctx.seedFor(w);
                req.weightsVersion = ctx.step;
                if (m.remote) {
                    req.packedWeights = std::make_shared<const QByteArray>(
                        packBundle(ctx.master.params, ctx.master.buffers, ctx.wire, &m_packSpare));
                } else {
                    // The optimizer changes the master weights while this worker reads them:
                    // it gets a copy of its own.
                    at::NoGradGuard g;
                    o.params = std::make_shared<std::vector<at::Tensor>>();
                    o.buffers = std::make_shared<std::vector<at::Tensor>>();
                    for (const at::Tensor& p : ctx.master.params)
                        o.params->push_back(p.detach().clone());
                    for (const at::Tensor& b : ctx.master.buffers)
                        o.buffers->push_back(b.detach().clone());
                    req.params = o.params.get();
                    req.buffers = o.buffers.get();
                }
                m.link->submit(std::move(req));
                m_out[w] = std::move(o);
            }
        }
        anyOut = anyOut || m_out[w].has_value();
    }
    return anyOut;
}

Status AsyncPolicy::collect(StepContext& ctx, bool stopping) {
    for (size_t w = 0; w < m_out.size(); ++w) {
        PoolMember& m = ctx.pool.at(w);
        if (!m_out[w] || !m.link->ready())
            continue;
        Outstanding o = std::move(*m_out[w]);
        m_out[w].reset();
        auto r = m.link->wait();
        if (!r) {
            ctx.pool.drop(w, r.error(), QStringLiteral("its samples go to the others"), ctx.step);
            m_returned.push_back(std::move(o.indices));
            continue;
        }
        const double rtt = double(m_wall.nsecsElapsed() - o.submittedNs) / 1e6;
        ctx.pool.record(w, *r, rtt, false);
        m.stats.samples += r->samples;
        ++m.served;
        if (stopping)
            continue; // the run is ending: finished work is not applied
        if (ctx.step - o.version > ctx.cfg.staleness) {
            ++ctx.staleDropped;
            continue;
        }
        const double lr = ctx.lr();
        {
            at::NoGradGuard g;
            for (size_t b = 0; b < ctx.master.buffers.size(); ++b)
                ctx.master.buffers[b].copy_(r->buffers[b]);
        }
        ctx.optimizer.step(r->grads, lr);
        const qint64 now = m_wall.nsecsElapsed();
        StepOutcome out;
        out.samples = r->samples;
        out.lossSum = r->lossSum;
        out.correct = r->correct;
        out.counted = r->counted;
        out.pairs = r->pairs;
        out.lr = lr;
        out.stepMs = double(now - m_lastApplied) / 1e6;
        m_lastApplied = now;
        WorkerStepStats ws;
        ws.name = m.stats.name;
        ws.samples = r->samples;
        ws.computeMs = r->computeMs;
        out.workers << ws;
        if (auto st = ctx.applied(out); !st)
            return st;
    }
    return success();
}

} // namespace

std::unique_ptr<StepPolicy> makeAsyncPolicy() {
    return std::make_unique<AsyncPolicy>();
}

std::unique_ptr<StepPolicy> makeModeAsync(const RunConfig&) {
    return makeAsyncPolicy();
}

} // namespace tandem
