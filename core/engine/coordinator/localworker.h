#pragma once

#include "engine/internal.h"

// Engine-internal: the coordinator's in-process worker.

#include "engine/worker.h"

#include <condition_variable>
#include <deque>
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

private:
    void run();

    QString m_name;
    ModelReplica m_replica;
    std::unique_ptr<RoundState> m_roundState; // the worker's thread

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<WorkRequest> m_requests;
    std::deque<Expected<WorkResult>> m_results;
    bool m_quit = false;
    std::thread m_thread; // last: started once everything above is in place
};

} // namespace tandem
