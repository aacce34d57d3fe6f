#pragma once

#include "engine/internal.h"

// Engine-internal: the coordinator's network side. The hub lives on a thread of its own with
// an event loop; it accepts TLS connections, admits only paired workers speaking this
// protocol version, hands each the run (model, dataset, configuration) and turns it into a
// RemoteWorker, a WorkerLink the training loop drives like the local one.

#include "engine/outerwire.h"
#include "engine/wiretensors.h"
#include "engine/worker.h"
#include "formats/dataset.h"
#include "net/connection.h"
#include "net/server.h"

#include <QHostAddress>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>

namespace tandem {

class CoordinatorHub;
class HubSession;
class RemoteWorker;

// What the hub hands the training side, on the network thread: a worker that is ready to
// take work, or a line for the run's log.
struct HubEvent {
    enum class Kind { Joined, Note, Probed, Declined };
    Kind kind = Kind::Note;
    std::shared_ptr<RemoteWorker> worker; // Joined
    QString text;   // Note; Probed: the worker's name; Declined: the node invited (HOST:PORT)
    LinkProbe link; // Probed: its link, as the handshake measured it
    QString reason; // Declined: the node's answer

    static HubEvent note(QString text) { return make(Kind::Note, std::move(text)); }
    static HubEvent joined(std::shared_ptr<RemoteWorker> w) {
        HubEvent e = make(Kind::Joined, {});
        e.worker = std::move(w);
        return e;
    }
    static HubEvent probed(QString worker, const LinkProbe& link) {
        HubEvent e = make(Kind::Probed, std::move(worker));
        e.link = link;
        return e;
    }
    static HubEvent declined(QString node, QString reason) {
        HubEvent e = make(Kind::Declined, std::move(node));
        e.reason = std::move(reason);
        return e;
    }

private:
    static HubEvent make(Kind kind, QString text) {
        HubEvent e;
        e.kind = kind;
        e.text = std::move(text);
        return e;
    }
};

struct HubConfig {
    QString home;
    QHostAddress address = QHostAddress::LocalHost;
    quint16 port = 0;
    int workerTimeoutMs = 30000;
    QString runId;
    wire::WorkerSettings settings; // what a worker computes with
    QByteArray modelArchive;
    QString schemaHash;
    QString datasetSpec;
    QString datasetHash;
    std::shared_ptr<const DatasetSplits> data;
    TrainMode mode = TrainMode::Sync;
    DType wire = DType::F32;
    OuterWire outer = OuterWire::Fp32; // local-sgd: weights after the first and deltas
    ModelLayout layout;
    int64_t trainSamples = 0;
    std::function<void(HubEvent)> events; // called on the network thread
    // --mode auto: each worker's link is probed after its Hello and the run held back from it
    // until decide() says what the mode is. Otherwise the run follows the probe at once.
    bool modePending = false;
};

class RemoteWorker final : public WorkerLink {
public:
    RemoteWorker(CoordinatorHub* hub, HubSession* session, QString name, DeviceInfo device,
                 int64_t maxBatch, const HubConfig* config);

    QString name() const override { return m_name; }
    DeviceInfo device() const override { return m_device; }
    void submit(WorkRequest request) override;
    Expected<WorkResult> wait() override;
    bool ready() const override;

    int64_t maxBatch() const { return m_maxBatch; }
    bool alive() const { return m_alive.load(); }
    qint64 bytesSent() const { return m_bytesSent.load(); }
    qint64 bytesReceived() const { return m_bytesReceived.load(); }

    // Network thread.
    // A result that answers the next outstanding assignment is kept; one for a step already
    // answered (a repeated or late push) changes nothing; one for a step after the one
    // outstanding breaks the protocol.
    enum class Delivery { Kept, Repeated, Invalid };
    Delivery deliver(const wire::Result& result, QByteArray tensors);
    void fail(const QString& reason);
    void updateBytes(qint64 sent, qint64 received);

private:
    struct Awaited;
    Status checkResult(const WorkResult& r, const Awaited& awaited) const;

    CoordinatorHub* m_hub;
    HubSession* m_session; // network thread only; checked through the hub
    QString m_name;
    DeviceInfo m_device;
    int64_t m_maxBatch;
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
    };
    std::deque<Arrived> m_results;
    QString m_error;
    std::atomic<bool> m_alive{true};
    std::atomic<qint64> m_bytesSent{0};
    std::atomic<qint64> m_bytesReceived{0};
};

class CoordinatorHub : public QObject {
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
    // with this run description.
    void decide(TrainMode mode, OuterWire outer, const wire::WorkerSettings& settings);

    // Network thread.
    void sendAssign(HubSession* session, const WorkRequest& request);
    void addMessage(const QString& text);
    void joined(std::shared_ptr<RemoteWorker> worker);
    void sessionGone(HubSession* session);
    void probed(const QString& worker, const LinkProbe& link);
    const HubConfig& config() const { return m_config; }
    QByteArray datasetContainer();

private:
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

// One worker's connection as the coordinator sees it: Hello, then the run, then work.
class HubSession : public QObject {
    Q_OBJECT

public:
    // Probing: the link is measured; AwaitRun: --mode auto has not chosen yet.
    enum class State { AwaitHello, Probing, AwaitRun, AwaitReady, Working, Closed };

    HubSession(CoordinatorHub* hub, Connection* connection);
    Connection* connection() const { return m_conn; }
    State state() const { return m_state; }
    void assign(const WorkRequest& request);
    // Sends the run: the model, the data's identity, the mode. Once, after the probe.
    void sendRun();

private:
    void onProbed(const LinkProbe& link);
    // One handler per message kind; onMessage only says which the session's state admits.
    void onMessage(const wire::Message& m);
    void onHello(const wire::Hello& h);
    void onDataRequest(const wire::DataRequest& d);
    void onReady(const wire::Ready& r);
    void onResult(const wire::Result& r);
    void onClosed(const QString& reason);
    void refuse(wire::RejectCode code, const QString& message);
    void declined(const QString& why);

    CoordinatorHub* m_hub;
    Connection* m_conn;
    State m_state = State::AwaitHello;
    QString m_name;
    std::shared_ptr<RemoteWorker> m_worker;
    uint64_t m_lastWeightsVersion = UINT64_MAX;
    // Bytes of setup (the model, the dataset) before the worker was ready: not training traffic.
    qint64 m_setupSent = 0;
    qint64 m_setupReceived = 0;
    uint64_t m_datasetBlob = 0; // the dataset transfer under way (its last blob), if any
    std::shared_ptr<const DatasetSplits> m_sentData; // what that transfer's token blobs read
    double m_reportedRate = 0;                       // the link's rate as last written to the log
    int m_liveVerdict = 0; // the last live probe: +1 twice as fast, -1 half, 0 about the same
};

// What the run's workers compute with, from its settings: local-SGD's inner optimizer is the
// run's own optimizer, and the precision and the loss are the run's. Nothing of the
// coordinator's own (its output folder, address, invitations or devices) is in it.
wire::WorkerSettings workerSettings(const RunConfig& cfg);

} // namespace tandem
