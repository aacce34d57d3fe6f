#include "engine/modes/sync.h"

#include "engine/coordinator/shardconductor.h"
#include "engine/wire/wiretensors.h"
#include "model/torchcompat.h"
#include "model/trafficledger.h"

#include <QElapsedTimer>

#include <functional>

namespace tandem {

namespace {
// Trainable values from which a step's update (the shares combined, then the optimizer's step)
// runs on the compute thread: at a million, Adam's serial pass takes milliseconds.
constexpr int64_t kLargeUpdateValues = int64_t(1) << 20;
// How long a sharded step waits, once every worker's result is in, for the owners to hold the
// gradients and for the machines to hold the new weights: a lost link says so sooner.
constexpr int kShardWaitMs = 10 * 60 * 1000;
} // namespace

std::unique_ptr<StepPolicy> makeSyncPolicy() {
    return std::make_unique<SyncPolicy>();
}

Expected<EpochEnd> SyncPolicy::runEpoch(StepContext& ctx) {
    while (ctx.sampler.remaining() > 0) {
        if (ctx.gate() == Gate::Stop)
            return EpochEnd::Stopped;
        if (auto st = step(ctx); !st)
            return st.error();
    }
    return EpochEnd::Complete;
}

namespace {

// The pool member whose result came in last, of those that computed in the step.
size_t lastToReturn(const std::vector<int64_t>& took, const std::vector<int64_t>& arrivedNs) {
    size_t last = WorkerPool::kNone;
    for (size_t w = 0; w < took.size() && w < arrivedNs.size(); ++w)
        if (took[w] > 0 && (last == WorkerPool::kNone || arrivedNs[w] > arrivedNs[last]))
            last = w;
    return last;
}

} // namespace

Status SyncPolicy::step(StepContext& ctx) {
    QElapsedTimer timer;
    timer.start();
    std::vector<int64_t> indices = ctx.sampler.next(samplesPerStep(ctx.cfg));
    const double lr = ctx.lr();
    Collected c;
    if (auto st = collect(ctx, indices, lr, c); !st)
        return st;
    StepOutcome out;
    const bool split = ctx.cfg.stepSplit;
    if (split) {
        // The results are in: the local worker waited for its device (req.timed), so its
        // compute time is its pass's; what else the dispatch took was waiting for the others.
        out.split.measured = true;
        out.split.wireMs = c.packMs;
        for (size_t w = 0; w < c.computeMs.size(); ++w)
            if (!ctx.pool.at(w).remote)
                out.split.localMs += c.computeMs[w];
        out.split.waitMs =
            std::max(0.0, double(timer.nsecsElapsed()) / 1e6 - c.packMs - out.split.localMs);
    }
    const auto phase = [&](double& ms, const std::function<void()>& work) {
        QElapsedTimer t;
        t.start();
        work();
        if (split) {
            if (!ctx.master.params.empty())
                synchronizeDevice(ctx.master.params.front().device());
            ms += double(t.nsecsElapsed()) / 1e6;
        }
    };
    const auto batch = double(indices.size());
    for (const WorkResult& r : c.results) {
        out.lossSum += r.lossSum;
        out.correct += r.correct;
        out.counted += r.counted;
        out.pairs.add(r.pairs);
        out.figures.add(r.figures);
    }
    // Every share is back, so nothing computes now: a large model's update goes where the run's
    // threads are. A small one's costs less than the two hand-offs (about 15 µs).
    const auto update = [&] {
        std::vector<at::Tensor> grads;
        phase(out.split.wireMs, [&] { grads = combineResults(ctx.master, c.results, batch); });
        phase(out.split.optimizerMs, [&] { ctx.optimizer.step(grads, serverLr(ctx, lr)); });
    };
    // A sharded step's update is the owners', which collect() waited for.
    if (!ctx.shards && ctx.onComputeThread && ctx.master.trainableCount() >= kLargeUpdateValues)
        ctx.onComputeThread(update);
    else if (!ctx.shards)
        update();
    out.samples = int64_t(indices.size());
    out.lr = lr;
    out.stepMs = double(timer.nsecsElapsed()) / 1e6;
    out.workers = workerStats(ctx, c, out.stepMs);
    ctx.pool.stepTook(c.took, out.samples, out.stepMs, ctx.step, lastToReturn(c.took, c.arrivedNs));
    out.indices = std::move(indices); // all of them: dispatch() returns once all are computed
    return ctx.applied(out);
}

Status SyncPolicy::collect(StepContext& ctx, const std::vector<int64_t>& indices, double lr,
                           Collected& c) {
    const bool again = ctx.shards && ctx.reformShards;
    // A step taken again starts from the buffers (running statistics) it started from.
    std::vector<at::Tensor> buffers;
    if (again)
        for (const at::Tensor& b : ctx.master.buffers)
            buffers.push_back(b.clone());
    for (;;) {
        c = Collected{};
        Status st = dispatch(ctx, indices, lr, c);
        if (st && ctx.shards)
            st = shardedUpdate(ctx, c, double(indices.size()));
        if (st || !again)
            return st;
        if (auto reformed = ctx.reformShards(st.error(), c.lost); !reformed)
            return reformed;
        at::NoGradGuard noGrad;
        for (size_t b = 0; b < buffers.size(); ++b)
            ctx.master.buffers[b].copy_(buffers[b]);
    }
}

Status SyncPolicy::shardedUpdate(StepContext& ctx, Collected& c, double batch) {
    ShardConductor& shards = *ctx.shards;
    for (size_t k = 0; k < c.results.size(); ++k)
        if (WorkResult& r = c.results[k]; ctx.pool.at(c.from[k]).link->deviceId().isEmpty()) {
            // This machine's worker: what its backward pass did not hand over yet (all of it
            // where the pass could not stream, ModelReplica::accumulate), the buffers with it.
            LedgerScope purpose(LedgerPurpose::Wire);
            m_shardBundle->finish(r.grads, r.buffers);
            shards.ownGradients(ctx.step, m_shardOwn, m_shardOwn.size());
            r.grads.clear();
        }
    combineBuffers(ctx.master, c.results, batch);
    return shards.waitUpdated(ctx.step, kShardWaitMs);
}

void SyncPolicy::beginShardedStep(StepContext& ctx, const std::vector<size_t>& live,
                                  const std::vector<std::vector<int64_t>>& slices, double batch,
                                  double lr) {
    ShardConductor& shards = *ctx.shards;
    std::vector<std::pair<QString, double>> counted;
    for (size_t j = 0; j < live.size(); ++j)
        if (!slices[j].empty()) {
            const QString id = ctx.pool.at(live[j]).link->deviceId();
            counted.emplace_back(id.isEmpty() ? shards.selfId() : id,
                                 double(slices[j].size()) / batch);
        }
    shards.close(ctx.step, serverLr(ctx, lr), counted);
}

void SyncPolicy::streamOwnGradients(StepContext& ctx, WorkRequest& req) {
    if (!m_shardBundle)
        m_shardBundle = std::make_unique<GradientBundle>(
            ModelLayout::of(ctx.master.paramNames, ctx.master.params, ctx.master.bufferNames,
                            ctx.master.buffers),
            ctx.wire);
    m_shardOwn = m_shardBundle->begin();
    req.onGradient = [bundle = m_shardBundle.get(), bytes = m_shardOwn, shards = ctx.shards,
                      step = ctx.step](size_t i, const at::Tensor& g) {
        if (const qint64 ready = bundle->add(i, g); ready >= 0)
            shards->ownGradients(step, bytes, ready);
    };
}

bool SyncPolicy::sendsWeights(StepContext& ctx) {
    if (!ctx.shards)
        return true;
    // A sharded run sends the whole model only on its first step after a setup: memory kept for
    // the next packing would stay beside the run's state until the next setup.
    m_packSpare = QByteArray();
    if (m_setup != ctx.shards->setups()) {
        m_setup = ctx.shards->setups();
        m_firstShardedStep = ctx.step;
    }
    // The run's first setup, before its first step since the workers' archive: every replica is
    // the archive's model, which is the master's, and the wire would carry the same values (each
    // worker rounds its replica to a 16-bit wire as the setup reaches it, ShardPart::roundReplica,
    // as this machine does). The whole model would cost each worker a second copy of it for the
    // step (the setups after a lost machine or a machine that joined still send it).
    if (ctx.step == ctx.archiveStep && m_setup == 1)
        return false;
    return ctx.step == m_firstShardedStep;
}

Status SyncPolicy::dispatch(StepContext& ctx, const std::vector<int64_t>& indices, double lr,
                            Collected& c) {
    std::shared_ptr<const QByteArray> packed;
    std::vector<int64_t> pending = indices;
    for (uint64_t round = 0; !pending.empty(); ++round) {
        const std::vector<size_t> live = ctx.pool.live();
        if (live.empty()) {
            if (auto st = ctx.waitForAnyWorker(); !st)
                return st;
            continue;
        }
        c.rttMs.resize(ctx.pool.size(), 0);
        c.took.resize(ctx.pool.size(), 0);
        c.computeMs.resize(ctx.pool.size(), 0);
        c.arrivedNs.resize(ctx.pool.size(), 0);
        const std::vector<int64_t> counts =
            ctx.pool.shares(live, int64_t(pending.size()), passes(ctx.cfg), ctx.step, round == 0);
        const auto slices = sliceBatch(pending, counts);
        // The weights for remote workers leave the device before any local work is queued
        // there: behind it, their copy would wait for the local pass, and the remote workers
        // would start only when it ends.
        const bool sendWeights = sendsWeights(ctx);
        // The owners learn how the step closes as it starts: each steps its range as soon as it
        // holds every counted worker's, while the others still compute.
        if (ctx.shards && round == 0)
            beginShardedStep(ctx, live, slices, double(indices.size()), lr);
        for (size_t j = 0; j < live.size() && !packed && sendWeights; ++j)
            if (!slices[j].empty() && ctx.pool.at(live[j]).remote) {
                LedgerScope purpose(LedgerPurpose::Wire);
                QElapsedTimer packing;
                packing.start();
                packed = std::make_shared<const QByteArray>(
                    packBundle(ctx.master.params, ctx.master.buffers, ctx.wire,
                               ctx.shards ? nullptr : &m_packSpare));
                c.packMs += double(packing.nsecsElapsed()) / 1e6;
            }
        std::vector<int64_t> submittedAt(live.size()); // arrivalClockNs()
        for (size_t j = 0; j < live.size(); ++j) {
            if (slices[j].empty())
                continue;
            PoolMember& m = ctx.pool.at(live[j]);
            WorkRequest req;
            req.step = ctx.step;
            req.indices = slices[j];
            req.share = shareOf(counts, j);
            req.params = &ctx.master.params;
            req.buffers = &ctx.master.buffers;
            req.seed = ctx.seedFor(live[j], round);
            req.weightsVersion = ctx.step;
            // The balancer times workers only where there are several, or may be.
            req.timed = live.size() > 1 || !ctx.cfg.listen.isEmpty() || ctx.cfg.stepSplit;
            shapeRequest(req, ctx, lr, counts);
            if (m.remote)
                req.packedWeights = packed;
            else if (ctx.shards)
                streamOwnGradients(ctx, req);
            submittedAt[j] = arrivalClockNs();
            m.link->submit(std::move(req));
        }
        std::vector<int64_t> leftover;
        QStringList lost;
        for (size_t j = 0; j < live.size(); ++j) {
            if (slices[j].empty())
                continue;
            const size_t w = live[j];
            auto r = ctx.pool.at(w).link->wait();
            if (!r) {
                ctx.pool.drop(w, r.error(),
                              QStringLiteral("its %1 sample(s) of step %2 go to the others")
                                  .arg(slices[j].size())
                                  .arg(ctx.step + 1),
                              ctx.step);
                leftover.insert(leftover.end(), slices[j].begin(), slices[j].end());
                lost << ctx.pool.at(w).stats.name;
                c.lost << ctx.pool.at(w).link->deviceId(); // none: this machine's
                continue;
            }
            // Up to the result's arrival: results are collected in turn, and the time one
            // waits while an earlier worker's is awaited is not this worker's overhead.
            const int64_t arrived = r->arrivedNs > 0 ? r->arrivedNs : arrivalClockNs();
            const double rtt = double(arrived - submittedAt[j]) / 1e6;
            ctx.pool.record(w, *r, rtt, true);
            c.rttMs[w] += rtt;
            c.took[w] += r->samples;
            c.computeMs[w] += r->computeMs;
            c.arrivedNs[w] = arrived;
            c.results.push_back(std::move(*r));
            c.from.push_back(w);
        }
        // A machine lost takes its range with it: collect() takes the step again, or it stops.
        if (ctx.shards && !leftover.empty())
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("%1, a machine of the sharded run, was lost during "
                                            "step %2")
                                 .arg(lost.join(QStringLiteral(", ")))
                                 .arg(ctx.step + 1));
        pending = std::move(leftover);
    }
    return success();
}

QList<WorkerStepStats> SyncPolicy::workerStats(StepContext& ctx, Collected& c,
                                               double stepMs) const {
    QList<WorkerStepStats> out;
    for (size_t w = 0; w < c.took.size(); ++w) {
        PoolMember& m = ctx.pool.at(w);
        if (c.took[w] == 0 && !m.alive())
            continue;
        WorkerStepStats ws;
        ws.name = m.stats.name;
        ws.samples = c.took[w];
        ws.computeMs = c.computeMs[w];
        ws.waitMs = std::max(0.0, stepMs - c.rttMs[w]);
        if (ctx.shards) {
            const QString id = m.link->deviceId();
            const ShardConductor::Holding h =
                ctx.shards->holding(id.isEmpty() ? ctx.shards->selfId() : id);
            ws.shard = h.shard;
            ws.shards = h.shards;
            ws.shardBytes = h.bytes;
            ws.linkBytes = h.linkBytes;
        }
        m.stats.samples += c.took[w];
        m.served += c.took[w] > 0 ? 1 : 0;
        m.stats.waitS += ws.waitMs / 1e3;
        out << ws;
    }
    return out;
}

namespace {

// Host tensors bound for the device of `like`'s tensors: gathered into one block (pinned, where
// the device is a GPU, so that the copy need not wait), copied in one go, and split there.
void toDeviceAtOnce(std::vector<at::Tensor>& tensors, const std::vector<at::Tensor>& like) {
    if (like.empty() || like.front().device().is_cpu())
        return;
    const c10::Device device = like.front().device();
    std::vector<size_t> which;
    std::vector<at::Tensor> flat;
    for (size_t i = 0; i < tensors.size() && i < like.size(); ++i)
        if (tensors[i].defined() && tensors[i].device().is_cpu() && like[i].device() == device &&
            tensors[i].scalar_type() == like[i].scalar_type()) {
            which.push_back(i);
            flat.push_back(tensors[i].reshape(-1));
        }
    if (which.size() < 2)
        return;
    int64_t total = 0;
    for (const at::Tensor& f : flat)
        total += f.numel();
    const bool pin = device.is_cuda();
    at::Tensor block = at::empty({total}, flat.front().options().pinned_memory(pin));
    at::cat_out(block, flat);
    const at::Tensor there = block.to(device, /*non_blocking=*/pin);
    int64_t offset = 0;
    for (size_t k = 0; k < which.size(); ++k) {
        const int64_t n = flat[k].numel();
        tensors[which[k]] = there.narrow(0, offset, n).view(tensors[which[k]].sizes());
        offset += n;
    }
}

} // namespace

std::vector<at::Tensor> combineResults(ModelTensors& master, std::vector<WorkResult>& results,
                                       double batch) {
    at::NoGradGuard noGrad;
    // The weights may live on the coordinator's own accelerator while a worker process's
    // results come off the wire on the CPU: each goes where its weight is (a no-op when there),
    // the gradients in one copy.
    LedgerScope purpose(LedgerPurpose::Wire);
    for (WorkResult& r : results) {
        toDeviceAtOnce(r.grads, master.params);
        for (size_t p = 0; p < r.grads.size() && p < master.params.size(); ++p)
            if (r.grads[p].defined())
                r.grads[p] = r.grads[p].to(master.params[p].device());
        for (size_t b = 0; b < r.buffers.size() && b < master.buffers.size(); ++b)
            r.buffers[b] = r.buffers[b].to(master.buffers[b].device());
    }
    std::vector<at::Tensor> grads;
    if (results.size() == 1) {
        grads = std::move(results[0].grads);
        combineBuffers(master, results, batch);
        return grads;
    }
    grads.resize(master.params.size());
    for (const WorkResult& r : results) {
        const double wgt = double(r.samples) / batch;
        for (size_t p = 0; p < grads.size(); ++p) {
            if (!r.grads[p].defined())
                continue;
            if (!grads[p].defined())
                grads[p] = r.grads[p].mul(wgt);
            else
                grads[p].add_(r.grads[p], wgt);
        }
    }
    combineBuffers(master, results, batch);
    return grads;
}

void combineBuffers(ModelTensors& master, std::vector<WorkResult>& results, double batch) {
    at::NoGradGuard noGrad;
    if (results.size() == 1) {
        for (size_t b = 0; b < master.buffers.size(); ++b)
            master.buffers[b].copy_(results[0].buffers[b].to(master.buffers[b].device()));
        return;
    }
    for (size_t b = 0; b < master.buffers.size(); ++b) {
        if (!master.buffers[b].is_floating_point()) {
            master.buffers[b].copy_(results[0].buffers[b]);
            continue;
        }
        at::Tensor acc = at::zeros_like(master.buffers[b]);
        for (const WorkResult& r : results)
            acc.add_(r.buffers[b].to(acc.device()), double(r.samples) / batch);
        master.buffers[b].copy_(acc);
    }
}

std::unique_ptr<StepPolicy> makeModeSync(const RunConfig&) {
    return makeSyncPolicy();
}

} // namespace tandem
