#pragma once

#include "common/deviceinfo.h"
#include "common/expected.h"
#include "common/ports.h"
#include "net/discovery.h"
#include "net/identity.h"
#include "net/pairing.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QTimer>

#include <memory>
#include <optional>

namespace tandem {

class TrustWatcher;

class Connection;
class Server;

// How a node presents itself and where it listens.
struct NodeSettings {
    QString home;              // identity and trust store
    QString name;              // shown to other machines; empty: the host name
    QList<DeviceInfo> devices; // announced; the engine detects them
    QHostAddress listenAddress = QHostAddress(QHostAddress::Any); // IPv6 and IPv4
    quint16 listenPort = kServePort; // pairing requests and invitations; 0: any
    quint16 discoveryPort = Discovery::kDefaultPort;
    std::optional<QList<QHostAddress>> announceTo; // instead of broadcast and multicast
    QString cacheDir;       // for the worker's received datasets; empty: its default
    QString modelsDir;      // `tandem worker --models` for invited runs; empty: none
    QString workerProgram;  // the `tandem` binary that runs work; empty: this program
    QString workerDevices;  // `tandem worker --devices` for invited runs; empty: the best device
    bool acceptWork = true; // join runs of paired coordinators that invite this node
};

// A machine as the UI lists it: paired (trusted) or merely seen on the LAN.
struct PeerInfo {
    QString deviceId;
    QString name;
    QString address; // empty when offline
    quint16 port = 0;
    QString os;
    QString appVersion;
    uint32_t protocolVersion = 0;
    QList<DeviceInfo> devices;
    bool paired = false;
    bool online = false;
};

// One node of the cluster, without any UI: it announces itself, lists the machines it hears,
// pairs (as initiator or responder, asking its PairingPrompt), answers invitations from paired
// coordinators by starting a worker process, and unpairs. The command line's `serve` and the
// desktop app both run it; the app keeps it on a thread of its own and talks to it through
// queued calls and signals carrying value types.
class NodeService : public QObject {
    Q_OBJECT

public:
    explicit NodeService(NodeSettings settings, PairingPrompt* prompt = nullptr,
                         QObject* parent = nullptr);
    ~NodeService() override;

    QString deviceId() const { return m_id ? m_id->deviceId() : QString(); }
    QString displayName() const;
    quint16 tcpPort() const;
    QList<PeerInfo> peers() const { return m_peerList; }

public Q_SLOTS:
    // Loads or makes the identity, listens and starts discovery. Emits started or failed.
    void start();
    // Starts pairing with the node at host:port as the initiator.
    void pairWith(const QString& host, quint16 port);
    // The person's answer to the last pairingQuestion (when no PairingPrompt was given).
    void answerPairing(bool sameCode);
    void cancelPairing();
    // Asks a node to announce itself to us (networks that block broadcast).
    void addAddress(const QString& host);
    // Forgets the device, and tells it, when it is online, so that it forgets this one too: a
    // pairing ends on both machines at once.
    void unpair(const QString& deviceId);
    void setAcceptWork(bool accept);
    // This machine runs a training of its own: invitations are declined meanwhile.
    void setBusy(bool busy);
    void setName(const QString& name);
    // Ends this machine's part in someone else's run; the run goes on without it.
    void stopLending();
    void setCacheDir(const QString& dir) { m_s.cacheDir = dir; }
    void setModelsDir(const QString& dir) { m_s.modelsDir = dir; }

Q_SIGNALS:
    void started(const QString& deviceId, quint16 tcpPort);
    void failed(const QString& message);
    void peersChanged(const QList<tandem::PeerInfo>& peers);
    // Pairing, either direction: the code to compare, then the outcome.
    void pairingQuestion(const tandem::PairingQuestion& question);
    void pairingFinished(bool paired, tandem::PairFailure failure, const QString& message);
    void message(const QString& text);
    // The worker this node runs for someone else's run started or ended.
    void workerChanged(bool running, const QString& coordinator);
    // What the worker reports of that run (WorkerOptions::events: joined, progress, paused,
    // resumed).
    void lendingEvent(const QJsonObject& event);
    // A paired machine unpaired this one (`name`, its device `deviceId`): it is forgotten here
    // too, and the person is told.
    void unpairedBy(const QString& name, const QString& deviceId);

private:
    class ForwardingPrompt;
    void onSecured(Connection* conn);
    // A device said it unpaired this machine: forgotten here too, if it was paired.
    void onUnpaired(const QString& deviceId);
    void startInvitedWorker(Connection* conn, quint16 port);
    void recordFailure(const QString& from);
    void rebuildPeers();
    wire::Announcement announcement() const;

    NodeSettings m_s;
    PairingPrompt* m_prompt;
    std::unique_ptr<ForwardingPrompt> m_forward;
    std::optional<Identity> m_id;
    std::unique_ptr<Server> m_server;
    std::unique_ptr<Discovery> m_discovery;
    QPointer<PairingSession> m_outgoing;
    QPointer<Connection> m_outgoingConn;
    QProcess m_worker;
    QString m_workerCoordinator;
    bool m_busy = false;
    bool m_stopLending = false;
    std::unique_ptr<TrustWatcher> m_trust;
    QList<PeerInfo> m_peerList;

    // Failed attempts per address: after three within ten minutes, that address waits a
    // minute, so codes cannot be tried over and over.
    struct Attempts {
        int failures = 0;
        QElapsedTimer since;
    };
    QHash<QString, Attempts> m_attempts;
};

} // namespace tandem

Q_DECLARE_METATYPE(tandem::PeerInfo)
Q_DECLARE_METATYPE(tandem::PairingQuestion)
Q_DECLARE_METATYPE(tandem::PairFailure)
