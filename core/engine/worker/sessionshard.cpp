#include "engine/worker/session.h"

// The worker's side of a sharded run (engine/shard/shardpart.h): it listens for the other
// members' links, takes its range with the coordinator's setup, sends each range of its
// gradients to its owner and keeps its replica up to date from theirs, and answers the
// coordinator's closes and requests for its range's state.

#include "common/failpoint.h"
#include "common/threadname.h"
#include "net/blobpipe.h"
#include "net/connection.h"

#include <limits>

namespace tandem {

struct WorkerSession::RangeSave {
    int64_t steps = 0;
    QPointer<Connection> conn; // the blob's
    uint64_t blob = 0;
    // The container on its way, written by the save's thread and read as the socket takes it:
    // a few megabytes of it at a time, not a second copy of the range's state.
    std::shared_ptr<BlobPipe> pipe;
};

namespace {
// The coordinator's shard messages held while a range is written: more than a run sends
// between its steps.
constexpr size_t kMaxHeldShardMessages = 64;
} // namespace

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
    auto port = m_shard->listen(QHostAddress::Any, m_opt.shardPort);
    if (!port)
        return makeError(port.error().code,
                         m_opt.shardPort != 0
                             ? QStringLiteral("cannot listen for the sharded run's links on port "
                                              "%1 (--shard-port): %2; choose a free port")
                                   .arg(m_opt.shardPort)
                                   .arg(port.error().message)
                             : QStringLiteral("cannot listen for the sharded run's links: %1")
                                   .arg(port.error().message));
    if (m_opt.shardAdvertisedPort != 0) {
        m_log(QStringLiteral("the sharded run's links come to port %1 through port %2 "
                             "(--shard-advertise)")
                  .arg(*port)
                  .arg(m_opt.shardAdvertisedPort));
        port = m_opt.shardAdvertisedPort;
    }
    connect(m_shard.get(), &ShardPart::report, this, [this](wire::ShardReport r) {
        if (!m_conn)
            return;
        if (r.kind == wire::ShardReport::Kind::Updated) {
            r.sent += quint64(m_conn->bytesHandedOver());
            r.received += quint64(m_conn->bytesReceived());
        }
        if (r.kind == wire::ShardReport::Kind::Probed && !r.worker.isEmpty())
            m_log(QStringLiteral("cannot link to device %1 of the sharded run: %2; the "
                                 "coordinator takes this machine in once it can")
                      .arg(r.worker, r.why));
        m_conn->send(r);
    });
    connect(m_shard.get(), &ShardPart::failed, this,
            [this](const QString& why) { finish(1, why); });
    // A link the run needs cannot be made (another machine behind a link that is cut): this
    // machine leaves the run and connects again. The coordinator goes on without it, and takes
    // it in again after a while.
    connect(m_shard.get(), &ShardPart::unreachable, this, [this](const QString& why) {
        if (m_conn)
            m_conn->close(QStringLiteral("left the sharded run: %1").arg(why));
    });
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
        },
        [this](int fragment) -> std::optional<std::vector<at::Tensor>> {
            if (!m_shard)
                return std::nullopt;
            auto landed = m_shard->takeLanded(fragment);
            if (!landed)
                return std::nullopt;
            return std::move(landed->values);
        });
    return port;
}

void WorkerSession::onShardMessage(const wire::Message& m) {
    if (m_rangeSave) {
        if (m_heldShard.size() >= kMaxHeldShardMessages)
            return refuse(wire::RejectCode::Protocol,
                          QStringLiteral("the coordinator sent %1 messages about the sharded run "
                                         "while it was sent this machine's range")
                              .arg(m_heldShard.size()));
        m_heldShard.push_back(m);
        return;
    }
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
    // The coordinator's own links listen where this machine reaches it.
    wire::ShardSetup here = setup;
    for (wire::ShardSetup::Peer& p : here.members)
        if (p.host.isEmpty())
            p.host = m_opt.host;
    // Only whether this machine reaches every member, before the run is set up for it.
    if (setup.probe)
        return m_shard->probe(here);
    // A holder keeps no weights to write the owners' into.
    for (const wire::ShardSetup::Peer& p : setup.members)
        if (m_opt.holdsOnly && p.deviceId == m_identity.deviceId() && !p.holdsOnly)
            return refuse(wire::RejectCode::Protocol,
                          QStringLiteral("the coordinator set this machine up to take the run's "
                                         "weights; it only holds a range (--hold-only)"));
    if (setup.mastersBlob != 0 && !range)
        return finish(1, QStringLiteral("the weights of this machine's range did not arrive "
                                        "whole"));
    if (auto st = m_shard->setup(here, range.value_or(QByteArray())); !st)
        return refuse(wire::RejectCode::Protocol, st.error().message);
    if (!m_opt.holdsOnly)
        m_shard->roundReplica();
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
    (void)TANDEM_FAILPOINT("shard.close"); // crash@N: a machine lost at its Nth step
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
    TensorFile state = owner->rangeState(); // the range's tensors, read as they are written
    auto size = checkpointSize(state);
    if (!size)
        return finish(
            1, QStringLiteral("cannot send this machine's range: %1").arg(size.error().message));
    auto save = std::make_shared<RangeSave>();
    save->steps = owner->stepCount();
    save->conn = m_conn;
    save->pipe = std::make_shared<BlobPipe>();
    save->blob = m_conn->openBlobFrom(wire::BlobKind::RangeState, *size,
                                      BlobPipe::readerOf(save->pipe, *size));
    m_rangeSave = save;
    m_saveThread.join(); // the last save's, which has posted its end
    m_saveThread.pipe = save->pipe;
    m_saveThread.thread = std::thread([this, save, state = std::move(state), size = *size] {
        nameThisThread("tandem-save");
        (void)TANDEM_FAILPOINT("shard.save"); // a stall stands in for a range of gigabytes
        qint64 told = 0;
        const auto tell = [&] {
            if (const qint64 ready = save->pipe->ready(); ready > told) {
                told = ready;
                QMetaObject::invokeMethod(
                    this, [this, save, ready] { onRangeWritten(save, ready); },
                    Qt::QueuedConnection);
            }
        };
        const Status st = writeCheckpointThrough(state, size, [&](const char* p, qint64 n) {
            const bool ok = save->pipe->write(p, n);
            tell();
            return ok;
        });
        save->pipe->close();
        tell();
        QMetaObject::invokeMethod(
            this, [this, save, st] { onRangeSaved(save, st); }, Qt::QueuedConnection);
    });
}

void WorkerSession::onRangeWritten(const std::shared_ptr<RangeSave>& save, qint64 written) {
    if (save == m_rangeSave && save->conn && save->conn == m_conn)
        m_conn->growBlob(save->blob, written);
}

void WorkerSession::onRangeSaved(const std::shared_ptr<RangeSave>& save, const Status& status) {
    if (save != m_rangeSave)
        return;
    m_rangeSave.reset();
    // A connection that went took the blob with it and cancelled its pipe: the writing stopped
    // for that, not for a fault of this machine's.
    if (!save->conn || save->conn != m_conn || save->pipe->cancelled()) {
        m_heldShard.clear(); // they came on a connection that is gone
        return;
    }
    if (!status)
        return finish(
            1, QStringLiteral("cannot send this machine's range: %1").arg(status.error().message));
    m_conn->growBlob(save->blob, std::numeric_limits<qint64>::max());
    m_conn->send(wire::ShardState{save->steps, save->blob});
    // What came meanwhile, in order; a second save holds the rest again.
    while (!m_heldShard.empty() && !m_rangeSave && m_state != State::Done) {
        const wire::Message m = std::move(m_heldShard.front());
        m_heldShard.pop_front();
        onShardMessage(m);
    }
}

} // namespace tandem
