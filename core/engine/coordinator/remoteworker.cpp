#include "engine/coordinator/remoteworker.h"

#include "engine/coordinator/sessionhost.h"
#include "engine/wire/workwire.h"

#include "model/model.h"

#include <system_error>

namespace tandem {

RemoteWorker::RemoteWorker(SessionHost* hub, HubSession* session, QString name, QString deviceId,
                           DeviceInfo device, int64_t maxBatch, const HubConfig* config)
    : m_hub(hub)
    , m_session(session)
    , m_name(std::move(name))
    , m_deviceId(std::move(deviceId))
    , m_device(std::move(device))
    , m_maxBatch(maxBatch)
    , m_config(config) {}

void RemoteWorker::submit(WorkRequest request) {
    Awaited awaited{request.step, request.weightsVersion, -1, -1, int64_t(request.indices.size())};
    // A local round shapes the weights for what the worker holds, and says what comes back. A
    // sharded run's owners take its delta and send its weights, as they take a gradient.
    if (request.local && !m_config->sharded) {
        request.local->shapeForWire(m_side, request, m_config->layout, m_config->wire,
                                    m_config->outer);
        awaited.outer = true;
        awaited.fragment = m_side.awaitFragment;
        awaited.values = m_side.awaitValues;
    }
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_expect.push_back(awaited);
        if (!m_alive.load())
            return; // wait() reports the failure
    }
    m_hub->postAssign(m_session, std::move(request));
}

bool RemoteWorker::ready() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return !m_results.empty() || !m_alive.load();
}

Expected<WorkResult> RemoteWorker::wait() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return !m_results.empty() || !m_alive.load(); });
    if (m_results.empty() || m_expect.empty())
        return makeError(m_leaving ? ErrorCode::Cancelled : ErrorCode::Runtime,
                         QStringLiteral("worker %1 left: %2").arg(m_name, m_error));
    Arrived arrived = std::move(m_results.front());
    const Awaited awaited = m_expect.front();
    m_results.pop_front();
    m_expect.pop_front();
    lock.unlock();

    Expected<WorkResult> out =
        arrived.unpacked ? arrived.unpacked->get()
        : awaited.outer
            ? unpackOuter(arrived.result, arrived.tensors, awaited, arrived.arrivedNs)
            : unpackSync(arrived.result, arrived.tensors, awaited, arrived.arrivedNs, syncUnpack());
    if (!out)
        fail(out.error().message);
    return out;
}

// A local round's result reads the fragments this side keeps (m_side), which submit() changes:
// it is unpacked on the training thread.
Expected<WorkResult> RemoteWorker::unpackOuter(const wire::Result& r, const QByteArray& bytes,
                                               const Awaited& awaited, int64_t arrivedNs) {
    WorkResult out = resultFrom(r);
    out.arrivedNs = arrivedNs;
    at::Tensor flat;
    Status st = tandem::unpackOuter(bytes, m_config->layout, m_config->outer, &flat, &out.buffers,
                                    awaited.values);
    if (st && awaited.fragment >= 0)
        out.grads = fragmentGrads(flat, m_side.fragments[size_t(awaited.fragment)],
                                  m_config->layout.paramShapes);
    else if (st)
        out.grads = splitParams(flat, m_config->layout);
    if (st)
        st = checkResult(out, awaited, m_config->mode == TrainMode::Sync);
    if (!st)
        return malformed(m_name, st.error().message);
    return out;
}

Expected<WorkResult> RemoteWorker::unpackSync(const wire::Result& r, const QByteArray& bytes,
                                              const Awaited& awaited, int64_t arrivedNs,
                                              const SyncUnpack& how) {
    WorkResult out = resultFrom(r);
    out.arrivedNs = arrivedNs;
    Status st =
        unpackBundle(bytes, how.layout, how.wire, &out.grads, &out.buffers, BundleOrder::Backward);
    if (st)
        st = checkResult(out, awaited, how.sync);
    if (!st)
        return malformed(how.worker, st.error().message);
    return out;
}

RemoteWorker::SyncUnpack RemoteWorker::syncUnpack() const {
    ModelLayout layout = m_config->layout;
    if (m_config->sharded) { // the gradients went to the ranges' owners
        layout.paramNames.clear();
        layout.paramShapes.clear();
    }
    return SyncUnpack{std::move(layout), m_config->wire, m_config->mode == TrainMode::Sync, m_name};
}

Error RemoteWorker::malformed(const QString& worker, const QString& why) {
    return makeError(ErrorCode::Corrupt,
                     QStringLiteral("worker %1 sent malformed gradients: %2").arg(worker, why));
}

// What a well-formed result may say: in sync mode the samples it was given, and always no more
// correct answers than it counted, a finite loss and finite values. A worker that says otherwise
// would scale or poison the combined update.
Status RemoteWorker::checkResult(const WorkResult& r, const Awaited& awaited, bool sync) {
    if (r.samples < 0 || (sync && r.samples != awaited.samples) || r.correct < 0 ||
        r.correct > r.counted)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("it reported %1 sample(s) and %2 of %3 correct for step "
                                        "%4, which was given %5")
                             .arg(r.samples)
                             .arg(r.correct)
                             .arg(r.counted)
                             .arg(awaited.step + 1)
                             .arg(awaited.samples));
    // One read for all of them: a sum in double of every value is finite exactly when every
    // value is (float32's largest, times any tensor's size, is far from double's).
    at::NoGradGuard noGrad;
    bool finite = std::isfinite(r.lossSum);
    for (double v : r.pairs.sums)
        finite = finite && std::isfinite(v);
    std::vector<at::Tensor> sums;
    for (const at::Tensor& g : r.grads)
        if (g.defined())
            sums.push_back(g.sum(at::kDouble).to(at::kCPU));
    if (finite && !sums.empty())
        finite = std::isfinite(at::stack(sums).sum().item<double>());
    if (!finite)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("its loss or values for step %1 are not finite (NaN or "
                                        "infinite); if the loss diverged, lower the learning "
                                        "rate")
                             .arg(awaited.step + 1));
    return success();
}

RemoteWorker::Delivery RemoteWorker::deliver(const wire::Result& result, QByteArray tensors) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        // Exactly one result per assignment, in the order they went out: a repeated or late
        // push (same worker, an already answered step, or one from before a reconnection) is
        // not applied. Answering a step ahead of the one outstanding is no worker's mistake.
        const size_t next = m_results.size();
        if (next >= m_expect.size() || result.step != m_expect[next].step ||
            result.weightsVersion != m_expect[next].version)
            return next < m_expect.size() && result.step > m_expect[next].step ? Delivery::Invalid
                                                                               : Delivery::Repeated;
        Arrived arrived{result, std::move(tensors), arrivalClockNs(), std::nullopt};
        if (!m_expect[next].outer) {
            // The bytes are shared, not copied; should no thread start, wait() unpacks them.
            try {
                arrived.unpacked =
                    std::async(std::launch::async, [r = arrived.result, bytes = arrived.tensors,
                                                    awaited = m_expect[next],
                                                    at = arrived.arrivedNs, how = syncUnpack()] {
                        return unpackSync(r, bytes, awaited, at, how);
                    });
                arrived.tensors.clear();
            } catch (const std::system_error&) {
                arrived.unpacked.reset();
            }
        }
        m_results.push_back(std::move(arrived));
    }
    m_cv.notify_all();
    notifyReady();
    return Delivery::Kept;
}

void RemoteWorker::fail(const QString& reason, bool leaving) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_alive.load())
            return;
        m_error = reason;
        m_leaving = leaving;
        m_alive = false;
    }
    m_cv.notify_all();
    notifyReady();
}

void RemoteWorker::updateBytes(qint64 sent, qint64 received) {
    m_bytesSent = sent;
    m_bytesReceived = received;
}

} // namespace tandem
