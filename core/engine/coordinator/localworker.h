#pragma once

#include "engine/internal.h"

// Engine-internal: the coordinator's in-process worker.

#include "engine/step/replica.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace tandem {

// Runs a ModelReplica on a thread of its own, so that several workers (and the coordinator)
// overlap.
class LocalWorker final : public WorkerLink {
public:
    LocalWorker(QString name, DeviceInfo device, const Model& model,
                std::shared_ptr<const Dataset> data, ReplicaOptions options = {});
    ~LocalWorker() override;

    QString name() const override { return m_name; }
    DeviceInfo device() const override { return m_replica.device(); }
    const ModelReplica& replica() const { return m_replica; }
    void submit(WorkRequest request) override;
    Expected<WorkResult> wait() override;
    bool ready() const override;
    // Runs `job` on the worker's thread, after the request it is computing, and returns once
    // it has run; an exception it throws is thrown here. The run's large work besides its
    // steps (timing, evaluation) goes here, so that one thread's OpenMP team does all of it
    // (torchcompat.h, SerialTorchOps). Never call it from the worker's own thread.
    void call(const std::function<void()>& job);

private:
    void run();

    QString m_name;
    ModelReplica m_replica;
    std::unique_ptr<RoundState> m_roundState; // the worker's thread

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<WorkRequest> m_requests;
    std::deque<Expected<WorkResult>> m_results;
    const std::function<void()>* m_job = nullptr; // call()'s, until it has run
    std::exception_ptr m_jobError;
    bool m_quit = false;
    std::thread m_thread; // last: started once everything above is in place
};

} // namespace tandem
