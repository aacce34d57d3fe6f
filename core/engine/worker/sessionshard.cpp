#include "engine/worker/session.h"

// The worker's side of a sharded run (engine/shard/shardpart.h): it listens for the other
// members' links, takes its range with the coordinator's setup, sends each range of its
// gradients to its owner and keeps its replica up to date from theirs, and answers the
// coordinator's closes and requests for its range's state.

#include "net/connection.h"

namespace tandem {

Expected<quint16> WorkerSession::startShardPart(const wire::RunSpec& spec, DType wire,
                                                const OptimizerConfig& optimizer,
                                                std::vector<at::Tensor>* params) {
    if (spec.mode != TrainMode::Sync && spec.mode != TrainMode::LocalSgd)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the coordinator asked for a sharded %1 run; only sync "
                                        "and local-SGD runs are sharded")
                             .arg(nameOf(spec.mode)));
    // The links come from the other members, which reach this machine where the coordinator
    // does: every address.
    m_shard = std::make_unique<ShardPart>(m_identity, params, wire, optimizer);
    auto port = m_shard->listen(QHostAddress::Any);
    if (!port)
        return makeError(port.error().code,
                         QStringLiteral("cannot listen for the sharded run's links: %1")
                             .arg(port.error().message));
    connect(m_shard.get(), &ShardPart::report, this, [this](wire::ShardReport r) {
        if (!m_conn)
            return;
        if (r.kind == wire::ShardReport::Kind::Updated) {
            r.sent += quint64(m_conn->bytesHandedOver());
            r.received += quint64(m_conn->bytesReceived());
        }
        m_conn->send(r);
    });
    connect(m_shard.get(), &ShardPart::failed, this,
            [this](const QString& why) { finish(1, why); });
    // A member lost: the coordinator says whether the run goes on without it (it sets the run
    // up again) or ends.
    connect(m_shard.get(), &ShardPart::memberLost, this,
            [this](const QString& id, const QString& why) {
                m_log(QStringLiteral("the link to device %1 of the sharded run was lost: %2")
                          .arg(id, why));
                if (m_conn)
                    m_conn->send(wire::ShardReport{wire::ShardReport::Kind::Lost, 0, id, why});
            });
    m_loop.setShardSink(
        [this](int64_t step, const QByteArray& bundle, qint64 ready) -> qint64 {
            return m_shard ? m_shard->gradientsReady(step, bundle, ready) : 0;
        },
        [this](bool computing) {
            if (m_shard)
                m_shard->setReplicaBusy(computing);
        });
    return port;
}

void WorkerSession::onShardMessage(const wire::Message& m) {
    if (const auto* setup = std::get_if<wire::ShardSetup>(&m))
        onShardSetup(*setup);
    else if (const auto* close = std::get_if<wire::ShardClose>(&m))
        onShardClose(*close);
    else if (std::holds_alternative<wire::ShardSave>(m))
        onShardSave();
}

void WorkerSession::onShardSetup(const wire::ShardSetup& setup) {
    std::optional<QByteArray> range;
    if (setup.mastersBlob != 0)
        range = m_conn->takeBlob(setup.mastersBlob);
    if (!m_shard)
        return refuse(wire::RejectCode::Protocol,
                      QStringLiteral("the coordinator set up a sharded run it did not announce"));
    // A holder keeps no weights to write the owners' into.
    for (const wire::ShardSetup::Peer& p : setup.members)
        if (m_opt.holdsOnly && p.deviceId == m_identity.deviceId() && !p.holdsOnly)
            return refuse(wire::RejectCode::Protocol,
                          QStringLiteral("the coordinator set this machine up to take the run's "
                                         "weights; it only holds a range (--hold-only)"));
    if (setup.mastersBlob != 0 && !range)
        return finish(1, QStringLiteral("the weights of this machine's range did not arrive "
                                        "whole"));
    // The coordinator's own links listen where this machine reaches it.
    wire::ShardSetup here = setup;
    for (wire::ShardSetup::Peer& p : here.members)
        if (p.host.isEmpty())
            p.host = m_opt.host;
    if (auto st = m_shard->setup(here, range.value_or(QByteArray())); !st)
        return refuse(wire::RejectCode::Protocol, st.error().message);
    const ShardOwner* owner = m_shard->owner();
    m_log(owner ? QStringLiteral("holds values %1 to %2 of %3 machines' shards")
                      .arg(owner->begin())
                      .arg(owner->end())
                      .arg(setup.members.size())
                : QStringLiteral("holds no shard of the run"));
}

void WorkerSession::onShardClose(const wire::ShardClose& close) {
    if (!m_shard)
        return refuse(wire::RejectCode::Protocol,
                      QStringLiteral("the coordinator closed a step of a sharded run it did not "
                                     "announce"));
    if (auto st = m_shard->close(close); !st) {
        m_conn->send(wire::WorkError{close.step, st.error().message});
        finish(1, st.error().message);
    }
}

void WorkerSession::onShardSave() {
    const ShardOwner* owner = m_shard ? m_shard->owner() : nullptr;
    if (!owner)
        return refuse(wire::RejectCode::Protocol,
                      QStringLiteral("the coordinator asked for the optimizer state of a range "
                                     "this machine does not own"));
    const QByteArray state = owner->rangeStateBytes();
    m_conn->send(
        wire::ShardState{owner->stepCount(), m_conn->sendBlob(wire::BlobKind::Tensors, state)});
}

} // namespace tandem
