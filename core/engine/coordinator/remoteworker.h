#pragma once

#include "engine/internal.h"

// Engine-internal: a worker on another machine, as the training loop drives it: a WorkerLink
// like the in-process one. Submitting sends an assignment through the worker's HubSession;
// the network thread delivers its results here, and wait() hands them to the training thread.

#include "engine/coordinator/hubconfig.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>

namespace tandem {

class SessionHost;
class HubSession;

class RemoteWorker final : public WorkerLink {
public:
    RemoteWorker(SessionHost* hub, HubSession* session, QString name, QString deviceId,
                 DeviceInfo device, int64_t maxBatch, const HubConfig* config);

    QString name() const override { return m_name; }
    QString deviceId() const override { return m_deviceId; }
    DeviceInfo device() const override { return m_device; }
    void submit(WorkRequest request) override;
    Expected<WorkResult> wait() override;
    bool ready() const override;

    int64_t maxBatch() const { return m_maxBatch; }
    // A sharded run's member that owns a range and computes nothing (tandem worker --hold-only):
    // set once, before the pool takes it.
    bool holdsOnly() const { return m_holdsOnly; }
    void setHoldsOnly(bool holds) { m_holdsOnly = holds; }
    bool alive() const { return m_alive.load(); }
    // Its connection's session, for the hub (which knows whether it is still there).
    HubSession* session() const { return m_session; }
    qint64 bytesSent() const { return m_bytesSent.load(); }
    qint64 bytesReceived() const { return m_bytesReceived.load(); }

    // Network thread.
    // A result that answers the next outstanding assignment is kept; one for a step already
    // answered (a repeated or late push) changes nothing; one for a step after the one
    // outstanding breaks the protocol.
    enum class Delivery { Kept, Repeated, Invalid };
    Delivery deliver(const wire::Result& result, QByteArray tensors);
    // The worker is gone: `leaving` when it said so (its owner stopped lending it), which
    // wait() reports as ErrorCode::Cancelled rather than as a fault.
    void fail(const QString& reason, bool leaving = false);
    void updateBytes(qint64 sent, qint64 received);

private:
    struct Awaited;
    static Status checkResult(const WorkResult& r, const Awaited& awaited, bool sync);
    // A local round's result from the wire, checked (the training thread).
    Expected<WorkResult> unpackOuter(const wire::Result& r, const QByteArray& bytes,
                                     const Awaited& awaited, int64_t arrivedNs);
    static Error malformed(const QString& worker, const QString& why);
    // A sync result's gradients from the wire, checked. It runs on a thread of its own and
    // takes everything it reads, so that it may outlast the run's configuration.
    struct SyncUnpack {
        ModelLayout layout;
        DType wire = DType::F32;
        bool sync = true;
        QString worker;
    };
    SyncUnpack syncUnpack() const;
    static Expected<WorkResult> unpackSync(const wire::Result& r, const QByteArray& bytes,
                                           const Awaited& awaited, int64_t arrivedNs,
                                           const SyncUnpack& how);

    SessionHost* m_hub;
    HubSession* m_session; // network thread only; checked through the hub
    QString m_name;
    QString m_deviceId;
    DeviceInfo m_device;
    int64_t m_maxBatch;
    bool m_holdsOnly = false;
    const HubConfig* m_config;
    // Training thread: a local mode's record of the weights this worker holds.
    RemoteRoundSide m_side;

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    // The assignments out, oldest first, and the results in for the oldest of them.
    struct Awaited {
        int64_t step = -1;
        int64_t version = -1;
        int64_t values = -1; // the delta's values: every parameter (-1) or one fragment's
        int fragment = -1;
        int64_t samples = 0; // assigned
        bool outer = false;  // a local round's result, in the outer-wire format
    };
    std::deque<Awaited> m_expect;
    struct Arrived {
        wire::Result result;
        QByteArray tensors;
        int64_t arrivedNs = 0;
        // A sync result is unpacked and checked on a thread of its own as it arrives, while
        // the training thread still waits for the local pass: it takes the result from here.
        std::optional<std::future<Expected<WorkResult>>> unpacked;
    };
    std::deque<Arrived> m_results;
    QString m_error;
    bool m_leaving = false;
    std::atomic<bool> m_alive{true};
    std::atomic<qint64> m_bytesSent{0};
    std::atomic<qint64> m_bytesReceived{0};
};

} // namespace tandem
