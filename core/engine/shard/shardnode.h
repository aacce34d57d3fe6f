#pragma once

#include "engine/internal.h"

// Engine-internal: one machine's part of a sharded run's sync step, over its links to the other
// machines (shardlink.h). As a worker it sends each range of its gradient bundle to the range's
// owner in parts, in order, as the bundle's front makes them final, and writes every owner's
// weights into its replica; as an owner it takes each worker's range (shardstep.h's OwnerStep,
// the parts of one link in the order they came) and, as it holds each segment of its range from
// every worker the coordinator's close counts, steps it and sends its weights to every machine,
// whose replicas take them in parts, in order. Its own
// range never leaves the process. A link's range is the one its other end owns: a message never
// names one, so a machine can neither send for a range it does not hold nor pose as another worker.

#include "common/expected.h"
#include "engine/shard/shardstep.h"
#include "net/connection.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>

#include <algorithm>
#include <map>
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

    // The machines that keep no replica (they only hold a range): an owner sends them no weights.
    void setWeightless(QSet<QString> deviceIds) { m_weightless = std::move(deviceIds); }
    // The machine that logs what each step adds to every range (the coordinator; this machine
    // itself, or none): as an owner, this machine sends it each segment's sums before the
    // segment's weights; as that machine, it takes them from the owners (summed()).
    void setBackup(const QString& deviceId);

    // A link to the machine `deviceId`, admitted by shardlink.h; this node takes it. A link from a
    // device that owns no range and a second link from one device are refused.
    Status addLink(Connection* link, const QString& deviceId);

    // Closes every link, saying `why`: the setup is over.
    void closeLinks(const QString& why);

    // Streaming local-SGD: step s exchanges the values of `windows[s % windows.size()]` only
    // (fragmentWindows()), and a machine with a replica lands each step's new values in tensors
    // of its own rather than in the replica, which trains on meanwhile: its worker merges them
    // into the round after next (takeLanded()). Before the first open(); none: every step
    // exchanges every value, written into the replica.
    void setWindows(std::vector<ShardWindow> windows);
    // The window step `step` exchanges.
    ShardWindow windowOf(int64_t step) const;
    // Streaming: the last landed values of window `k`, each trainable tensor of the window in
    // fp32 on the CPU (undefined outside it), and the step they came with; nothing when none
    // landed since the last take, or when two later steps have landed since (no round merges
    // them then).
    struct Landed {
        int64_t step = -1;
        std::vector<at::Tensor> values;
    };
    std::optional<Landed> takeLanded(int k);

    // Opens step `step`: what the previous one left is dropped (nothing, when it is open). A
    // machine whose replica holds every owner's weights for a step opens the next by itself.
    void open(int64_t step);
    // The worker's gradient bundle for step `step`, of which the first `ready` bytes are final
    // (GradientBundle::ready()). Call again as it grows; each byte goes out once, in parts of
    // partBytes() or more (a range's last part may be less) as they become final. A
    // bundle of a step that is over here is ignored: the replica may hold its weights (and the
    // next step be open) before the last call for it. A streaming round's bundle holds its
    // window's values alone, and one for a later step than the open one waits until that step
    // opens here (its worker trains a round ahead of the exchange). Returns the bytes sent to
    // other machines.
    qint64 gradientsReady(int64_t step, const QByteArray& bundle, qint64 ready);
    // The coordinator says how the step closes on this machine's range, as the step starts or
    // later: each segment of the range that every counted worker has sent is stepped, and its
    // weights go to every machine (this one's replica too), while the rest still arrives
    // (OwnerStep::advance). Refuses what OwnerStep::check refuses, and a second close of the step.
    Status close(int64_t step, const std::vector<std::pair<QString, double>>& counted, double lr);
    // The least a part of a range is sent as, but the range's last: large enough that a part's
    // message costs nothing beside it, small enough that most of a range leaves while the
    // backward pass still computes the rest.
    qint64 partBytes() const { return m_partBytes; }
    void setPartBytes(qint64 bytes) { m_partBytes = std::max<qint64>(1, bytes); }
    // Whether this machine's worker is computing on its replica. Weights that arrive meanwhile
    // wait, and go in once it is not: the backward pass still reads the replica, and a step
    // computed again after running out of memory must start from the weights it started from.
    void setReplicaBusy(bool busy);
    // The most bytes of weights and sums this owner keeps queued on its links before it steps
    // more of its range (64 MB); and the most it has had queued since it was made.
    void setMaxQueuedBytes(qint64 bytes) { m_maxQueued = std::max<qint64>(1, bytes); }
    qint64 queuedPeak() const { return m_queuedPeak; }
    // Every byte sent (queued ones too: Connection::bytesHandedOver()) and received on this
    // machine's links to the other members, so far.
    std::pair<qint64, qint64> linkBytes() const;

Q_SIGNALS:
    // As an owner: `worker`'s range for `step` is here, whole; or it was refused (the coordinator
    // leaves that worker out of the step).
    void held(qint64 step, const QString& worker);
    void refused(qint64 step, const QString& worker, const QString& why);
    // As a worker: every owner's weights for `step` are in the replica; step + 1 is open. A
    // machine without a replica: it has sent its range's weights for `step`.
    void updated(qint64 step);
    // A link closed, or sent what cannot be taken (it is closed then).
    void linkLost(const QString& deviceId, const QString& why);
    // As the machine that logs (setBackup()): what a step added to a segment of range `range`.
    void summed(size_t range, const tandem::ShardLog::Span& span);

private:
    void onMessage(const QString& peer, const wire::Message& m);
    void takeGradients(const QString& worker, int64_t step, const QByteArray& bytes);
    void takeWeights(size_t range, int64_t step, const QByteArray& bytes);
    void drop(const QString& peer, const QString& why);
    // Steps what the coordinator's close counts and is here, a segment at a time, and sends each
    // segment's weights to every machine, while what it queued on its links is under
    // setMaxQueuedBytes(); a link that sends a blob calls it again.
    void sendHeld();
    // The bytes of the weights and sums this machine queued on its links that have not left.
    qint64 queuedBytes();
    std::optional<size_t> rangeOf(const QString& deviceId) const;

    // Allocates the tensors step `step`'s window lands in.
    void beginLanding(int64_t step);

    QString m_deviceId;
    ShardLayout m_layout;
    std::vector<ShardRange> m_ranges;
    std::vector<ShardWindow> m_windows; // streaming's; empty: every value, every step
    std::vector<at::Tensor> m_landing;  // the open step's, as its weights come
    std::map<int, Landed> m_landed;     // by window, until taken
    // Bundles for steps not open here yet, by step: a worker's round may end before the step
    // before it has landed here, and the next one's before the first has left.
    struct Pending {
        QByteArray bundle;
        qint64 ready = 0;
    };
    std::map<int64_t, Pending> m_pending;
    DType m_wire;
    ShardOwner* m_owner;
    std::vector<at::Tensor>* m_replica;
    std::optional<OwnerStep> m_ownerStep;
    ReplicaStep m_replicaStep;
    ShardRoute m_route;
    bool m_replicaBusy = false;
    qint64 m_partBytes = qint64(4) << 20;
    // Weights that arrived while the replica was busy: in the part of this step's gradient bundle
    // their owner has summed already (at, size), or, where that cannot be, as they came (bytes).
    struct Kept {
        size_t range = 0;
        int64_t step = 0;
        qint64 at = 0;
        qint64 size = 0;
        QByteArray bytes;
    };
    void keep(size_t range, int64_t step, const QByteArray& bytes);
    std::vector<Kept> m_kept;
    std::vector<qint64> m_keptBytes; // of each range, this step
    QByteArray m_bundle;             // this step's gradient bundle, once it began to leave
    int64_t m_step = -1;
    QHash<QString, QPointer<Connection>> m_links;
    // The weights and sums queued on the links: copies of the range's segments. A range of
    // gigabytes steps faster than its links carry it, and queued whole it would be a second
    // copy of the range on this machine for as long as they take.
    struct Queued {
        QPointer<Connection> link;
        uint64_t blob = 0;
        qint64 bytes = 0;
    };
    std::vector<Queued> m_queued;
    qint64 m_maxQueued = kShardSendQueueBytes;
    qint64 m_queuedPeak = 0;
    bool m_sendingHeld = false;
    QSet<QString> m_weightless;
    QString m_backup;
};

} // namespace tandem
