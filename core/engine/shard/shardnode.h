#pragma once

#include "engine/internal.h"

// Engine-internal: one machine's part of a sharded run's sync step, over its links to the other
// machines (shardlink.h). As a worker it sends each range of its gradient bundle to the range's
// owner as soon as the bundle's front holds it whole, and writes every owner's weights into its
// replica; as an owner it takes each worker's range (shardstep.h's OwnerStep) and, when the
// coordinator closes the step, sends its weights to every machine. Its own range never leaves the
// process. A link's range is the one its other end owns: a message never names one, so a machine
// can neither send for a range it does not hold nor pose as another worker.

#include "common/expected.h"
#include "engine/shard/shardstep.h"
#include "net/connection.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>

#include <optional>
#include <vector>

namespace tandem {

// A range of a sharded run's values, and the device that owns it.
struct ShardRange {
    int64_t begin = 0;
    int64_t end = 0;
    QString owner; // device ID
};

class ShardNode : public QObject {
    Q_OBJECT

public:
    // This machine (`deviceId`) in a run whose values `layout` lays out and whose `ranges` cover
    // them in order. `owner` is this machine's range's owner (null where it owns none), `replica`
    // its worker's trainable tensors (null where it computes nothing); both outlive this.
    ShardNode(QString deviceId, ShardLayout layout, std::vector<ShardRange> ranges, DType wire,
              ShardOwner* owner, std::vector<at::Tensor>* replica, QObject* parent = nullptr);

    // A link to the machine `deviceId`, admitted by shardlink.h; this node takes it. A link from a
    // device that owns no range and a second link from one device are refused.
    Status addLink(Connection* link, const QString& deviceId);

    // Opens step `step`: what the previous one left is dropped (nothing, when it is open). A
    // machine whose replica holds every owner's weights for a step opens the next by itself.
    void open(int64_t step);
    // The worker's gradient bundle for the open step, of which the first `ready` bytes are final
    // (GradientBundle::ready()). Call again as it grows; each range goes out once, whole.
    void gradientsReady(const QByteArray& bundle, qint64 ready);
    // The coordinator closes the step on this machine's range: OwnerStep::close, then the weights
    // go to every machine (this one's replica too).
    Status close(int64_t step, const std::vector<std::pair<QString, double>>& counted, double lr);
    // Every byte sent (queued ones too: Connection::bytesHandedOver()) and received on this
    // machine's links to the other members, so far.
    std::pair<qint64, qint64> linkBytes() const;

Q_SIGNALS:
    // As an owner: `worker`'s range for `step` is here, whole; or it was refused (the coordinator
    // leaves that worker out of the step).
    void held(qint64 step, const QString& worker);
    void refused(qint64 step, const QString& worker, const QString& why);
    // As a worker: every owner's weights for `step` are in the replica; step + 1 is open.
    void updated(qint64 step);
    // A link closed, or sent what cannot be taken (it is closed then).
    void linkLost(const QString& deviceId, const QString& why);

private:
    void onMessage(const QString& peer, const wire::Message& m);
    void takeGradients(const QString& worker, int64_t step, const QByteArray& bytes);
    void takeWeights(size_t range, int64_t step, const QByteArray& bytes);
    void drop(const QString& peer, const QString& why);
    std::optional<size_t> rangeOf(const QString& deviceId) const;

    QString m_deviceId;
    std::vector<ShardRange> m_ranges;
    DType m_wire;
    ShardOwner* m_owner;
    std::vector<at::Tensor>* m_replica;
    std::optional<OwnerStep> m_ownerStep;
    ReplicaStep m_replicaStep;
    ShardRoute m_route;
    int64_t m_step = -1;
    QHash<QString, QPointer<Connection>> m_links;
};

} // namespace tandem
