#include "engine/coordinator/remoteworker.h"

#include "engine/coordinator/sessionhost.h"
#include "engine/workwire.h"

#include "model/model.h"

namespace tandem {

RemoteWorker::RemoteWorker(SessionHost* hub, HubSession* session, QString name, DeviceInfo device,
                           int64_t maxBatch, const HubConfig* config)
    : m_hub(hub)
    , m_session(session)
    , m_name(std::move(name))
    , m_device(std::move(device))
    , m_maxBatch(maxBatch)
    , m_config(config) {}

void RemoteWorker::submit(WorkRequest request) {
    Awaited awaited{request.step, request.weightsVersion, -1, -1, int64_t(request.indices.size())};
    // A local round shapes the weights for what the worker holds, and says what comes back.
    if (request.local) {
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
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("worker %1 left: %2").arg(m_name, m_error));
    const wire::Result r = m_results.front().result;
    const QByteArray bytes = std::move(m_results.front().tensors);
    const int64_t arrivedNs = m_results.front().arrivedNs;
    const Awaited awaited = m_expect.front();
    m_results.pop_front();
    m_expect.pop_front();
    lock.unlock();

    WorkResult out = resultFrom(r);
    out.arrivedNs = arrivedNs;
    Status st = success();
    if (awaited.outer) {
        at::Tensor flat;
        st = unpackOuter(bytes, m_config->layout, m_config->outer, &flat, &out.buffers,
                         awaited.values);
        if (st && awaited.fragment >= 0)
            out.grads = fragmentGrads(flat, m_side.fragments[size_t(awaited.fragment)],
                                      m_config->layout.paramShapes);
        else if (st)
            out.grads = splitParams(flat, m_config->layout);
    } else {
        st = unpackBundle(bytes, m_config->layout, m_config->wire, &out.grads, &out.buffers,
                          BundleOrder::Backward);
    }
    if (st)
        st = checkResult(out, awaited);
    if (!st) {
        fail(st.error().message);
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("worker %1 sent malformed gradients: %2")
                             .arg(m_name, st.error().message));
    }
    return out;
}

// What a well-formed result may say: in sync mode the samples it was given, and always no more
// correct answers than it counted, a finite loss and finite values. A worker that says otherwise
// would scale or poison the combined update.
Status RemoteWorker::checkResult(const WorkResult& r, const Awaited& awaited) const {
    const bool sync = m_config->mode == TrainMode::Sync;
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
    at::NoGradGuard noGrad;
    bool finite = std::isfinite(r.lossSum);
    for (size_t i = 0; finite && i < r.grads.size(); ++i)
        finite = !r.grads[i].defined() || std::isfinite(r.grads[i].sum(at::kDouble).item<double>());
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
        m_results.push_back(Arrived{result, std::move(tensors), arrivalClockNs()});
    }
    m_cv.notify_all();
    notifyReady();
    return Delivery::Kept;
}

void RemoteWorker::fail(const QString& reason) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_alive.load())
            return;
        m_error = reason;
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
