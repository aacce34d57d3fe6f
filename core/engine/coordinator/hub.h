#pragma once

#include "engine/internal.h"

// Engine-internal: the coordinator's network side. The hub lives on a thread of its own with
// an event loop; it accepts TLS connections, admits only paired workers speaking this
// protocol version, hands each the run (model, dataset, configuration) and turns it into a
// RemoteWorker, a WorkerLink the training loop drives like the local one. Each connection is
// a HubSession (hubsession.h).

#include "engine/coordinator/hubconfig.h"
#include "engine/coordinator/sessionhost.h"
#include "engine/wire/wiretensors.h"
#include "net/connection.h"
#include "net/identity.h"
#include "net/server.h"

#include <QThread>

#include <memory>
#include <optional>

namespace tandem {

class HubSession;
class RemoteWorker;

class CoordinatorHub : public QObject, public SessionHost {
    Q_OBJECT

public:
    explicit CoordinatorHub(HubConfig config);
    ~CoordinatorHub() override;

    // From the training thread. Starts the network thread and listens; returns the port.
    Expected<quint16> start();
    void broadcast(wire::Control::Action action);
    // Says goodbye to every worker and stops the network thread.
    void finish(const QString& reason);
    // Asks a paired node running `tandem serve` at host:port to join this run. A connection
    // that fails before its handshake (the node busy or briefly unreachable) is tried again,
    // up to kInviteAttempts times with growing pauses.
    void invite(const QString& host, quint16 port);
    static constexpr int kInviteAttempts = 6;
    // --mode auto: the mode is chosen; the workers waiting for the run receive it, in `mode`
    // (streamed in `fragments` where there are two or more) with this run description.
    void decide(TrainMode mode, OuterWire outer, int fragments,
                const wire::WorkerSettings& settings);
    // --mode auto: the coordinator trains alone; the workers waiting for the run are told why
    // and leave, and so is any that connects later.
    void dismiss(const QString& reason, const wire::WorkerSettings& settings);
    // Any thread: closes `session`, if it is still there, with a Bye that asks its worker (one
    // the run went on without) to connect again; it then joins as a worker that comes while the
    // run trains.
    void sendAway(HubSession* session, const QString& reason);

    // From the training thread: runs `job` on the network thread and returns when it is done.
    void runOnNetwork(const std::function<void()>& job);
    // Network thread: this machine's identity, where the hub listens, and the working session
    // of the worker with device ID `deviceId` (null when there is none).
    const Identity& identity() const { return *m_identity; }
    QHostAddress address() const { return m_config.address; }
    HubSession* workingSession(const QString& deviceId) const;

    // SessionHost, on the network thread (postAssign from any).
    void postAssign(HubSession* session, WorkRequest request) override;
    void addMessage(const QString& text) override;
    void joined(std::shared_ptr<RemoteWorker> worker) override;
    void sessionGone(HubSession* session) override;
    void probed(const QString& worker, const QString& address, const LinkProbe& link) override;
    QString workerName(const QString& displayName, const QString& deviceId,
                       const HubSession* session) const override;
    const HubConfig& config() const override { return m_config; }
    QByteArray datasetContainer() override;
    QObject* networkObject() override { return this; }

private:
    wire::Hello hello() const; // this coordinator's, with the run's name for this machine
    void onSecured(Connection* c);
    void probeLive();
    void inviteAttempt(const QString& host, quint16 port, int attempt);

    HubConfig m_config;
    QThread m_thread;
    Server* m_server = nullptr;
    QList<HubSession*> m_sessions;
    QByteArray m_datasetBlob;
    QString m_deviceId;
    std::optional<Identity> m_identity;
};

} // namespace tandem
