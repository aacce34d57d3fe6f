#include "engine/shard/shardnode.h"

#include <QScopeGuard>

#include <algorithm>
#include <cstring>
#include <utility>

namespace tandem {

namespace {

std::vector<std::pair<int64_t, int64_t>> spans(const std::vector<ShardRange>& ranges) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const ShardRange& r : ranges)
        out.emplace_back(r.begin, r.end);
    return out;
}

} // namespace

ShardNode::ShardNode(QString deviceId, ShardLayout layout, std::vector<ShardRange> ranges,
                     DType wire, ShardOwner* owner, std::vector<at::Tensor>* replica,
                     QObject* parent)
    : QObject(parent)
    , m_deviceId(std::move(deviceId))
    , m_layout(layout)
    , m_ranges(std::move(ranges))
    , m_wire(wire)
    , m_owner(owner)
    , m_replica(replica)
    , m_replicaStep(std::move(layout), spans(m_ranges), wire)
    , m_route(spans(m_ranges), wire) {
    if (m_owner)
        m_ownerStep.emplace(*m_owner, wire);
    m_keptBytes.assign(m_ranges.size(), 0);
}

void ShardNode::setBackup(const QString& deviceId) {
    m_backup = deviceId;
    if (m_ownerStep)
        m_ownerStep->setKeepSums(!deviceId.isEmpty());
}

std::optional<size_t> ShardNode::rangeOf(const QString& deviceId) const {
    for (size_t r = 0; r < m_ranges.size(); ++r)
        if (m_ranges[r].owner == deviceId)
            return r;
    return std::nullopt;
}

Status ShardNode::addLink(Connection* link, const QString& deviceId) {
    const auto range = rangeOf(deviceId);
    QString why;
    if (m_links.contains(deviceId) && m_links.value(deviceId))
        why = QStringLiteral("a second link from device %1").arg(deviceId);
    else if (!range && !m_owner)
        why = QStringLiteral("device %1 owns no range, and this machine owns none").arg(deviceId);
    if (!why.isEmpty()) {
        link->close(why);
        link->deleteWhenFlushed();
        return makeError(ErrorCode::InvalidArgument, why);
    }
    link->setParent(this);
    // What may arrive: gradients for this machine's range, the other's weights for its own.
    qint64 cap = m_owner ? m_owner->bundleBytes(m_wire).second : 0;
    if (range) // the whole range, whatever window a step exchanges
        cap = std::max<qint64>(cap,
                               (m_ranges[*range].end - m_ranges[*range].begin) * dtypeSize(m_wire));
    if (range && m_backup == m_deviceId) // its sums, fp32
        cap = std::max(cap, (m_ranges[*range].end - m_ranges[*range].begin) * qint64(4));
    link->setBlobCap(wire::BlobKind::Tensors, cap);
    m_links.insert(deviceId, link);
    connect(link, &Connection::received, this,
            [this, deviceId](const wire::Message& m) { onMessage(deviceId, m); });
    // From the event loop, never from inside a send on one of the links.
    connect(
        link, &Connection::blobSent, this,
        [this] {
            if (!m_queued.empty())
                sendHeld();
        },
        Qt::QueuedConnection);
    connect(link, &Connection::closed, this, [this, deviceId](const QString& reason) {
        if (QPointer<Connection> c = m_links.take(deviceId)) {
            c->disconnect(this);
            c->deleteWhenFlushed();
        }
        // What it still had to carry of this owner's no longer holds the rest back.
        QMetaObject::invokeMethod(
            this, [this] { sendHeld(); }, Qt::QueuedConnection);
        Q_EMIT linkLost(deviceId, reason);
    });
    return success();
}

void ShardNode::drop(const QString& peer, const QString& why) {
    QPointer<Connection> c = m_links.take(peer);
    if (!c)
        return;
    c->disconnect(this);
    c->close(why, wire::Reject{wire::RejectCode::Protocol, why});
    c->deleteWhenFlushed();
    // What the link still had to carry no longer holds the rest back; not from here, which may be
    // inside sendHeld().
    QMetaObject::invokeMethod(
        this, [this] { sendHeld(); }, Qt::QueuedConnection);
    Q_EMIT linkLost(peer, why);
}

void ShardNode::closeLinks(const QString& why) {
    const auto links = std::exchange(m_links, {});
    for (const QPointer<Connection>& c : links)
        if (c) {
            c->disconnect(this);
            c->setParent(nullptr);
            c->close(why);
            c->deleteWhenFlushed();
        }
}

void ShardNode::setWindows(std::vector<ShardWindow> windows) {
    m_windows = std::move(windows);
}

ShardWindow ShardNode::windowOf(int64_t step) const {
    if (m_windows.empty() || step < 0)
        return {};
    return m_windows[size_t(step % int64_t(m_windows.size()))];
}

std::optional<ShardNode::Landed> ShardNode::takeLanded(int k) {
    const auto it = m_landed.find(k);
    if (it == m_landed.end())
        return std::nullopt;
    Landed out = std::move(it->second);
    m_landed.erase(it);
    return out;
}

void ShardNode::beginLanding(int64_t step) {
    const ShardWindow w = windowOf(step);
    m_landing.assign(m_layout.shapes.size(), at::Tensor());
    for (size_t i = 0; i < m_layout.shapes.size(); ++i)
        if (m_layout.offsets[i] >= w.begin && m_layout.offsets[i] + m_layout.valuesOf(i) <= w.end)
            m_landing[i] = at::empty(m_layout.shapes[i], at::kFloat);
}

void ShardNode::open(int64_t step) {
    if (step == m_step)
        return; // opened already, and what arrived for it is kept
    m_step = step;
    const ShardWindow window = windowOf(step);
    m_route.setWindow(window);
    m_kept.clear();
    m_keptBytes.assign(m_ranges.size(), 0);
    m_bundle = QByteArray();
    m_replicaStep.open(step, window);
    if (m_ownerStep)
        m_ownerStep->open(step, window);
    if (!m_windows.empty() && m_replica)
        beginLanding(step);
    // A round's bundle that came before its step opened here goes now; not from here, which
    // may be inside sendHeld().
    m_pending.erase(m_pending.begin(), m_pending.lower_bound(step)); // of steps over here
    if (m_pending.count(step))
        QMetaObject::invokeMethod(
            this,
            [this, step] {
                const auto it = m_pending.find(step);
                if (it == m_pending.end() || m_step != step)
                    return;
                const Pending p = std::move(it->second);
                m_pending.erase(it);
                gradientsReady(step, p.bundle, p.ready);
            },
            Qt::QueuedConnection);
}

qint64 ShardNode::gradientsReady(int64_t step, const QByteArray& bundle, qint64 ready) {
    if (step > m_step && !m_windows.empty()) {
        // A worker's round is at most two ahead of its node: what is further is for no step.
        if (step <= m_step + 2)
            m_pending[step] = {bundle, ready};
        return 0;
    }
    if (step != m_step)
        return 0;
    m_bundle = bundle;
    qint64 sent = 0;
    for (const ShardRoute::Part& part : m_route.partsUpTo(ready, m_partBytes)) {
        const qint64 at = m_route.bytesOf(part.range).first + part.offset, size = part.size;
        const QString& owner = m_ranges[part.range].owner;
        if (owner == m_deviceId) {
            // The owner copies the part as it takes it: no copy of the bundle before that.
            takeGradients(m_deviceId, m_step,
                          QByteArray::fromRawData(bundle.constData() + at, size));
            continue;
        }
        Connection* link = m_links.value(owner);
        if (!link)
            continue; // lost: linkLost() said so, and the coordinator leaves this worker out
        // Straight from the bundle, which stays whole until the part has gone: a copy of the
        // other ranges would be most of a model more on this machine each step.
        const uint64_t blob = link->sendBlobSlice(wire::BlobKind::Tensors, bundle, at, size);
        link->send(wire::ShardGrads{m_step, blob});
        sent += size;
    }
    return sent;
}

void ShardNode::takeGradients(const QString& worker, int64_t step, const QByteArray& bytes) {
    if (!m_ownerStep)
        return drop(worker, QStringLiteral("gradients for a range this machine does not own"));
    // Streaming: a worker whose replica holds a step's weights sends the next round's delta,
    // while this machine may still wait for another owner's weights of that step; its own are
    // out, so the next step opens here for the delta.
    if (!m_windows.empty() && m_ownerStep->closed() && step == m_ownerStep->step() + 1)
        m_ownerStep->open(step, windowOf(step));
    // Each link carries a worker's parts in order: the next starts where those held end.
    const auto whole = m_ownerStep->receive(step, worker, m_ownerStep->received(worker), bytes);
    if (!whole)
        return Q_EMIT refused(step, worker, whole.error().message);
    if (*whole)
        Q_EMIT held(step, worker);
    sendHeld(); // the part may complete a segment
}

void ShardNode::setReplicaBusy(bool busy) {
    m_replicaBusy = busy;
    if (busy)
        return;
    std::vector<Kept> kept;
    kept.swap(m_kept);
    m_keptBytes.assign(m_ranges.size(), 0);
    const QByteArray bundle = m_bundle; // the last weights may end the step, and release it
    for (const Kept& k : kept)
        takeWeights(k.range, k.step,
                    k.bytes.isNull() ? QByteArray::fromRawData(bundle.constData() + k.at, k.size)
                                     : k.bytes);
}

void ShardNode::keep(size_t range, int64_t step, const QByteArray& bytes) {
    // A range's weights for a segment come once its owner has summed every counted worker's
    // gradients for it, so this worker's bytes of the segment have left: their place in the
    // bundle holds the weights until the replica takes them, and a model's worth of weights that
    // come back while the backward pass still runs takes no memory of its own.
    if (range >= m_keptBytes.size())
        return m_kept.push_back({range, step, 0, 0, bytes});
    const qint64 element = dtypeSize(m_wire);
    const qint64 at = m_route.bytesOf(range).first + m_replicaStep.have(range) * element +
                      m_keptBytes[range],
                 end = m_route.bytesOf(range).first + m_route.bytesOf(range).second;
    const qint64 size = bytes.size();
    if (step == m_step && !m_bundle.isNull() && at + size <= std::min(end, m_route.handedOut()) &&
        at + size <= m_bundle.size()) {
        std::memcpy(const_cast<char*>(m_bundle.constData()) + at, bytes.constData(), size_t(size));
        m_kept.push_back({range, step, at, size, QByteArray()});
    } else {
        m_kept.push_back({range, step, 0, 0, bytes}); // ReplicaStep says what is wrong with it
    }
    m_keptBytes[range] += size;
}

void ShardNode::takeWeights(size_t range, int64_t step, const QByteArray& bytes) {
    if (!m_replica)
        return;
    if (!m_windows.empty()) { // streaming: they land beside the replica, which trains on
        if (auto st = m_replicaStep.receive(step, range, bytes, m_landing); !st)
            return drop(m_ranges[range].owner, st.error().message);
        if (!m_replicaStep.complete())
            return;
        m_landed[int(step % int64_t(m_windows.size()))] = Landed{step, std::move(m_landing)};
        m_landing.clear();
        // A worker merges a step's values with the round after next at the latest, which it
        // begins before the step after next can land: what is older is for no round (its
        // worker was left out, and takes the weights whole when it is in again).
        for (auto it = m_landed.begin(); it != m_landed.end();)
            it = it->second.step <= step - 2 ? m_landed.erase(it) : std::next(it);
        open(step + 1);
        Q_EMIT updated(step);
        return;
    }
    if (m_replicaBusy)
        return keep(range, step, bytes);
    if (auto st = m_replicaStep.receive(step, range, bytes, *m_replica); !st)
        return drop(m_ranges[range].owner, st.error().message);
    if (!m_replicaStep.complete())
        return;
    // The step is over here: what comes next is the next step's, which a fast worker may send
    // before this machine hears of it.
    open(step + 1);
    Q_EMIT updated(step);
}

Status ShardNode::close(int64_t step, const std::vector<std::pair<QString, double>>& counted,
                        double lr) {
    if (!m_ownerStep)
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("step %1 closed on a machine that owns no range").arg(step + 1));
    if (auto st = m_ownerStep->closeWhenHeld(step, counted, lr); !st)
        return st;
    sendHeld();
    return success();
}

void ShardNode::sendHeld() {
    // A send inside the loop below can end in a call back here (a link lost): the loop goes on.
    if (m_sendingHeld || !m_ownerStep || !m_ownerStep->closing())
        return;
    m_sendingHeld = true;
    const auto done = qScopeGuard([this] { m_sendingHeld = false; });
    const int64_t step = m_ownerStep->step();
    const auto mine = rangeOf(m_deviceId);
    // Each segment's weights as soon as it is stepped, while the links carry what went before;
    // every link carries them in order.
    while (queuedBytes() < m_maxQueued) {
        const std::vector<OwnerStep::Weights> next = m_ownerStep->advance(1);
        if (next.empty())
            break;
        const OwnerStep::Weights& w = next.front();
        // The sums go first: the logging machine holds them before its replica holds the
        // weights, so a step its replica finished is one its log holds.
        if (w.sum && mine && m_backup == m_deviceId) {
            Q_EMIT summed(*mine, *w.sum);
        } else if (Connection* link = w.sum ? m_links.value(m_backup) : nullptr) {
            const uint64_t blob = link->sendBlob(wire::BlobKind::Tensors, w.sum->values);
            link->send(
                wire::ShardSum{step, blob, w.sum->from, w.sum->to, w.sum->lr, w.sum->present});
            m_queued.push_back({link, blob, w.sum->values.size()});
        }
        for (auto it = m_links.cbegin(); it != m_links.cend(); ++it)
            if (Connection* link = it.value(); link && !m_weightless.contains(it.key())) {
                const uint64_t blob = link->sendBlob(wire::BlobKind::Tensors, w.bytes);
                link->send(wire::ShardWeights{step, blob});
                m_queued.push_back({link, blob, w.bytes.size()});
            }
        m_queuedPeak = std::max(m_queuedPeak, queuedBytes());
        if (mine)
            takeWeights(*mine, step, w.bytes); // the last segment opens the next step here
    }
    if (m_ownerStep->closed() && !m_replica) {
        open(step + 1); // a machine that only owns is done with the step once it has sent
        Q_EMIT updated(step);
    }
}

qint64 ShardNode::queuedBytes() {
    qint64 n = 0;
    m_queued.erase(std::remove_if(m_queued.begin(), m_queued.end(),
                                  [&](const Queued& q) {
                                      if (!q.link || !q.link->sending(q.blob))
                                          return true;
                                      n += q.bytes;
                                      return false;
                                  }),
                   m_queued.end());
    return n;
}

void ShardNode::onMessage(const QString& peer, const wire::Message& m) {
    Connection* link = m_links.value(peer);
    if (!link)
        return;
    if (const auto* g = std::get_if<wire::ShardGrads>(&m)) {
        std::optional<QByteArray> bytes = link->takeBlob(g->blob);
        if (!bytes)
            return drop(peer, QStringLiteral("gradients without their bytes"));
        takeGradients(peer, g->step, *bytes);
    } else if (const auto* w = std::get_if<wire::ShardWeights>(&m)) {
        std::optional<QByteArray> bytes = link->takeBlob(w->blob);
        const auto range = rangeOf(peer);
        if (!bytes || !range)
            return drop(peer, bytes ? QStringLiteral("weights from a machine that owns no range")
                                    : QStringLiteral("weights without their bytes"));
        takeWeights(*range, w->step, *bytes);
    } else if (const auto* sum = std::get_if<wire::ShardSum>(&m)) {
        std::optional<QByteArray> bytes = link->takeBlob(sum->blob);
        const auto range = rangeOf(peer);
        if (!bytes || !range || m_backup != m_deviceId)
            return drop(peer, QStringLiteral("sums this machine does not log"));
        Q_EMIT summed(*range,
                      ShardLog::Span{sum->step, sum->from, sum->to, sum->lr, sum->present, *bytes});
    } else if (!std::holds_alternative<wire::Ping>(m) && !std::holds_alternative<wire::Pong>(m)) {
        drop(peer, QStringLiteral("%1 over a shard link").arg(wire::messageName(m)));
    }
}

std::pair<qint64, qint64> ShardNode::linkBytes() const {
    qint64 sent = 0, received = 0;
    for (const QPointer<Connection>& link : m_links)
        if (link) {
            sent += link->bytesHandedOver();
            received += link->bytesReceived();
        }
    return {sent, received};
}

} // namespace tandem
