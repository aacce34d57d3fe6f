// Streaming local-SGD (the schedule of Streaming DiLoCo): the parameters are cut into F
// fragments (fragments.h), a round is H/F inner steps, and round r's exchange carries fragment
// r mod F only. Rounds are pipelined two deep: every worker holds the next round's assignment
// before it finishes the current one, so it goes straight on training while its fragment's
// delta travels, is combined with the others' and comes back as the fragment's new global
// values with the round after next. The outer optimizer is local-SGD's Nesterov, applied to
// the fragment's parameters only (an undefined gradient leaves a parameter and its momentum
// alone).
//
// What a checkpoint holds: the global weights. Progress a worker has made on a fragment since
// its last exchange (at most H inner steps) lives only on that worker until then.
//
// Both sides are here: the coordinator's StreamingPolicy, and the round a worker runs
// (StreamingRound), whose fragments a worker keeps from round to round in a FragmentTracker.
//
// A sharded run (RunConfig::shard) keeps the outer state on the owners of the ranges: round r is
// step r, which exchanges fragment r mod F (shardstep.h's ShardWindow). Each worker sends its
// fragment's delta to the owners as its round ends, each owner steps its range's part of the
// fragment with the outer optimizer and sends the new values to every machine, where they land
// beside the replica; a worker merges them into the round after next as it would the
// coordinator's (the assignment names the fragment, and its machine holds the values). The
// coordinator's weights take the landed values once every machine holds them, before the round
// after next is handed out.

#include "engine/coordinator/shardconductor.h"
#include "engine/modes/fragments.h"
#include "engine/modes/rounds.h"
#include "engine/modes/sync.h"
#include "engine/step/replica.h"
#include "engine/wire/wiretensors.h"
#include "model/model.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>

namespace tandem {

namespace {

// How long a sharded round waits, once every worker's result is in, for every machine to hold
// its fragment's new values: the owners' weights cross the links while the next round computes.
constexpr int kShardRoundWaitMs = 10 * 60 * 1000;

class StreamingPolicy final : public StepPolicy {
public:
    int64_t samplesPerStep(const RunConfig& cfg) const override {
        return int64_t(cfg.batch) * innerSteps(cfg);
    }
    OptimizerConfig serverOptimizer(const RunConfig& cfg, const OptimizerConfig&) const override {
        return outerOptimizer(cfg);
    }
    Expected<EpochEnd> runEpoch(StepContext& ctx) override;

private:
    struct Slot {
        size_t worker = 0;
        std::vector<int64_t> indices;
        int64_t submittedNs = 0; // arrivalClockNs()
    };
    struct Round {
        int64_t step = 0; // the step it is applied as; a sharded run's step on the owners
        int fragment = 0;
        double lr = 0;
        int64_t planned = 0; // samples the round would hold with every worker timed
        std::vector<Slot> slots;
        // The weights a worker starting this round takes whole: a copy, since the coordinator
        // updates its own while the round runs. The requests point into it.
        std::shared_ptr<ModelTensors> whole;
    };
    enum class Submitted { Round, Nothing, Retry };

    static int64_t innerSteps(const RunConfig& cfg) {
        return std::max(1, cfg.localSteps / std::max(1, cfg.fragments));
    }
    Expected<Submitted> submit(StepContext& ctx);
    std::vector<int64_t> split(StepContext& ctx, const std::vector<size_t>& live, int64_t n);
    std::vector<int64_t> drawSamples(StepContext& ctx, int64_t n);
    Status collect(StepContext& ctx);
    // A sharded round's update, once every result is in (`from`: each one's pool member): this
    // machine's worker's delta goes to the owners, every owner is told whose deltas count and
    // by how much, and once every machine holds the fragment's new values they become the
    // coordinator's.
    Status shardedUpdate(StepContext& ctx, const Round& round, std::vector<WorkResult>& results,
                         const std::vector<size_t>& from, int64_t samples);
    // A sharded round failed (`failure`; `lost`: the machines that went, by device ID) after the
    // results of the first round under way came from the workers `took`: every round under way
    // goes with the setup. Their samples go out again, the workers still computing one are
    // waited for, so that nothing of it reaches the next setup, and the run is set up again on
    // the machines left from the state after the last round applied (StepContext::
    // reformShards), where the rounds begin again with the weights whole.
    Status reform(StepContext& ctx, const Error& failure, const QStringList& lost,
                  const std::vector<size_t>& took);

    std::vector<Fragment> m_fragments;
    std::deque<Round> m_inflight;
    std::deque<int> m_unsent;          // fragments updated and not yet sent to the workers
    std::vector<int64_t> m_returned;   // samples of a dropped worker: handed out first
    std::vector<char> m_started;       // per pool member: it has taken whole weights
    std::vector<int64_t> m_lastResult; // per pool member: when its last result arrived
    int64_t m_rounds = 0;
    QElapsedTimer m_clock;
    qint64 m_lastCollect = 0;
    QByteArray m_packSpare;
    InnerLrNote m_lrNote;
    int64_t m_setup = 0; // the sharded run's setup the workers started in (setups())
};

Expected<EpochEnd> StreamingPolicy::runEpoch(StepContext& ctx) {
    if (m_fragments.empty())
        m_fragments = cutFragments(paramNumels(ctx.master.params), ctx.cfg.fragments);
    if (!m_clock.isValid()) {
        m_clock.start();
        m_lastCollect = 0;
    }
    bool stopping = false;
    for (;;) {
        while (!stopping && m_inflight.size() < 2 &&
               (ctx.sampler.remaining() > 0 || !m_returned.empty())) {
            // The step limit counts the round in flight; gate() also pauses and admits (a
            // sharded run's machines only with no round in flight: a setup ends every step, so
            // the rounds under way are collected first, and the pipeline starts again).
            ctx.inFlight = int(m_inflight.size());
            if ((ctx.cfg.maxSteps > 0 &&
                 ctx.step + int64_t(m_inflight.size()) >= ctx.cfg.maxSteps) ||
                ctx.gate() == Gate::Stop) {
                stopping = true;
                break;
            }
            if (ctx.admitWaiting && !m_inflight.empty())
                break;
            auto s = submit(ctx);
            if (!s)
                return s.error();
            if (*s == Submitted::Nothing)
                break;
        }
        if (m_inflight.empty())
            break;
        if (auto st = collect(ctx); !st)
            return st.error();
    }
    return stopping ? EpochEnd::Stopped : EpochEnd::Complete;
}

// How many of a round's `n` samples each live worker takes. Timed workers share by speed, so
// that their rounds end together. The exchange overlaps training, so a slow link costs no one
// time unless it outlasts a round; a worker whose round, at its best share, would still end
// after the others' is left out as in sync (WorkerPool::roundShares), and measured again now
// and then. A worker not timed yet takes one batch while there are others:
// every worker is handed two rounds before any result is in, and with equal shares of both a
// device a fifth as fast would keep the others waiting for most of that time. Until one is
// timed, a round is that one batch each, and the epoch takes a step or two more.
std::vector<int64_t> StreamingPolicy::split(StepContext& ctx, const std::vector<size_t>& live,
                                            int64_t n) {
    const int64_t passes = innerSteps(ctx.cfg);
    std::vector<size_t> timed;
    for (const size_t w : live)
        if (ctx.pool.timed(w))
            timed.push_back(w);
    const int64_t probe = std::min<int64_t>(ctx.cfg.batch, n / int64_t(live.size()));
    if (live.size() < 2 || timed.size() == live.size() || probe < 1)
        return ctx.pool.roundShares(live, n, passes, m_rounds);
    const auto untimed = int64_t(live.size() - timed.size());
    const std::vector<int64_t> byTime =
        timed.empty() ? std::vector<int64_t>{}
                      : ctx.pool.shares(timed, n - probe * untimed, passes, ctx.step, false);
    std::vector<int64_t> counts;
    size_t k = 0;
    for (const size_t w : live)
        counts.push_back(ctx.pool.timed(w) ? byTime[k++] : probe);
    return counts;
}

std::vector<int64_t> StreamingPolicy::drawSamples(StepContext& ctx, int64_t n) {
    std::vector<int64_t> indices;
    const auto fromReturned = std::min<int64_t>(n, int64_t(m_returned.size()));
    indices.assign(m_returned.begin(), m_returned.begin() + fromReturned);
    m_returned.erase(m_returned.begin(), m_returned.begin() + fromReturned);
    const std::vector<int64_t> fresh = ctx.sampler.next(n - int64_t(indices.size()));
    indices.insert(indices.end(), fresh.begin(), fresh.end());
    return indices;
}

Expected<StreamingPolicy::Submitted> StreamingPolicy::submit(StepContext& ctx) {
    const std::vector<size_t> live = ctx.pool.live();
    if (live.empty()) {
        if (!m_inflight.empty())
            return Submitted::Nothing; // what is in flight comes back first
        if (auto st = ctx.waitForAnyWorker(); !st)
            return st.error();
        return Submitted::Retry;
    }
    m_started.resize(ctx.pool.size(), 0);
    m_lastResult.resize(ctx.pool.size(), 0);
    if (ctx.shards && m_setup != ctx.shards->setups()) {
        // A setup lands nothing of the steps before it: every machine takes the weights whole,
        // which hold every round collected.
        m_setup = ctx.shards->setups();
        std::fill(m_started.begin(), m_started.end(), 0);
        m_unsent.clear();
    }
    Round round;
    round.step = ctx.step + int64_t(m_inflight.size());
    // A sharded run's fragment follows the step, which every machine knows.
    round.fragment = int((ctx.shards ? round.step : m_rounds) % int64_t(m_fragments.size()));
    round.lr = ctx.lr();
    round.planned =
        std::min(samplesPerStep(ctx.cfg), ctx.sampler.remaining() + int64_t(m_returned.size()));
    const std::vector<int64_t> counts = split(ctx, live, round.planned);
    const std::vector<int64_t> indices =
        drawSamples(ctx, std::accumulate(counts.begin(), counts.end(), int64_t(0)));
    const auto slices = sliceBatch(indices, counts);
    const double lrScale = innerLrScale(ctx.cfg, counts);
    m_lrNote.observe(ctx.pool, ctx.cfg, counts, round.lr, lrScale);
    const int merge = m_unsent.empty() ? -1 : m_unsent.front();
    if (!m_unsent.empty())
        m_unsent.pop_front();
    at::Tensor mergeValues;
    std::vector<at::Tensor> mergeBuffers;
    if (merge >= 0) {
        mergeValues = gatherFragment(ctx.master.params, m_fragments[size_t(merge)]);
        for (const at::Tensor& b : ctx.master.buffers)
            mergeBuffers.push_back(b.detach().to(at::kCPU).clone());
    }
    std::shared_ptr<const QByteArray> packed;
    round.slots.reserve(live.size());
    for (size_t j = 0; j < live.size(); ++j) {
        const size_t w = live[j];
        PoolMember& m = ctx.pool.at(w);
        if (slices[j].empty()) {
            // Left out of this round: it misses the merges sent with it, so it starts again
            // from whole weights when it takes part again.
            m_started[w] = 0;
            continue;
        }
        WorkRequest req;
        req.step = ctx.step + int64_t(m_inflight.size());
        req.indices = slices[j];
        req.share = shareOf(counts, j);
        req.seed = ctx.seedFor(w, uint64_t(m_rounds));
        req.weightsVersion = m_rounds;
        const auto steps = std::llround(double(req.indices.size()) / double(ctx.cfg.batch));
        StreamingAssignment sa;
        sa.fragments = ctx.cfg.fragments;
        sa.send = round.fragment;
        if (!m_started[w]) {
            if (!round.whole) {
                round.whole = std::make_shared<ModelTensors>();
                for (const at::Tensor& p : ctx.master.params)
                    round.whole->params.push_back(p.detach().clone());
                for (const at::Tensor& b : ctx.master.buffers)
                    round.whole->buffers.push_back(b.detach().clone());
            }
            req.params = &round.whole->params;
            req.buffers = &round.whole->buffers;
            if (m.remote) {
                if (!packed)
                    packed = std::make_shared<const QByteArray>(
                        packBundle(ctx.master.params, ctx.master.buffers, ctx.wire, &m_packSpare));
                req.packedWeights = packed;
            }
            m_started[w] = 1;
        } else if (merge >= 0) {
            sa.merge = merge;
            sa.mergeValues = mergeValues;
            sa.mergeBuffers = mergeBuffers;
        }
        req.local = streamingRound(int(std::clamp<long long>(steps, 1, innerSteps(ctx.cfg) * 4)),
                                   round.lr * lrScale, std::move(sa));
        round.slots.push_back(Slot{w, req.indices, arrivalClockNs()});
        m.link->submit(std::move(req));
    }
    ++m_rounds;
    m_inflight.push_back(std::move(round));
    return Submitted::Round;
}

Status StreamingPolicy::collect(StepContext& ctx) {
    Round& round = m_inflight.front();
    std::vector<WorkResult> results;
    std::vector<size_t> from;
    QStringList lost, lostIds;
    StepOutcome out;
    int64_t samples = 0;
    for (Slot& slot : round.slots) {
        PoolMember& m = ctx.pool.at(slot.worker);
        if (!m.alive()) {
            m_returned.insert(m_returned.end(), slot.indices.begin(), slot.indices.end());
            lost << m.stats.name;
            lostIds << m.link->deviceId();
            continue;
        }
        auto r = m.link->wait();
        if (!r) {
            ctx.pool.drop(slot.worker, r.error(),
                          QStringLiteral("its %1 sample(s) of this round go to the others")
                              .arg(slot.indices.size()),
                          ctx.step);
            m_returned.insert(m_returned.end(), slot.indices.begin(), slot.indices.end());
            lost << m.stats.name;
            lostIds << m.link->deviceId();
            continue;
        }
        // Its time on this round: from when it could start it (its previous result) to when
        // this result arrived, not to when it is collected here. Results are collected in
        // round order, so a fast worker's result waits while a slow one's is awaited; timed
        // to its collection, that wait would count as the fast worker's overhead and shift
        // the next rounds' samples to the slow one, which makes it slower still.
        const int64_t arrived = r->arrivedNs > 0 ? r->arrivedNs : arrivalClockNs();
        const double ms =
            double(arrived - std::max(slot.submittedNs, m_lastResult[slot.worker])) / 1e6;
        m_lastResult[slot.worker] = arrived;
        ctx.pool.record(slot.worker, *r, ms, true);
        WorkerStepStats ws;
        ws.name = m.stats.name;
        ws.samples = r->samples;
        ws.computeMs = r->computeMs;
        ws.waitMs = std::max(0.0, ms - r->computeMs);
        m.stats.samples += r->samples;
        m.served += r->samples > 0 ? 1 : 0;
        m.stats.waitS += ws.waitMs / 1e3;
        out.workers << ws;
        out.lossSum += r->lossSum;
        out.correct += r->correct;
        out.counted += r->counted;
        out.pairs.add(r->pairs);
        samples += r->samples;
        out.indices.insert(out.indices.end(), slot.indices.begin(), slot.indices.end());
        results.push_back(std::move(*r));
        from.push_back(slot.worker);
    }
    // A machine of a sharded run takes its range with it: the run goes on without it where the
    // logs rebuild the run's state, and stops at its checkpoint where they cannot.
    if (ctx.shards && !lost.isEmpty())
        return reform(ctx,
                      makeError(ErrorCode::Runtime,
                                QStringLiteral("%1, a machine of the sharded run, was lost "
                                               "during round %2")
                                    .arg(lost.join(QStringLiteral(", ")))
                                    .arg(round.step + 1)),
                      lostIds, from);
    const int fragment = round.fragment;
    const double lr = round.lr;
    const int64_t planned = round.planned;
    if (samples == 0) {
        m_inflight.pop_front();
        return success(); // every worker of the round failed; its samples go out again
    }
    if (ctx.shards) {
        if (auto st = shardedUpdate(ctx, round, results, from, samples); !st)
            return reform(ctx, st.error(), lostIds, from);
    } else {
        std::vector<at::Tensor> grads = combineResults(ctx.master, results, double(samples));
        ctx.optimizer.step(grads, ctx.cfg.outerLr);
    }
    m_inflight.pop_front();
    m_unsent.push_back(fragment);
    const qint64 now = m_clock.nsecsElapsed();
    out.samples = samples;
    out.shortBy = std::max<int64_t>(0, planned - samples);
    out.lr = lr;
    out.stepMs = double(now - m_lastCollect) / 1e6;
    m_lastCollect = now;
    return ctx.applied(out);
}

Status StreamingPolicy::shardedUpdate(StepContext& ctx, const Round& round,
                                      std::vector<WorkResult>& results,
                                      const std::vector<size_t>& from, int64_t samples) {
    ShardConductor& shards = *ctx.shards;
    const Fragment& f = m_fragments[size_t(round.fragment)];
    std::vector<std::pair<QString, double>> counted;
    for (size_t k = 0; k < results.size(); ++k) {
        const QString id = ctx.pool.at(from[k]).link->deviceId();
        if (id.isEmpty()) { // this machine's worker: its delta goes to the owners from here
            const QByteArray bytes = packFragment(results[k].grads, f, ctx.wire);
            shards.ownGradients(round.step, bytes, bytes.size());
            results[k].grads.clear();
        }
        // The order and weights combineResults() adds the deltas in.
        counted.emplace_back(id.isEmpty() ? shards.selfId() : id,
                             double(results[k].samples) / double(samples));
    }
    shards.close(round.step, ctx.cfg.outerLr, counted);
    if (auto st = shards.waitUpdated(round.step, kShardRoundWaitMs); !st)
        return st;
    auto landed = shards.takeLanded(round.fragment, round.step);
    if (!landed)
        return landed.error();
    copyFragment(ctx.master.params, f, *landed);
    combineBuffers(ctx.master, results, double(samples));
    return success();
}

Status StreamingPolicy::reform(StepContext& ctx, const Error& failure, const QStringList& lost,
                               const std::vector<size_t>& took) {
    for (size_t k = 0; k < m_inflight.size(); ++k)
        for (const Slot& slot : m_inflight[k].slots) {
            PoolMember& m = ctx.pool.at(slot.worker);
            const bool collected =
                k == 0 && std::find(took.begin(), took.end(), slot.worker) != took.end();
            if (k == 0 && !collected)
                continue; // its samples went back as it was found gone
            if (k > 0 && m.alive())
                if (auto r = m.link->wait(); !r)
                    ctx.pool.drop(slot.worker, r.error(),
                                  QStringLiteral("its %1 sample(s) of this round go to the others")
                                      .arg(slot.indices.size()),
                                  ctx.step);
            m_returned.insert(m_returned.end(), slot.indices.begin(), slot.indices.end());
        }
    m_inflight.clear();
    m_unsent.clear();
    if (!ctx.reformShards)
        return failure;
    return ctx.reformShards(failure, lost);
}

// A worker's fragments: the global values each was last merged at, and where it was sent from.
struct Fragments final : RoundState {
    FragmentTracker tracker;
};

class StreamingRound final : public LocalRound {
public:
    StreamingRound(int innerSteps, double innerLr, StreamingAssignment a)
        : LocalRound(innerSteps, innerLr)
        , m_a(std::move(a)) {}

    bool pipelined() const override { return true; }
    std::unique_ptr<RoundState> adopt(std::unique_ptr<RoundState> held) const override {
        if (held && dynamic_cast<Fragments*>(held.get()))
            return held;
        return std::make_unique<Fragments>();
    }
    // Starts the fragments afresh from whole weights, or merges the fragment the round brings.
    void begin(ModelReplica& replica, RoundState& state, bool tookWhole) const override {
        FragmentTracker& t = static_cast<Fragments&>(state).tracker;
        if (tookWhole || !t.started() || t.fragments() != m_a.fragments) {
            t.restart(replica.params(), m_a.fragments);
        } else if (m_a.merge >= 0 && m_a.mergeValues.defined()) {
            if (m_a.merge >= t.count() || m_a.mergeValues.numel() != t.at(m_a.merge).count)
                throw std::runtime_error("a fragment update that does not fit the model");
            t.merge(m_a.merge, m_a.mergeValues, replica.params());
            at::NoGradGuard noGrad;
            for (size_t i = 0; i < m_a.mergeBuffers.size() && i < replica.buffers().size(); ++i)
                replica.buffers()[i].copy_(m_a.mergeBuffers[i]);
        }
        if (m_a.send < 0 || m_a.send >= t.count())
            throw std::runtime_error("asked for a fragment the model does not have");
    }
    // Fragment `send`'s delta, and nothing for the other parameters.
    std::vector<at::Tensor> end(ModelReplica& replica, RoundState& state) const override {
        FragmentTracker& t = static_cast<Fragments&>(state).tracker;
        return fragmentGrads(t.delta(m_a.send, replica.params()), t.at(m_a.send), replica.params());
    }

    // Whole weights the first time, then one fragment's difference; the delta that comes back
    // covers the fragment asked for.
    void shapeForWire(RemoteRoundSide& side, WorkRequest& req, const ModelLayout& layout,
                      DType wire, OuterWire outer) override {
        if (side.fragments.empty())
            side.fragments = cutFragments(paramNumels(layout), m_a.fragments);
        if (req.params && req.packedWeights) {
            side.mirror.sentWhole(flattenParams(*req.params).to(scalarTypeOf(wire)).to(at::kFloat));
            m_sentMerge = -1;
        } else {
            req.packedWeights.reset();
            if (m_a.merge >= 0 && m_a.mergeValues.defined() && !side.mirror.empty()) {
                req.packedWeights = std::make_shared<const QByteArray>(side.mirror.updateFragment(
                    m_a.mergeValues, side.fragments[size_t(m_a.merge)], m_a.mergeBuffers, outer));
                req.weightsDelta = true;
                m_sentMerge = m_a.merge;
            } else {
                m_sentMerge = -1;
            }
        }
        req.params = nullptr;
        side.awaitFragment = m_a.send;
        side.awaitValues = side.fragments[size_t(m_a.send)].count;
    }
    void describe(wire::Assign& a) const override {
        a.innerSteps = innerSteps;
        a.lr = innerLr;
        a.fragments = m_a.fragments;
        a.sendFragment = m_a.send;
        a.mergeFragment = m_sentMerge;
    }
    // The fragment's new global values, from the difference the coordinator sent.
    Status takeUpdate(OuterWorkerSide& outer, const ModelLayout& layout, const QByteArray& update,
                      ModelReplica& replica) override {
        const std::vector<Fragment> fragments = cutFragments(paramNumels(layout), m_a.fragments);
        const auto count = int(fragments.size());
        if (m_a.merge < 0)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("a fragment update that names no fragment"));
        if (m_a.merge >= count)
            return outOfRange(m_a.merge, count);
        auto global =
            outer.applyFragment(update, layout, fragments[size_t(m_a.merge)], replica.buffers());
        if (!global)
            return global.error();
        m_a.mergeValues = std::move(*global);
        return success();
    }
    // A sharded run's: the owners' values of the fragment, which landed beside the replica.
    Status takeLanded(const ModelLayout& layout, const std::vector<at::Tensor>& values) override {
        const std::vector<Fragment> fragments = cutFragments(paramNumels(layout), m_a.fragments);
        if (m_a.merge < 0 || m_a.merge >= int(fragments.size()))
            return outOfRange(m_a.merge, int(fragments.size()));
        const Fragment& f = fragments[size_t(m_a.merge)];
        if (values.size() != layout.paramShapes.size())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("fragment %1's values landed for %2 tensors; the "
                                            "model has %3")
                                 .arg(m_a.merge + 1)
                                 .arg(values.size())
                                 .arg(layout.paramShapes.size()));
        for (size_t i = f.firstParam; i < f.endParam; ++i)
            if (!values[i].defined())
                return makeError(ErrorCode::Corrupt,
                                 QStringLiteral("fragment %1's values landed without tensor %2")
                                     .arg(m_a.merge + 1)
                                     .arg(i + 1));
        m_a.mergeValues = gatherFragment(values, f);
        return success();
    }
    Expected<QByteArray> pack(OuterWorkerSide& outer, const ModelLayout& layout,
                              WorkResult& r) const override {
        const std::vector<Fragment> fragments = cutFragments(paramNumels(layout), m_a.fragments);
        if (m_a.send >= int(fragments.size()))
            return outOfRange(m_a.send, int(fragments.size())).error();
        return outer.packFragmentDelta(gatherFragment(r.grads, fragments[size_t(m_a.send)]),
                                       r.buffers, m_a.send);
    }

private:
    static Status outOfRange(int k, int count) {
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the coordinator named fragment %1 of a model cut in %2")
                             .arg(k)
                             .arg(count));
    }

    StreamingAssignment m_a;
    // The fragment the round merges on a remote worker (-1: none): the wire's update brings it,
    // or, in a sharded run, which shapes nothing for the wire, the owners did.
    int m_sentMerge = m_a.merge;
};

} // namespace

std::shared_ptr<LocalRound> streamingRound(int innerSteps, double innerLr,
                                           StreamingAssignment assignment) {
    return std::make_shared<StreamingRound>(innerSteps, innerLr, std::move(assignment));
}

std::unique_ptr<StepPolicy> makeStreamingPolicy() {
    return std::make_unique<StreamingPolicy>();
}

} // namespace tandem
