#include "engine/worker/computeloop.h"

#include "common/failpoint.h"
#include "common/threadname.h"

#include <QElapsedTimer>

#include <limits>

namespace tandem {

ComputeLoop::ComputeLoop(Hooks hooks, QObject* parent)
    : QObject(parent)
    , m_hooks(std::move(hooks)) {}

ComputeLoop::~ComputeLoop() {
    if (m_thread.joinable())
        m_thread.join();
}

void ComputeLoop::reset() {
    // A step of the last session may still be computing (the coordinator came back while it
    // ran): it reads the layout and fills the result bundle replaced next.
    if (m_thread.joinable())
        m_thread.join();
    m_computing = false;
    m_queue.clear();
    m_conn = nullptr;
}

void ComputeLoop::start(AdmittedRun run, std::unique_ptr<ModelReplica> replica,
                        Connection* connection) {
    reset();
    m_run = std::move(run);
    m_replica = std::move(replica);
    m_outer.reset();
    m_roundState.reset();
    if (m_run.outer)
        m_outer.emplace(*m_run.outer);
    m_grads = std::make_unique<GradientBundle>(m_run.layout, m_run.wire);
    m_conn = connection;
    m_shardSink = nullptr;
    m_shardBusy = nullptr;
    m_shardLanded = nullptr;
}

void ComputeLoop::runIdle(std::function<void()> job) {
    if (m_thread.joinable())
        m_thread.join();
    m_thread = std::thread([job = std::move(job)] {
        nameThisThread("tandem-data");
        job();
    });
}

void ComputeLoop::enqueue(const wire::Assign& a, std::optional<QByteArray> weights) {
    m_queue.emplace_back(a, std::move(weights));
    startNext();
}

void ComputeLoop::startNext() {
    if (m_computing || m_queue.empty() || !m_conn || !m_replica)
        return;
    auto [a, weights] = std::move(m_queue.front());
    m_queue.pop_front();
    m_share = a.share;
    // A sharded streaming round's merge: the fragment's values landed here before the
    // coordinator handed the round out.
    std::optional<std::vector<at::Tensor>> landed;
    if (m_shardLanded && a.fragments > 1 && a.mergeFragment >= 0 && !weights)
        landed = m_shardLanded(a.mergeFragment);
    if (m_thread.joinable())
        m_thread.join();
    m_computing = true;
    if (m_shardBusy)
        m_shardBusy(true);
    // The event loop stays free while this runs; the result comes back as queued calls.
    m_thread = std::thread([this, a = std::move(a), weights = std::move(weights),
                            landed = std::move(landed)]() mutable {
        nameThisThread("tandem-compute");
        compute(a, std::move(weights), std::move(landed));
    });
}

// The compute thread's side of a step. The Result message follows the bundle's last byte; the
// coordinator applies nothing before it.
void ComputeLoop::compute(const wire::Assign& a, std::optional<QByteArray> weights,
                          std::optional<std::vector<at::Tensor>> landed) {
    QString error;
    QStringList notes;
    wire::Result res;
    res.step = a.step;
    res.weightsVersion = a.weightsVersion;
    auto req = requestFrom(a, m_run.spec.fragments);
    const bool pipelined = req && req->local && req->local->pipelined();
    if (!req)
        error = req.error().message;
    else if (req->local && !m_outer)
        error = QStringLiteral("the coordinator sent a local round in a run without local-SGD");
    else if (weights)
        error = takeWeights(*weights, a.weightsDelta, req->local.get());
    weights.reset();
    if (error.isEmpty() && req->local && m_shardSink) {
        // A sharded run's round: its parameter delta goes to the owners as a gradient would.
        error = pipelined ? computeShardRound(std::move(*req), std::move(landed), res, notes)
                          : computeShardGradients(std::move(*req), res, notes);
    } else if (error.isEmpty() && req->local) {
        // A local round: its mode runs it and packs what goes back.
        auto r = m_replica->compute(*req, QStringLiteral("this worker"), &m_roundState);
        auto b = r ? req->local->pack(*m_outer, m_run.layout, *r) : r.error();
        if (!b) {
            error = b.error().message;
        } else {
            describeResult(*r, res);
            notes = r->notes;
            post([this, bundle = *b] { openResult(bundle); });
        }
    } else if (error.isEmpty()) {
        error = computeGradients(*req, res, notes);
    }
    post([this, res, error, notes, pipelined] { finishStep(res, error, notes, pipelined); });
}

QString ComputeLoop::computeGradients(WorkRequest req, wire::Result& res, QStringList& notes) {
    if (m_shardSink)
        return computeShardGradients(std::move(req), res, notes);
    QByteArray bundle = m_grads->begin();
    post([this, bundle] { openResult(bundle); });
    // When each part of the bundle became ready, to tell what really left while the backward
    // pass still ran.
    std::vector<std::pair<qint64, qint64>> released; // (ns into the step, bytes ready)
    QElapsedTimer clock;
    clock.start();
    req.onGradient = [this, &released, &clock, step = req.step](size_t i, const at::Tensor& g) {
        const qint64 ready = m_grads->add(i, g);
        if (ready < 0)
            return;
        released.emplace_back(clock.nsecsElapsed(), ready);
        post([this, ready, step] { growResult(ready, step); });
    };
    auto r = m_replica->compute(req, QStringLiteral("this worker"));
    if (!r)
        return r.error().message;
    describeResult(*r, res);
    notes = r->notes;
    if (r->streamed || released.empty()) {
        res.earlyBytes = r->streamed ? bytesReleasedEarly(released, clock.nsecsElapsed()) : 0;
        m_grads->finish(r->grads, r->buffers);
        return {};
    }
    // The step was computed again after part of it left: the bytes already sent are not this
    // result's. That blob is completed and left unused (the coordinator drops it when the next
    // arrives), and the result goes in a blob of its own.
    post([this] { growResult(std::numeric_limits<qint64>::max(), -1); });
    bundle = m_grads->begin();
    post([this, bundle] { openResult(bundle); });
    m_grads->finish(r->grads, r->buffers);
    return {};
}

// A sharded run's step: the owners take the gradients, the coordinator the buffers. Each range
// goes to its owner once the backward pass has made it final. A step computed again (smaller
// parts after running out of memory) keeps what the first pass made final, each parameter's
// whole gradient over the step's samples, and sends no range twice (ShardNode). A local round's
// delta goes once the round ends.
QString ComputeLoop::computeShardGradients(WorkRequest req, wire::Result& res, QStringList& notes) {
    QByteArray bundle = m_grads->begin();
    post([this] { m_shardEarly = 0; });
    const int64_t step = req.step;
    req.onGradient = [this, step, bundle](size_t i, const at::Tensor& g) {
        if (const qint64 ready = m_grads->add(i, g); ready >= 0)
            post([this, step, bundle, ready] {
                if (m_shardSink)
                    m_shardEarly += m_shardSink(step, bundle, ready);
            });
    };
    auto r =
        m_replica->compute(req, QStringLiteral("this worker"), req.local ? &m_roundState : nullptr);
    if (!r)
        return r.error().message;
    describeResult(*r, res);
    notes = r->notes;
    m_grads->finish(r->grads, r->buffers);
    post([this, step, bundle, ready = m_grads->size()] {
        if (m_shardSink)
            m_shardSink(step, bundle, ready);
    });
    const QByteArray buffers = packBundle({}, r->buffers, m_run.wire);
    post([this, buffers] { openResult(buffers); });
    return {};
}

void ComputeLoop::finishStep(wire::Result res, const QString& error, const QStringList& notes,
                             bool pipelined) {
    m_computing = false;
    if (m_shardBusy)
        m_shardBusy(false);
    for (const QString& n : notes)
        m_hooks.log(n);
    if (!m_conn)
        return;
    if (pipelined)
        (m_queue.empty() ? m_roundsWaited : m_roundsQueued) += 1;
    if (!error.isEmpty()) {
        m_conn->send(wire::WorkError{res.step, error});
        m_hooks.fail(1, error);
        return;
    }
    if (m_conn != m_resultConn)
        return; // the connection the result went out on is gone
    m_conn->growBlob(m_resultBlob, std::numeric_limits<qint64>::max());
    res.tensorsBlob = m_resultBlob;
    if (m_shardSink)
        res.earlyBytes = m_shardEarly;
    m_conn->send(res);
    if (m_hooks.stepSent)
        m_hooks.stepSent(res, m_share);
    startNext();
}

QString ComputeLoop::takeWeights(const QByteArray& weights, bool delta, LocalRound* round) {
    if (delta) {
        if (!round)
            return QStringLiteral("the coordinator sent a weight update outside local-SGD");
        auto st = round->takeUpdate(*m_outer, m_run.layout, weights, *m_replica);
        return st ? QString() : st.error().message;
    }
    if (auto st = unpackInto(weights, m_run.layout, m_run.wire, m_replica->params(),
                             m_replica->buffers());
        !st)
        return st.error().message;
    if (m_outer)
        m_outer->tookWhole(m_replica->params());
    if (round)
        round->wholeWeights = true;
    return {};
}

void ComputeLoop::openResult(const QByteArray& bundle) {
    m_resultConn = m_conn;
    if (m_conn)
        m_resultBlob = m_conn->openBlob(wire::BlobKind::Tensors, bundle);
}

void ComputeLoop::growResult(qint64 ready, int64_t step) {
    if (!m_conn || m_conn != m_resultConn)
        return;
    m_conn->growBlob(m_resultBlob, ready);
    if (ready < m_grads->size() && TANDEM_FAILPOINT_DUE("worker.upload")) {
        m_conn->flush(); // part of the result on the wire, then the failpoint's action
        if (TANDEM_FAILPOINT_ACT("worker.upload"))
            m_hooks.fail(1, QStringLiteral("failpoint worker.upload at step %1").arg(step + 1));
    }
}

} // namespace tandem
