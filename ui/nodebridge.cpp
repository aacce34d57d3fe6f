#include "ui/nodebridge.h"

#include "ui/peermodel.h"

namespace tandem::ui {

NodeBridge::NodeBridge(const NodeSettings& settings, QObject* parent)
    : QObject(parent)
    , m_node(new NodeService(settings))
    , m_peers(new PeerModel(this)) {
    m_thread.setObjectName(QStringLiteral("node"));
    m_node->moveToThread(&m_thread);
    connect(m_node, &NodeService::started, this, [this](const QString& id, quint16 port) {
        m_deviceId = id;
        m_port = port;
        Q_EMIT started(id, port);
    });
    connect(m_node, &NodeService::failed, this, &NodeBridge::failed);
    connect(m_node, &NodeService::peersChanged, m_peers, &PeerModel::setPeers);
    connect(m_node, &NodeService::pairingQuestion, this, &NodeBridge::pairingQuestion);
    connect(m_node, &NodeService::pairingFinished, this, &NodeBridge::pairingFinished);
    connect(m_node, &NodeService::message, this, &NodeBridge::message);
    connect(m_node, &NodeService::workerChanged, this, &NodeBridge::workerChanged);
    connect(m_node, &NodeService::lendingEvent, this, &NodeBridge::lendingEvent);
    connect(m_node, &NodeService::unpairedBy, this, &NodeBridge::unpairedBy);
}

NodeBridge::~NodeBridge() {
    if (m_thread.isRunning()) {
        NodeService* node = m_node;
        QMetaObject::invokeMethod(
            node, [node] { delete node; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    } else {
        delete m_node;
    }
}

template <typename F> void NodeBridge::post(F&& f) {
    QMetaObject::invokeMethod(m_node, std::forward<F>(f), Qt::QueuedConnection);
}

void NodeBridge::start() {
    if (m_thread.isRunning())
        return;
    m_thread.start();
    post([n = m_node] { n->start(); });
}

void NodeBridge::pairWith(const QString& host, quint16 port) {
    post([n = m_node, host, port] { n->pairWith(host, port); });
}

void NodeBridge::answerPairing(bool sameCode) {
    post([n = m_node, sameCode] { n->answerPairing(sameCode); });
}

void NodeBridge::cancelPairing() {
    post([n = m_node] { n->cancelPairing(); });
}

void NodeBridge::addAddress(const QString& host) {
    post([n = m_node, host] { n->addAddress(host); });
}

void NodeBridge::unpair(const QString& id) {
    post([n = m_node, id] { n->unpair(id); });
}

void NodeBridge::setAcceptWork(bool accept) {
    post([n = m_node, accept] { n->setAcceptWork(accept); });
}

void NodeBridge::setBusy(bool busy) {
    post([n = m_node, busy] { n->setBusy(busy); });
}

void NodeBridge::setName(const QString& name) {
    post([n = m_node, name] { n->setName(name); });
}

void NodeBridge::stopLending() {
    post([n = m_node] { n->stopLending(); });
}

void NodeBridge::setCacheDir(const QString& dir) {
    post([n = m_node, dir] { n->setCacheDir(dir); });
}

void NodeBridge::setModelsDir(const QString& dir) {
    post([n = m_node, dir] { n->setModelsDir(dir); });
}

} // namespace tandem::ui
