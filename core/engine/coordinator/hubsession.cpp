#include "engine/coordinator/hubsession.h"

#include "engine/coordinator/remoteworker.h"
#include "engine/coordinator/sessionhost.h"

#include "net/trustwatcher.h"

#include "common/failpoint.h"
#include "common/version.h"
#include "engine/coordinator/modechoice.h"
#include "engine/shard/shardplan.h"
#include "engine/step/objective.h"

#include <QLocale>

#include <algorithm>

namespace tandem {

namespace {
// The handshake's probe: filler each way, per round, and its rounds.
constexpr qint64 kProbeBytes = 512 << 10;
constexpr int kProbeRounds = 2;

} // namespace

HubSession::HubSession(SessionHost* hub, Connection* connection)
    : QObject(hub->networkObject())
    , m_hub(hub)
    , m_conn(connection) {
    m_conn->setParent(this);
    m_conn->setIdleTimeout(hub->config().workerTimeoutMs);
    connect(m_conn, &Connection::received, this, &HubSession::onMessage);
    connect(m_conn, &Connection::probed, this, &HubSession::onProbed);
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

void HubSession::declined(const QString& why) {
    m_hub->addMessage(QStringLiteral("worker %1 declined the run: %2").arg(m_name, why));
    m_conn->close(why);
}

void HubSession::onMessage(const wire::Message& m) {
    switch (m_state) {
    case State::AwaitHello:
        if (const auto* h = std::get_if<wire::Hello>(&m))
            onHello(*h);
        else
            refuse(wire::RejectCode::Protocol,
                   QStringLiteral("expected Hello, got %1").arg(wire::messageName(m)));
        return;
    case State::Probing:
    case State::AwaitRun:
        // A worker may decline at any point before it has joined, such as when its
        // owner stops it while its link is being measured.
        if (const auto* rj = std::get_if<wire::Reject>(&m))
            declined(rj->message);
        else
            refuse(
                wire::RejectCode::Protocol,
                QStringLiteral("unexpected %1 before the run was sent").arg(wire::messageName(m)));
        return;
    case State::AwaitReady:
        if (const auto* d = std::get_if<wire::DataRequest>(&m))
            onDataRequest(*d);
        else if (const auto* b = std::get_if<wire::BaseRequest>(&m))
            onBaseRequest(*b);
        else if (const auto* r = std::get_if<wire::Ready>(&m))
            onReady(*r);
        else if (const auto* rj = std::get_if<wire::Reject>(&m))
            declined(rj->message);
        else
            refuse(wire::RejectCode::Protocol,
                   QStringLiteral("unexpected %1 while loading").arg(wire::messageName(m)));
        return;
    case State::Working:
        if (const auto* r = std::get_if<wire::Result>(&m)) {
            onResult(*r);
        } else if (const auto* e = std::get_if<wire::WorkError>(&m)) {
            m_hub->addMessage(QStringLiteral("worker %1 failed: %2").arg(m_name, e->message));
            m_conn->close(e->message);
        } else if (const auto* sr = std::get_if<wire::ShardReport>(&m);
                   sr && m_hub->config().shardReport) {
            m_hub->config().shardReport(m_conn->peerId(), *sr);
        } else if (const auto* ss = std::get_if<wire::ShardState>(&m);
                   ss && m_hub->config().shardState) {
            RangeState state;
            if (std::optional<QString> file = m_conn->takeBlobFile(ss->blob))
                state = RangeState::ofFile(*file);
            else if (std::optional<QByteArray> bytes = m_conn->takeBlob(ss->blob))
                state = RangeState::ofBytes(std::move(*bytes));
            else
                return refuse(wire::RejectCode::Protocol,
                              QStringLiteral("a range's optimizer state without its bytes"));
            m_hub->config().shardState(m_conn->peerId(), ss->optimizerSteps, state);
        } else if (const auto* bye = std::get_if<wire::Bye>(&m)) {
            m_leaving = true;
            m_conn->close(bye->reason.isEmpty() ? QStringLiteral("the worker left") : bye->reason);
        } else {
            refuse(wire::RejectCode::Protocol,
                   QStringLiteral("unexpected %1").arg(wire::messageName(m)));
        }
        return;
    case State::Closed:
        return;
    }
}

void HubSession::onHello(const wire::Hello& h) {
    if (const QString why = wire::incompatibility(appVersion(), h.protocolVersion, h.appVersion,
                                                  QStringLiteral("worker"));
        !why.isEmpty()) {
        refuse(wire::RejectCode::Version, why);
        return;
    }
    if (h.role != nameOf(PeerRole::Worker)) {
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("expected a worker, got a %1").arg(h.role));
        return;
    }
    m_name = m_hub->workerName(h.displayName, m_conn->peerId(), this);
    m_holdsOnly = h.holdsOnly;
    if (const QString why = m_hub->config().dismissed; !why.isEmpty()) {
        // The run already chose to train alone: nothing to measure, nothing for it to do.
        m_hub->addMessage(
            QStringLiteral("%1 came after the run chose to train alone; sent home").arg(m_name));
        m_state = State::AwaitRun;
        m_conn->close(why, wire::Bye{why});
        return;
    }
    // The link first: what it moves decides --mode auto, and the log says it either way.
    m_state = State::Probing;
    m_conn->probe(kProbeBytes, kProbeRounds);
}

void HubSession::onDataRequest(const wire::DataRequest& d) {
    const HubConfig& cfg = m_hub->config();
    if (d.datasetHash != cfg.datasetHash) {
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("asked for a dataset this run does not use"));
        return;
    }
    // One transfer at a time: asking again before the first has arrived is not what a worker
    // does, and each request would queue the whole dataset once more.
    if (m_datasetBlob != 0 && m_conn->sending(m_datasetBlob)) {
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("asked for the dataset again while it was being sent"));
        return;
    }
    m_hub->addMessage(QStringLiteral("sending the dataset to %1").arg(m_name));
    const QByteArray blob = m_hub->datasetContainer();
    wire::DataOffer offer;
    offer.blob = m_datasetBlob = m_conn->sendBlob(wire::BlobKind::Dataset, blob);
    // Token windows send their tokens apart, straight from the mapped file and never copied:
    // the worker writes them to its cache as they arrive and maps them there. The parts are
    // read from the stream as the socket drains; holding the dataset keeps it mapped until
    // they are sent.
    if (const auto& data = cfg.data) {
        m_sentData = data;
        if (const QByteArray t = splitTokens(data->train); !t.isEmpty())
            offer.trainTokensBlob = m_datasetBlob = m_conn->sendBlob(wire::BlobKind::Tokens, t);
        if (const QByteArray t = splitTokens(data->test); !t.isEmpty())
            offer.testTokensBlob = m_datasetBlob = m_conn->sendBlob(wire::BlobKind::Tokens, t);
    }
    m_conn->send(offer);
}

void HubSession::onBaseRequest(const wire::BaseRequest& r) {
    const auto& base = m_hub->config().base;
    if (!base || r.baseHash != base->manifest().hash ||
        r.part >= uint32_t(base->manifest().parts())) {
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("asked for a part of a base model this run does not have"));
        return;
    }
    const BaseManifest& m = base->manifest();
    // A worker asks a few parts ahead; one that asks for more than that before they have left
    // would have this machine queue the base in memory.
    m_baseBlobs.erase(std::remove_if(m_baseBlobs.begin(), m_baseBlobs.end(),
                                     [this](uint64_t id) { return !m_conn->sending(id); }),
                      m_baseBlobs.end());
    if (m_baseBlobs.size() >= 8) {
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("asked for more parts of the base model than it had received"));
        return;
    }
    if (!m_baseClock.isValid()) {
        m_baseClock.start();
        m_hub->addMessage(QStringLiteral("sending the base model to %1 (%2, from part %3 of %4)")
                              .arg(m_name, QLocale::c().formattedDataSize(m.totalBytes))
                              .arg(r.part + 1)
                              .arg(m.parts()));
    }
    wire::BasePart part;
    part.part = r.part;
    const QByteArray bytes = base->part(int(r.part));
    part.blob = m_conn->sendBlob(wire::BlobKind::BasePart, bytes);
    m_baseBlobs.push_back(part.blob);
    m_conn->send(part);
    m_baseBytes += bytes.size();
    // Every 10 s or so, and at the last part: how far, and how long the rest should take at the
    // pace so far.
    const qint64 ms = m_baseClock.elapsed();
    const bool last = r.part + 1 == uint32_t(m.parts());
    if (last || ms - m_baseLogged >= 10000) {
        m_baseLogged = ms;
        const qint64 left = m.totalBytes - (qint64(r.part) + 1) * m.partBytes;
        const double rate = ms > 0 ? double(m_baseBytes) / (ms / 1000.0) : 0;
        m_hub->addMessage(
            last ? QStringLiteral("sent the base model to %1: %2 in %3 s")
                       .arg(m_name, QLocale::c().formattedDataSize(m_baseBytes))
                       .arg(ms / 1000.0, 0, 'f', 1)
                 : QStringLiteral("sending the base model to %1: %2 of %3, about %4 s left")
                       .arg(m_name,
                            QLocale::c().formattedDataSize((qint64(r.part) + 1) * m.partBytes),
                            QLocale::c().formattedDataSize(m.totalBytes))
                       .arg(rate > 0 ? qRound64(double(std::max<qint64>(0, left)) / rate) : 0));
    }
}

void HubSession::onReady(const wire::Ready& r) {
    const HubConfig& cfg = m_hub->config();
    if (r.schemaHash != cfg.schemaHash) {
        refuse(wire::RejectCode::Schema,
               QStringLiteral("the worker's model has schema %1 but the coordinator's has %2")
                   .arg(r.schemaHash.left(16), cfg.schemaHash.left(16)));
        return;
    }
    if (r.holdsOnly && !cfg.sharded) { // the worker checks this too
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("the worker only holds a range of a sharded run, and this run is "
                              "not sharded"));
        return;
    }
    if (cfg.sharded && r.shardPort == 0) {
        refuse(wire::RejectCode::Protocol,
               QStringLiteral("the run is sharded and the worker listens for no links"));
        return;
    }
    m_shardPort = r.shardPort;
    m_worker = std::make_shared<RemoteWorker>(m_hub, this, m_name, m_conn->peerId(), r.device,
                                              r.maxBatch, &cfg);
    m_worker->setHoldsOnly(r.holdsOnly);
    m_setupSent = m_conn->bytesSent();
    m_setupReceived = m_conn->bytesReceived();
    m_hub->addMessage(QStringLiteral("worker %1 was sent %2 bytes before it was ready")
                          .arg(m_name)
                          .arg(m_setupSent));
    m_state = State::Working;
    if (r.holdsOnly)
        m_hub->addMessage(
            QStringLiteral("worker %1 joined to hold a range; it computes nothing").arg(m_name));
    else
        m_hub->addMessage(QStringLiteral("worker %1 joined with %2%3")
                              .arg(m_name, r.device.name,
                                   r.precision.isEmpty() || r.precision == QLatin1String("fp32")
                                       ? QString()
                                       : QStringLiteral(" (%1 autocast)").arg(r.precision)));
    if (!r.precisionNote.isEmpty())
        m_hub->addMessage(QStringLiteral("worker %1: %2").arg(m_name, r.precisionNote));
    m_hub->joined(m_worker);
}

void HubSession::onResult(const wire::Result& r) {
    std::optional<QByteArray> t = m_conn->takeBlob(r.tensorsBlob);
    if (!t) {
        refuse(wire::RejectCode::Protocol, QStringLiteral("a result without its gradients"));
        return;
    }
    m_worker->updateBytes(m_conn->bytesSent() - m_setupSent,
                          m_conn->bytesReceived() - m_setupReceived);
    switch (m_worker->deliver(r, std::move(*t))) {
    case RemoteWorker::Delivery::Kept:
        break;
    case RemoteWorker::Delivery::Repeated:
        m_hub->addMessage(QStringLiteral("ignored a repeated result for step %1 from %2")
                              .arg(r.step + 1)
                              .arg(m_name));
        break;
    case RemoteWorker::Delivery::Invalid:
        m_conn->close(
            QStringLiteral("a result for step %1, which it was not given yet").arg(r.step + 1));
        break;
    }
}

void HubSession::sendRun() {
    const HubConfig& cfg = m_hub->config();
    // What a worker may send: its gradient bundles, of exactly the size the schema gives.
    m_conn->setBlobCap(wire::BlobKind::Tensors, cfg.mode == TrainMode::LocalSgd
                                                    ? outerBundleBytes(cfg.layout, cfg.outer)
                                                    : cfg.layout.bundleBytes(cfg.wire));
    // A sharded run's owner also sends its range's optimizer state for a checkpoint: written to
    // a file as it comes, or held in memory where no file can take it.
    if (cfg.sharded) {
        m_conn->setBlobCap(wire::BlobKind::RangeState, shardStateCap(cfg.layout.paramCount()));
        if (!cfg.stateDir.isEmpty())
            m_conn->setBlobSpill(wire::BlobKind::RangeState, cfg.stateDir, /*orHold=*/true);
    }
    wire::RunSpec spec;
    spec.runId = cfg.runId;
    spec.settings = cfg.settings;
    // A worker that only holds reads the trainable tensors' shapes from the spec, not the model:
    // a model of gigabytes would cross its link for nothing (and sit in its memory).
    if (!m_holdsOnly && cfg.modelArchive) {
        // From its file a part at a time as the link takes it: a worker that joins costs this
        // machine a few parts of the model, not a copy of it.
        spec.modelBlob = sendSpilled(wire::BlobKind::Model, cfg.modelArchive);
    }
    if (cfg.base) {
        spec.baseManifest = cfg.base->manifest().json();
        spec.baseHash = cfg.base->manifest().hash;
    }
    spec.schemaHash = cfg.schemaHash;
    spec.datasetSpec = cfg.datasetSpec;
    spec.datasetHash = cfg.datasetHash;
    spec.mode = cfg.mode;
    spec.wire = wireDtypeOf(cfg.wire);
    spec.params = cfg.layout.paramMetas();
    spec.buffers = cfg.layout.bufferMetas();
    spec.trainSamples = cfg.trainSamples;
    spec.sharded = cfg.sharded;
    if (cfg.mode == TrainMode::LocalSgd) {
        spec.outerWire = cfg.outer;
        spec.fragments = cfg.fragments;
    }
    m_conn->send(spec);
    m_state = State::AwaitReady;
}

// The handshake's probe lets the run go on; a later one, taken while the link was quiet, is
// logged when two in a row put the link at half or twice what the log last said.
void HubSession::onProbed(const LinkProbe& link) {
    if (m_state == State::Probing) {
        m_reportedRate = link.bytesPerSecond;
        m_hub->probed(m_name, m_conn->peerAddress(), link);
        if (const QString why = m_hub->config().dismissed; !why.isEmpty()) {
            m_state = State::AwaitRun; // sent home before it has the run
            m_conn->close(why, wire::Bye{why});
        } else if (m_hub->config().modePending)
            m_state = State::AwaitRun;
        else
            sendRun();
        return;
    }
    // The training side judges a worker it left out for its link by the latest measurement.
    if (m_state == State::Working && m_hub->config().events)
        m_hub->config().events(HubEvent::relinked(m_name, link));
    // A floor says nothing of a change: the link was too quick to time.
    if (m_state != State::Working || m_reportedRate <= 0 || link.atLeast)
        return;
    const double r = link.bytesPerSecond / m_reportedRate;
    const int verdict = r >= 2 ? 1 : r <= 0.5 ? -1 : 0;
    if (verdict != 0 && verdict == m_liveVerdict) {
        m_hub->addMessage(
            QStringLiteral("the link to %1 now moves %2 (%3 when measured before)")
                .arg(m_name, rateText(link.bytesPerSecond), rateText(m_reportedRate)));
        m_reportedRate = link.bytesPerSecond;
        m_liveVerdict = 0;
        return;
    }
    m_liveVerdict = verdict;
}

void HubSession::onClosed(const QString& reason) {
    const State was = m_state;
    m_state = State::Closed;
    if (m_worker) {
        m_worker->fail(reason, m_leaving);
        m_hub->addMessage(QStringLiteral("worker %1 left: %2").arg(m_name, reason));
        if (m_hub->config().shardLost)
            m_hub->config().shardLost(m_conn->peerId(), reason);
    } else if (was != State::Closed && !m_name.isEmpty()) {
        m_hub->addMessage(
            QStringLiteral("worker %1 disconnected before joining: %2").arg(m_name, reason));
    }
    m_hub->sessionGone(this);
    // The connection may still be sending its last frame (a Reject): it goes on its own.
    m_conn->setParent(m_hub->networkObject());
    m_conn->disconnect(this);
    m_conn->deleteWhenFlushed();
    deleteLater();
}

uint64_t HubSession::sendSpilled(wire::BlobKind kind, const std::shared_ptr<SpilledBytes>& bytes) {
    if (!bytes->spilled())
        return m_conn->sendBlob(kind, bytes->inMemory());
    return m_conn->sendBlobFrom(kind, bytes->size(),
                                [bytes](qint64 at, qint64 n) { return bytes->read(at, n); });
}

void HubSession::sendShardSetup(wire::ShardSetup setup,
                                const std::shared_ptr<SpilledBytes>& range) {
    if (m_state != State::Working)
        return;
    if (range && range->size() > 0)
        setup.mastersBlob = sendSpilled(wire::BlobKind::Tensors, range);
    m_conn->send(setup);
    // A setup again (the run going on without a machine) starts the worker's replica afresh:
    // the step's weights go with its next assignment, whatever it was sent before. A probe of
    // the links changes nothing.
    if (!setup.probe)
        m_lastWeightsVersion = UINT64_MAX;
}

void HubSession::sendShard(const wire::Message& message) {
    if (m_state == State::Working)
        m_conn->send(message);
}

void HubSession::assign(const WorkRequest& req) {
    if (m_state != State::Working)
        return;
    wire::Assign a;
    a.step = req.step;
    a.indices = req.indices;
    a.seed = req.seed;
    a.weightsVersion = req.weightsVersion;
    a.weightsDelta = req.weightsDelta;
    a.share = req.share;
    if (const auto& table = m_hub->config().reference)
        a.referenceLogps = referenceRowsOf(*table, req.indices);
    if (req.local)
        req.local->describe(a);
    if (uint64_t(req.weightsVersion) != m_lastWeightsVersion && req.packedWeights) {
        if (TANDEM_FAILPOINT_DUE("hub.broadcast")) {
            // Half of the weights on the wire, then the failpoint's action.
            const uint64_t id = m_conn->openBlob(wire::BlobKind::Tensors, *req.packedWeights);
            m_conn->growBlob(id, req.packedWeights->size() / 2);
            m_conn->flush();
            if (TANDEM_FAILPOINT_ACT("hub.broadcast")) {
                m_conn->close(QStringLiteral("failpoint hub.broadcast"));
                return;
            }
            m_conn->growBlob(id, req.packedWeights->size());
            a.weightsBlob = id;
        } else {
            a.weightsBlob = m_conn->sendBlob(wire::BlobKind::Tensors, *req.packedWeights);
        }
        m_lastWeightsVersion = uint64_t(req.weightsVersion);
    }
    m_conn->send(a);
}

} // namespace tandem
