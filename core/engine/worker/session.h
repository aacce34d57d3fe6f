#pragma once

// A worker's session with its coordinator, the protocol only: connect and reconnect, Hello,
// admit the run, receive the dataset when it is not here, then pass assignments to the compute
// loop until the coordinator ends the run. The coordinator's side of the same conversation is
// HubSession (coordinator/hubsession.h).

#include "engine/internal.h"

#include "engine/devices.h"
#include "engine/worker/computeloop.h"
#include "engine/worker/events.h"
#include "engine/workeroptions.h"
#include "net/identity.h"
#include "net/trustwatcher.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <functional>
#include <memory>

namespace tandem {

class WorkerSession : public QObject {
public:
    enum class State { Connecting, AwaitHello, AwaitRun, AwaitData, Working, Done };

    WorkerSession(const WorkerOptions& o, DeviceInfo device, const Identity& id,
                  std::function<void(const QString&)> log, std::function<void()> onDone);

    void start();
    // 0 when the coordinator ended the run, 1 when this worker could not go on.
    int exitCode() const { return m_exit; }

private:
    void connectNow();
    void onSecured(const QString& peerId);
    void onClosed(const QString& reason);
    void finish(int code, const QString& why);
    // Reject, Bye and Control: whatever the state.
    bool onAnyState(const wire::Message& m);
    void onMessage(const wire::Message& m);
    void onHello(const wire::Hello& h);
    void onRunSpec(const wire::RunSpec& spec);
    void onDataOffer(const wire::DataOffer& offer);
    void onDataChecked(const QString& hash, Expected<DatasetCache::Received>& got);
    void becomeReady();
    void onAssign(const wire::Assign& a);
    DatasetCache datasetCache() const { return DatasetCache::of(m_opt.cacheDir, m_opt.home); }

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

    std::optional<AdmittedRun> m_run; // between the RunSpec and the start of work
    std::shared_ptr<DatasetSplits> m_data;
    ComputeLoop m_loop; // last: its thread stops before the rest goes
};

} // namespace tandem
