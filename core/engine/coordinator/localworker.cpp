#include "engine/coordinator/localworker.h"

#include "common/threadname.h"

#include <utility>

namespace tandem {

LocalWorker::LocalWorker(QString name, DeviceInfo device, const Model& model,
                         std::shared_ptr<const Dataset> data, ReplicaOptions options)
    : m_name(std::move(name))
    , m_replica(std::move(device), model, std::move(data), std::move(options)) {
    m_thread = std::thread([this] { run(); });
}

LocalWorker::~LocalWorker() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_quit = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

void LocalWorker::submit(WorkRequest request) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_requests.push_back(std::move(request));
    }
    m_cv.notify_all();
}

bool LocalWorker::ready() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return !m_results.empty();
}

Expected<WorkResult> LocalWorker::wait() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return !m_results.empty(); });
    Expected<WorkResult> r = std::move(m_results.front());
    m_results.pop_front();
    return r;
}

void LocalWorker::call(const std::function<void()>& job) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return m_job == nullptr; });
    m_job = &job;
    m_cv.notify_all();
    m_cv.wait(lock, [this, &job] { return m_job != &job; });
    if (std::exception_ptr e = std::exchange(m_jobError, nullptr))
        std::rethrow_exception(e);
}

void LocalWorker::run() {
    nameThisThread("tandem-worker");
    for (;;) {
        WorkRequest req;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_cv.wait(lock, [this] { return m_quit || m_job || !m_requests.empty(); });
            if (m_quit)
                return;
            if (m_job) {
                std::exception_ptr error;
                lock.unlock();
                try {
                    (*m_job)();
                } catch (...) {
                    error = std::current_exception();
                }
                lock.lock();
                m_jobError = error;
                m_job = nullptr;
                m_cv.notify_all();
                continue;
            }
            req = std::move(m_requests.front());
            m_requests.pop_front();
        }
        Expected<WorkResult> r = m_replica.compute(req, m_name, &m_roundState);
        if (r)
            r->arrivedNs = arrivalClockNs();
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_results.push_back(std::move(r));
        }
        m_cv.notify_all();
        notifyReady();
    }
}

} // namespace tandem
