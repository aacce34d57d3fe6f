#pragma once

#include "engine/internal.h"

// Engine-internal: one worker's connection as the coordinator sees it, on the network thread.
// The protocol's coordinator half: Hello, the probe, the run, the dataset, then assignments
// and results. Its counterpart on the worker is WorkerSession (worker/session.h).

#include "engine/coordinator/hubconfig.h"
#include "net/connection.h"

#include <QElapsedTimer>
#include <QObject>

#include <memory>
#include <vector>

namespace tandem {

class SessionHost;
class RemoteWorker;

class HubSession : public QObject {
    Q_OBJECT

public:
    // Probing: the link is measured; AwaitRun: --mode auto has not chosen yet.
    enum class State { AwaitHello, Probing, AwaitRun, AwaitReady, Working, Closed };

    HubSession(SessionHost* hub, Connection* connection);
    Connection* connection() const { return m_conn; }
    State state() const { return m_state; }
    QString name() const { return m_name; }
    void assign(const WorkRequest& request);
    // Sends the run: the model, the data's identity, the mode. Once, after the probe.
    void sendRun();
    // A sharded run: where the worker listens for its links (0: it does not), its setup with
    // its range (ShardSetup::mastersBlob's bytes; empty: it owns none), then its steps' closes and
    // requests for its state.
    quint16 shardPort() const { return m_shardPort; }
    // The setup, with the worker's range (its weights and state; null where it owns none), read
    // from its file as the link takes it.
    void sendShardSetup(wire::ShardSetup setup, const std::shared_ptr<SpilledBytes>& range);
    void sendShard(const wire::Message& message);

private:
    // `bytes` as a blob of `kind`: from its file a part at a time as the link takes it, where it is
    // in one.
    uint64_t sendSpilled(wire::BlobKind kind, const std::shared_ptr<SpilledBytes>& bytes);
    void onProbed(const LinkProbe& link);
    // One handler per message kind; onMessage only says which the session's state admits.
    void onMessage(const wire::Message& m);
    void onHello(const wire::Hello& h);
    void onDataRequest(const wire::DataRequest& d);
    void onBaseRequest(const wire::BaseRequest& r);
    void onReady(const wire::Ready& r);
    void onResult(const wire::Result& r);
    void onClosed(const QString& reason);
    void refuse(wire::RejectCode code, const QString& message);
    void declined(const QString& why);

    SessionHost* m_hub;
    Connection* m_conn;
    State m_state = State::AwaitHello;
    QString m_name;
    bool m_leaving = false;   // it said Bye: it leaves on purpose
    bool m_holdsOnly = false; // its Hello says it only holds a range: it is sent no model
    std::shared_ptr<RemoteWorker> m_worker;
    quint16 m_shardPort = 0;
    uint64_t m_lastWeightsVersion = UINT64_MAX;
    // Bytes of setup (the model, the dataset) before the worker was ready: not training traffic.
    qint64 m_setupSent = 0;
    qint64 m_setupReceived = 0;
    uint64_t m_datasetBlob = 0; // the dataset transfer under way (its last blob), if any
    std::shared_ptr<const DatasetSplits> m_sentData; // what that transfer's token blobs read
    // The base's transfer to this worker: when it began, the bytes sent since, and
    // when the log last said how far it is.
    QElapsedTimer m_baseClock;
    qint64 m_baseBytes = 0;
    qint64 m_baseLogged = -1;
    std::vector<uint64_t> m_baseBlobs; // parts queued and not yet sent
    double m_reportedRate = 0;         // the link's rate as last written to the log
    int m_liveVerdict = 0; // the last live probe: +1 twice as fast, -1 half, 0 about the same
};

} // namespace tandem
