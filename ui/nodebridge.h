#pragma once

#include "node/nodeservice.h"

#include <QObject>
#include <QThread>

#include <memory>

namespace tandem::ui {

class PeerModel;

// The app's handle on its NodeService, which lives on a thread of its own: calls become
// queued invocations, the node's signals arrive here queued, and the peer list is mirrored
// into a model the views can read.
class NodeBridge : public QObject {
    Q_OBJECT

public:
    explicit NodeBridge(const NodeSettings& settings, QObject* parent = nullptr);
    ~NodeBridge() override;

    void start();
    PeerModel* peers() const { return m_peers; }
    QString deviceId() const { return m_deviceId; }
    quint16 port() const { return m_port; }
    bool isRunning() const { return !m_deviceId.isEmpty(); }

    void pairWith(const QString& host, quint16 port);
    void answerPairing(bool sameCode);
    void cancelPairing();
    void addAddress(const QString& host);
    void unpair(const QString& deviceId);
    void setAcceptWork(bool accept);
    void setBusy(bool busy);
    void setName(const QString& name);
    void setCacheDir(const QString& dir);
    void setModelsDir(const QString& dir);
    void stopLending();

Q_SIGNALS:
    void started(const QString& deviceId, quint16 port);
    void failed(const QString& message);
    void pairingQuestion(const tandem::PairingQuestion& question);
    void pairingFinished(bool paired, tandem::PairFailure failure, const QString& message);
    void message(const QString& text);
    void workerChanged(bool running, const QString& coordinator);
    void lendingEvent(const QJsonObject& event);
    void unpairedBy(const QString& name, const QString& deviceId);

private:
    template <typename F> void post(F&& f);

    QThread m_thread;
    NodeService* m_node; // lives on m_thread; deleted there
    PeerModel* m_peers;
    QString m_deviceId;
    quint16 m_port = 0;
};

} // namespace tandem::ui
