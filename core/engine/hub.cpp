#include "engine/hub.h"

#include "net/trustwatcher.h"

#include "common/version.h"
#include "engine/devices.h"
#include "engine/scriptmodel.h"
#include "net/truststore.h"

#include <QElapsedTimer>
#include <QHostInfo>
#include <QLoggingCategory>

#include <cstdlib>

Q_LOGGING_CATEGORY(lcHub, "tandem.hub")

namespace tandem {

wire::Hello makeHello(const QString& role, const QString& deviceId) {
    wire::Hello h;
    h.appVersion = appVersion();
    h.torchVersion = torchVersionString();
    h.deviceId = deviceId;
    h.displayName = QHostInfo::localHostName();
    h.role = role;
    h.devices = detectDevices();
    return h;
}

// ---- RemoteWorker ----------------------------------------------------------------------------

RemoteWorker::RemoteWorker(CoordinatorHub* hub, HubSession* session, QString name,
                           DeviceInfo device, int64_t maxBatch, const HubConfig* config)
    : m_hub(hub)
    , m_session(session)
    , m_name(std::move(name))
    , m_device(std::move(device))
    , m_maxBatch(maxBatch)
    , m_config(config) {}

void RemoteWorker::submit(WorkRequest request) {
    Awaited awaited{request.step, request.weightsVersion, -1, -1};
    if (m_config->mode == TrainMode::LocalSgd && request.fragments > 1)
        shapeFragmentRequest(request, awaited);
    else if (m_config->mode == TrainMode::LocalSgd && request.params && request.packedWeights)
        shapeOuterRequest(request);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_expect.push_back(awaited);
        if (!m_alive.load())
            return; // wait() reports the failure
    }
    CoordinatorHub* hub = m_hub;
    HubSession* session = m_session;
    QMetaObject::invokeMethod(
        hub, [hub, session, request = std::move(request)] { hub->sendAssign(session, request); },
        Qt::QueuedConnection);
}

// Local-SGD: the weights go whole the first time and as the outer-wire difference from what
// the worker holds after that.
void RemoteWorker::shapeOuterRequest(WorkRequest& request) {
    if (request.weightsVersion == m_mirrorVersion) {
        request.packedWeights.reset();
        return;
    }
    at::Tensor flat = flattenParams(*request.params);
    if (m_mirror.empty()) {
        // What the worker decodes from the bundle in the run's wire dtype.
        m_mirror.sentWhole(flat.to(scalarTypeOf(m_config->wire)).to(at::kFloat));
    } else {
        request.packedWeights = std::make_shared<const QByteArray>(
            m_mirror.update(flat, *request.buffers, m_config->outer));
        request.weightsDelta = true;
    }
    m_mirrorVersion = request.weightsVersion;
}

// Streaming: whole weights the first time, then one fragment's difference, and the delta
// that comes back covers the fragment asked for.
void RemoteWorker::shapeFragmentRequest(WorkRequest& request, Awaited& awaited) {
    if (m_fragments.empty())
        m_fragments = cutFragments(paramNumels(m_config->layout), request.fragments);
    if (request.params && request.packedWeights) {
        m_mirror.sentWhole(
            flattenParams(*request.params).to(scalarTypeOf(m_config->wire)).to(at::kFloat));
        request.mergeFragment = -1;
    } else {
        request.packedWeights.reset();
        if (request.mergeFragment >= 0 && request.mergeValues.defined() && !m_mirror.empty()) {
            request.packedWeights = std::make_shared<const QByteArray>(m_mirror.updateFragment(
                request.mergeValues, m_fragments[size_t(request.mergeFragment)],
                request.mergeBuffers, m_config->outer));
            request.weightsDelta = true;
        } else {
            request.mergeFragment = -1;
        }
    }
    request.params = nullptr;
    awaited.fragment = request.sendFragment;
    awaited.values = m_fragments[size_t(request.sendFragment)].count;
}

bool RemoteWorker::ready() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return !m_results.empty() || !m_alive.load();
}

Expected<WorkResult> RemoteWorker::wait() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return !m_results.empty() || !m_alive.load(); });
    if (m_results.empty() || m_expect.empty())
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("worker %1 left: %2").arg(m_name, m_error));
    const wire::Result r = m_results.front().first;
    const QByteArray bytes = std::move(m_results.front().second);
    const Awaited awaited = m_expect.front();
    m_results.pop_front();
    m_expect.pop_front();
    lock.unlock();

    WorkResult out = resultFrom(r);
    Status st = success();
    if (m_config->mode == TrainMode::LocalSgd) {
        at::Tensor flat;
        st = unpackOuter(bytes, m_config->layout, m_config->outer, &flat, &out.buffers,
                         awaited.values);
        if (st && awaited.fragment >= 0)
            out.grads = fragmentGrads(flat, m_fragments[size_t(awaited.fragment)],
                                      m_config->layout.paramShapes);
        else if (st)
            out.grads = splitParams(flat, m_config->layout);
    } else {
        st = unpackBundle(bytes, m_config->layout, m_config->wire, &out.grads, &out.buffers,
                          BundleOrder::Backward);
    }
    if (!st) {
        fail(st.error().message);
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("worker %1 sent malformed gradients: %2")
                             .arg(m_name, st.error().message));
    }
    return out;
}

bool RemoteWorker::deliver(const wire::Result& result, QByteArray tensors) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        // Exactly one result per assignment, in the order they went out: a repeated or late
        // push (same worker, another or an already answered step) is not applied.
        const size_t next = m_results.size();
        if (next >= m_expect.size() || result.step != m_expect[next].step ||
            result.weightsVersion != m_expect[next].version)
            return false;
        m_results.emplace_back(result, std::move(tensors));
    }
    m_cv.notify_all();
    notifyReady();
    return true;
}

void RemoteWorker::fail(const QString& reason) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_alive.load())
            return;
        m_error = reason;
        m_alive = false;
    }
    m_cv.notify_all();
    notifyReady();
}

void RemoteWorker::updateBytes(qint64 sent, qint64 received) {
    m_bytesSent = sent;
    m_bytesReceived = received;
}

// ---- HubSession -------------------------------------------------------------------------------

HubSession::HubSession(CoordinatorHub* hub, Connection* connection)
    : QObject(hub)
    , m_hub(hub)
    , m_conn(connection) {
    m_conn->setParent(this);
    m_conn->setIdleTimeout(hub->config().workerTimeoutMs);
    // What a worker may send: its gradient bundles, of exactly the size the schema gives.
    m_conn->setBlobCap(wire::BlobKind::Tensors,
                       hub->config().mode == TrainMode::LocalSgd
                           ? outerBundleBytes(hub->config().layout, hub->config().outer)
                           : hub->config().layout.bundleBytes(hub->config().wire));
    connect(m_conn, &Connection::received, this, &HubSession::onMessage);
    connect(m_conn, &Connection::closed, this, &HubSession::onClosed);
    // Unpairing takes effect on open sessions: the trust store is read again every second
    // (another process, the CLI or the GUI, may have removed the device).
    // The session exists only for a device that was trusted when it connected (onSecured).
    auto* trust = new TrustWatcher(m_hub->config().home, this);
    trust->watch(m_conn->peerId());
    connect(trust, &TrustWatcher::revoked, this, [this](const QString& id) {
        if (m_state != State::Closed)
            refuse(wire::RejectCode::Untrusted,
                   QStringLiteral("device %1 was unpaired from this coordinator").arg(id));
    });
}

void HubSession::refuse(wire::RejectCode code, const QString& message) {
    m_hub->addMessage(QStringLiteral("refused %1: %2").arg(m_conn->peerAddress(), message));
    m_conn->close(message, wire::Reject{code, message});
}

void HubSession::onMessage(const wire::Message& m) {
    const HubConfig& cfg = m_hub->config();
    switch (m_state) {
    case State::AwaitHello: {
        const auto* h = std::get_if<wire::Hello>(&m);
        if (!h) {
            refuse(wire::RejectCode::Protocol,
                   QStringLiteral("expected Hello, got %1").arg(wire::messageName(m)));
            return;
        }
        if (const QString why = wire::incompatibility(appVersion(), h->protocolVersion,
                                                      h->appVersion, QStringLiteral("worker"));
            !why.isEmpty()) {
            refuse(wire::RejectCode::Version, why);
            return;
        }
        if (h->role != QLatin1String("worker")) {
            refuse(wire::RejectCode::Protocol,
                   QStringLiteral("expected a worker, got a %1").arg(h->role));
            return;
        }
        m_name = QStringLiteral("%1@%2").arg(h->displayName.isEmpty() ? QStringLiteral("worker")
                                                                      : h->displayName,
                                             m_conn->peerAddress());
        wire::RunSpec spec;
        spec.runId = cfg.runId;
        spec.configJson = cfg.configJson;
        spec.modelBlob = m_conn->sendBlob(wire::BlobKind::Model, cfg.modelArchive);
        spec.schemaHash = cfg.schemaHash;
        spec.datasetSpec = cfg.datasetSpec;
        spec.datasetHash = cfg.datasetHash;
        spec.mode = nameOf(cfg.mode);
        spec.wireDtype = dtypeName(cfg.wire);
        spec.params = cfg.layout.paramMetas();
        spec.buffers = cfg.layout.bufferMetas();
        spec.trainSamples = cfg.trainSamples;
        if (cfg.mode == TrainMode::LocalSgd)
            spec.outerWire = nameOf(cfg.outer);
        m_conn->send(spec);
        m_state = State::AwaitReady;
        return;
    }
    case State::AwaitReady: {
        if (const auto* d = std::get_if<wire::DataRequest>(&m)) {
            if (d->datasetHash != cfg.datasetHash) {
                refuse(wire::RejectCode::Protocol,
                       QStringLiteral("asked for a dataset this run does not use"));
                return;
            }
            // One transfer at a time: asking again before the first has arrived is not what a
            // worker does, and each request would queue the whole dataset once more.
            if (m_datasetBlob != 0 && m_conn->sending(m_datasetBlob)) {
                refuse(wire::RejectCode::Protocol,
                       QStringLiteral("asked for the dataset again while it was being sent"));
                return;
            }
            m_hub->addMessage(QStringLiteral("sending the dataset to %1").arg(m_name));
            const QByteArray blob = m_hub->datasetContainer();
            m_datasetBlob = m_conn->sendBlob(wire::BlobKind::Dataset, blob);
            m_conn->send(wire::DataOffer{m_datasetBlob});
            return;
        }
        if (const auto* r = std::get_if<wire::Ready>(&m)) {
            if (r->schemaHash != cfg.schemaHash) {
                refuse(
                    wire::RejectCode::Schema,
                    QStringLiteral("the worker's model has schema %1 but the coordinator's has %2")
                        .arg(r->schemaHash.left(16), cfg.schemaHash.left(16)));
                return;
            }
            m_worker =
                std::make_shared<RemoteWorker>(m_hub, this, m_name, r->device, r->maxBatch, &cfg);
            m_setupSent = m_conn->bytesSent();
            m_setupReceived = m_conn->bytesReceived();
            m_state = State::Working;
            m_hub->addMessage(
                QStringLiteral("worker %1 joined with %2%3")
                    .arg(m_name, r->device.name,
                         r->precision.isEmpty() || r->precision == QLatin1String("fp32")
                             ? QString()
                             : QStringLiteral(" (%1 autocast)").arg(r->precision)));
            if (!r->precisionNote.isEmpty())
                m_hub->addMessage(QStringLiteral("worker %1: %2").arg(m_name, r->precisionNote));
            m_hub->joined(m_worker);
            return;
        }
        if (const auto* rj = std::get_if<wire::Reject>(&m)) {
            m_hub->addMessage(
                QStringLiteral("worker %1 declined the run: %2").arg(m_name, rj->message));
            m_conn->close(rj->message);
            return;
        }
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("unexpected %1 while loading").arg(wire::messageName(m)));
        return;
    }
    case State::Working: {
        if (const auto* r = std::get_if<wire::Result>(&m)) {
            std::optional<QByteArray> t = m_conn->takeBlob(r->tensorsBlob);
            if (!t) {
                refuse(wire::RejectCode::Protocol,
                       QStringLiteral("a result without its gradients"));
                return;
            }
            m_worker->updateBytes(m_conn->bytesSent() - m_setupSent,
                                  m_conn->bytesReceived() - m_setupReceived);
            if (!m_worker->deliver(*r, std::move(*t)))
                m_hub->addMessage(QStringLiteral("ignored a repeated result for step %1 from %2")
                                      .arg(r->step + 1)
                                      .arg(m_name));
            return;
        }
        if (const auto* e = std::get_if<wire::WorkError>(&m)) {
            m_hub->addMessage(QStringLiteral("worker %1 failed: %2").arg(m_name, e->message));
            m_conn->close(e->message);
            return;
        }
        if (std::holds_alternative<wire::Bye>(m)) {
            m_conn->close(QStringLiteral("the worker left"));
            return;
        }
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("unexpected %1").arg(wire::messageName(m)));
        return;
    }
    case State::Closed:
        return;
    }
}

void HubSession::onClosed(const QString& reason) {
    const State was = m_state;
    m_state = State::Closed;
    if (m_worker) {
        m_worker->fail(reason);
        m_hub->addMessage(QStringLiteral("worker %1 left: %2").arg(m_name, reason));
    } else if (was != State::Closed && !m_name.isEmpty()) {
        m_hub->addMessage(
            QStringLiteral("worker %1 disconnected before joining: %2").arg(m_name, reason));
    }
    m_hub->sessionGone(this);
    // The connection may still be sending its last frame (a Reject): it goes on its own.
    m_conn->setParent(m_hub);
    m_conn->disconnect(this);
    m_conn->deleteWhenFlushed();
    deleteLater();
}

void HubSession::assign(const WorkRequest& req) {
    if (m_state != State::Working)
        return;
    wire::Assign a;
    a.step = req.step;
    a.indices = req.indices;
    a.seed = req.seed;
    a.weightsVersion = req.weightsVersion;
    a.innerSteps = req.innerSteps;
    a.lr = req.innerLr;
    a.weightsDelta = req.weightsDelta;
    a.fragments = req.fragments;
    a.sendFragment = req.sendFragment;
    a.mergeFragment = req.weightsDelta ? req.mergeFragment : -1;
    if (uint64_t(req.weightsVersion) != m_lastWeightsVersion && req.packedWeights) {
        // Fault injection for tests: the coordinator dies with half of the weights sent in the
        // first broadcast from step N on (the balancer may have left this worker out of step N).
        static const int exitMidBroadcast =
            qEnvironmentVariableIntValue("TANDEM_FAULT_EXIT_MID_BROADCAST");
        if (exitMidBroadcast > 0 && req.step + 1 >= exitMidBroadcast) {
            const uint64_t id = m_conn->openBlob(wire::BlobKind::Tensors, *req.packedWeights);
            m_conn->growBlob(id, req.packedWeights->size() / 2);
            m_conn->flush();
            qCWarning(lcHub, "exiting mid-broadcast (TANDEM_FAULT_EXIT_MID_BROADCAST)");
            std::_Exit(3);
        }
        a.weightsBlob = m_conn->sendBlob(wire::BlobKind::Tensors, *req.packedWeights);
        m_lastWeightsVersion = uint64_t(req.weightsVersion);
    }
    m_conn->send(a);
}

// ---- CoordinatorHub ---------------------------------------------------------------------------

CoordinatorHub::CoordinatorHub(HubConfig config)
    : m_config(std::move(config)) {
    m_thread.setObjectName(QStringLiteral("tandem-network"));
}

CoordinatorHub::~CoordinatorHub() {
    if (m_thread.isRunning())
        finish(QStringLiteral("the coordinator stopped"));
}

Expected<quint16> CoordinatorHub::start() {
    auto identity = Identity::loadOrCreate(m_config.home);
    if (!identity)
        return identity.error();
    m_deviceId = identity->deviceId();
    m_identity = *identity;
    moveToThread(&m_thread);
    m_thread.start();
    Expected<quint16> result = makeError(ErrorCode::Runtime, QStringLiteral("not started"));
    QMetaObject::invokeMethod(
        this,
        [this, &result, id = *identity] {
            m_server = new Server(id, this);
            connect(m_server, &Server::connectionSecured, this, &CoordinatorHub::onSecured);
            if (auto st = m_server->listenOn(m_config.address, m_config.port); !st)
                result = st.error();
            else
                result = m_server->serverPort();
        },
        Qt::BlockingQueuedConnection);
    return result;
}

void CoordinatorHub::onSecured(Connection* c) {
    // Nothing about this machine (its name, versions, devices) goes to a device it has not
    // paired with: any TLS client can present a certificate, so trust is checked first and a
    // stranger hears only that it is not paired.
    if (!TrustStore(m_config.home).contains(c->peerId())) {
        const QString why = QStringLiteral("device %1 is not paired with this coordinator; pair "
                                           "the two machines, or run 'tandem trust add %1' on "
                                           "the coordinator")
                                .arg(c->peerId());
        addMessage(QStringLiteral("refused %1: %2").arg(c->peerAddress(), why));
        c->setParent(this);
        connect(c, &Connection::closed, c, &Connection::deleteWhenFlushed);
        c->close(why, wire::Reject{wire::RejectCode::Untrusted, why});
        return;
    }
    auto* s = new HubSession(this, c);
    m_sessions << s;
    c->send(makeHello(QStringLiteral("coordinator"), m_deviceId));
}

void CoordinatorHub::sessionGone(HubSession* session) {
    m_sessions.removeAll(session);
}

void CoordinatorHub::sendAssign(HubSession* session, const WorkRequest& request) {
    if (!m_sessions.contains(session))
        return; // it left; its RemoteWorker already reports the failure
    session->assign(request);
}

QByteArray CoordinatorHub::datasetContainer() {
    if (m_datasetBlob.isEmpty() && m_config.data) {
        auto b = datasetToContainer(*m_config.data);
        if (b)
            m_datasetBlob = *b;
    }
    return m_datasetBlob;
}

void CoordinatorHub::addMessage(const QString& text) {
    qCDebug(lcHub) << text;
    if (m_config.events)
        m_config.events(HubEvent{HubEvent::Kind::Note, nullptr, text});
}

void CoordinatorHub::joined(std::shared_ptr<RemoteWorker> worker) {
    if (m_config.events)
        m_config.events(HubEvent{HubEvent::Kind::Joined, std::move(worker), QString()});
}

void CoordinatorHub::invite(const QString& host, quint16 port) {
    QMetaObject::invokeMethod(
        this,
        [this, host, port] {
            if (!m_identity || !m_server)
                return;
            Connection* c = Connection::connectTo(host, port, *m_identity, this);
            const QString where = QStringLiteral("%1:%2").arg(host).arg(port);
            connect(c, &Connection::secured, this, [this, c, where](const QString& peerId) {
                if (!TrustStore(m_config.home).contains(peerId)) {
                    addMessage(
                        QStringLiteral("not inviting %1: device %2 is not paired with this machine")
                            .arg(where, peerId));
                    c->close(QStringLiteral("not paired"));
                    return;
                }
                c->send(makeHello(QStringLiteral("coordinator"), m_deviceId));
                c->send(wire::Invite{m_server->serverPort(), m_config.runId});
                addMessage(QStringLiteral("invited %1 to join").arg(where));
            });
            connect(c, &Connection::received, this, [this, c, where](const wire::Message& m) {
                if (const auto* r = std::get_if<wire::Reject>(&m))
                    addMessage(
                        QStringLiteral("%1 declined the invitation: %2").arg(where, r->message));
                if (std::holds_alternative<wire::Bye>(m) || std::holds_alternative<wire::Reject>(m))
                    c->close(QStringLiteral("invitation answered"));
            });
            connect(c, &Connection::closed, this, [c] { c->deleteWhenFlushed(); });
        },
        Qt::QueuedConnection);
}

void CoordinatorHub::broadcast(wire::Control::Action action) {
    QMetaObject::invokeMethod(
        this,
        [this, action] {
            for (HubSession* s : std::as_const(m_sessions))
                if (s->state() == HubSession::State::Working)
                    s->connection()->send(wire::Control{action});
        },
        Qt::QueuedConnection);
}

void CoordinatorHub::finish(const QString& reason) {
    if (!m_thread.isRunning())
        return;
    QMetaObject::invokeMethod(
        this,
        [this, reason] {
            for (HubSession* s : std::as_const(m_sessions)) {
                s->connection()->send(wire::Bye{reason});
                s->connection()->close(reason);
            }
            if (m_server)
                m_server->close();
            // Let the Bye frames reach the sockets, then free everything on this thread
            // (its sockets and timers belong to it) before it ends.
            QTimer::singleShot(200, this, [this] {
                m_sessions.clear();
                const QObjectList kids = children();
                for (QObject* c : kids)
                    delete c;
                m_server = nullptr;
                moveToThread(nullptr);
                m_thread.quit();
            });
        },
        Qt::QueuedConnection);
    m_thread.wait(10000);
}

} // namespace tandem
