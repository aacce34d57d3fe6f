#pragma once

// A worker's session with its coordinator, the protocol only: connect and reconnect, Hello,
// admit the run, receive the dataset when it is not here, then pass assignments to the compute
// loop until the coordinator ends the run. The coordinator's side of the same conversation is
// HubSession (coordinator/hubsession.h).

#include "engine/internal.h"

#include "engine/devices.h"
#include "engine/shard/shardpart.h"
#include "engine/step/basepack.h"
#include "engine/worker/computeloop.h"
#include "engine/worker/events.h"
#include "engine/workeroptions.h"
#include "net/blobpipe.h"
#include "net/identity.h"
#include "net/trustwatcher.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

namespace tandem {

class WorkerSession : public QObject {
public:
    // Loading: the model is read, or the replica started, on the idle compute thread
    // (sessionadmit.cpp).
    enum class State {
        Connecting,
        AwaitHello,
        AwaitRun,
        AwaitBase,
        Loading,
        AwaitData,
        Working,
        Done
    };

    WorkerSession(const WorkerOptions& o, DeviceInfo device, const Identity& id,
                  std::function<void(const QString&)> log, std::function<void()> onDone);

    void start();
    // 0 when the coordinator ended the run, 1 when this worker could not go on.
    int exitCode() const { return m_exit; }
    // Leaves the run at once (this machine stops lending): the coordinator goes on without it.
    // The coordinator is told why (a Bye), so that it reports a departure, not a fault.
    void leave(const QString& why) { finish(0, why, wire::Bye{why}); }

private:
    void connectNow();
    void onSecured(const QString& peerId);
    void onClosed(const QString& reason);
    // Ends the session with exit `code`; `last` (a Reject) goes to the coordinator first.
    void finish(int code, const QString& why, std::optional<wire::Message> last = std::nullopt);
    // Tells the coordinator why this worker stays out of its run, and ends the session.
    void refuse(wire::RejectCode code, const QString& why) {
        finish(1, why, wire::Reject{code, why});
    }
    // Reject, Bye and Control: whatever the state.
    bool onAnyState(const wire::Message& m);
    void onMessage(const wire::Message& m);
    void onHello(const wire::Hello& h);
    void onRunSpec(const wire::RunSpec& spec);
    // The run with its model whole: admitted, then its dataset found or asked for
    // (sessionadmit.cpp). The model is read on the idle compute thread; onAdmitted goes on.
    void admit(const wire::RunSpec& spec, const QByteArray& archive, const NamedTensors* base);
    void onAdmitted(uint64_t admission, Expected<AdmittedRun>& run,
                    const std::shared_ptr<DatasetSplits>& data);
    // The base the run spec names: from the cache, from --models, or received (sessionbase.cpp).
    void findBase(const wire::RunSpec& spec, const QByteArray& archive);
    // The base the run spec names, when it is not in the cache: part by part, a few asked for
    // ahead, each checked and written as it comes.
    void receiveBase(const wire::RunSpec& spec, const QByteArray& archive, BaseManifest manifest);
    void requestBaseParts();
    void onBasePart(const wire::BasePart& part);
    // Every part is here: the file takes its name, and the run is admitted with it.
    void completeBase();
    // The dataset, when the coordinator sends it (sessiondata.cpp).
    void onDataOffer(const wire::DataOffer& offer);
    void onDataChecked(const QString& hash, Expected<DatasetCache::Received>& got);
    // The replica is started on the idle compute thread; onReplicaStarted tells the coordinator.
    void becomeReady();
    void onReplicaStarted(uint64_t admission, AdmittedRun run,
                          Expected<std::unique_ptr<ModelReplica>>& replica, const QString& note,
                          const MemoryPlanFigures& plan);
    void onAssign(const wire::Assign& a);
    // A sharded run (shardpart.h, sessionshard.cpp): this machine's part, listening for its
    // links (returns the port), and the coordinator's setup, closes and requests for its state.
    // `params`: the trainable tensors the ranges are cut from (the replica's, or a holder's
    // shapes).
    Expected<quint16> startShardPart(const wire::RunSpec& spec, DType wire,
                                     const OptimizerConfig& optimizer,
                                     std::vector<at::Tensor>* params);
    // A worker that only holds (sessionholder.cpp): ready for its range without the model or
    // the dataset.
    void holdRange(const wire::RunSpec& spec);
    void onShardMessage(const wire::Message& m);
    void onShardSetup(const wire::ShardSetup& setup);
    void onShardClose(const wire::ShardClose& close);
    // The coordinator asks for this machine's range's optimizer state (a checkpoint is due).
    // A range of gigabytes takes seconds to write, more than the coordinator waits for a peer
    // that does not answer: another thread writes it into the blob that carries it, whose front
    // is sent as it is final, and this thread goes on answering pings.
    void onShardSave();
    struct RangeSave;
    // The first `written` bytes of `save`'s blob are final; or all of them, as `status` says.
    void onRangeWritten(const std::shared_ptr<RangeSave>& save, qint64 written);
    void onRangeSaved(const std::shared_ptr<RangeSave>& save, const Status& status);
    DatasetCache datasetCache() const { return DatasetCache::of(m_opt.cacheDir, m_opt.home); }
    BaseCache baseCache() const { return BaseCache::of(m_opt.cacheDir, m_opt.home); }

    WorkerOptions m_opt;
    DeviceInfo m_device;
    Identity m_identity;
    std::function<void(const QString&)> m_log;
    std::function<void()> m_onDone;
    State m_state = State::Connecting;
    Connection* m_conn = nullptr;
    QTimer m_retry;
    TrustWatcher m_trust{m_opt.home};
    QElapsedTimer m_sinceLost;
    int m_exit = 0;
    WorkerEvents m_events{m_opt.events};

    // The base's transfer: the run it is for, the next part to arrive and to ask for, and when
    // it began and the log last said how far it is.
    struct BaseTransfer {
        wire::RunSpec spec;
        QByteArray archive;
        BaseManifest manifest;
        int next = 0;
        int asked = 0;
        int first = 0;
        QElapsedTimer clock;
        qint64 logged = 0;
    };
    std::optional<BaseTransfer> m_base;
    uint64_t m_baseSearch = 0;        // the folder search under way (--models), by number
    std::optional<AdmittedRun> m_run; // between the RunSpec and the start of work
    uint64_t m_admission = 0;         // the admission under way, by number
    std::shared_ptr<DatasetSplits> m_data;
    ComputeLoop m_loop;                   // its thread stops before the rest goes
    std::vector<at::Tensor> m_heldShapes; // a holder's trainable tensors: shapes, no values
    // The range's state on its way to the coordinator (onShardSave), and the coordinator's
    // shard messages that came meanwhile: nothing steps the range while it is read.
    std::shared_ptr<RangeSave> m_rangeSave;
    std::deque<wire::Message> m_heldShard;
    // The thread that writes it, and the pipe it writes into; the pipe is cancelled and the
    // thread joined before the rest goes (a writer waiting for a connection that is gone).
    struct JoinedThread {
        std::thread thread;
        std::shared_ptr<BlobPipe> pipe;
        void join() {
            if (pipe)
                pipe->cancel();
            if (thread.joinable())
                thread.join();
        }
        ~JoinedThread() { join(); }
    } m_saveThread;
    // A sharded run's part on this machine. Last: it writes into the loop's replica, and goes
    // first.
    std::unique_ptr<ShardPart> m_shard;
};

} // namespace tandem
