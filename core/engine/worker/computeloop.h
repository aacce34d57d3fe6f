#pragma once

// A worker's compute loop: the thread its steps run on, the rounds queued behind the one
// computing, and the result bundle streamed to the coordinator while the backward pass fills
// it. The session (worker/session.h) feeds it assignments and ends it; the loop reports a
// failure back through its hooks and otherwise talks only to the connection it is given.

#include "engine/internal.h"

#include "engine/wire/workwire.h"
#include "engine/worker/admission.h"
#include "net/connection.h"

#include <QObject>
#include <QPointer>

#include <deque>
#include <functional>
#include <memory>
#include <thread>

namespace tandem {

class ComputeLoop : public QObject {
public:
    struct Hooks {
        std::function<void(const QString&)> log;
        // A step failed, or a failpoint fired: the session ends with this exit code and reason.
        std::function<void(int code, const QString& why)> fail;
        // A step's result went to the coordinator; `share` is the part of the step's samples
        // the coordinator gave this worker (0: not given).
        std::function<void(const wire::Result& result, double share)> stepSent;
    };

    explicit ComputeLoop(Hooks hooks, QObject* parent = nullptr);
    ~ComputeLoop() override;

    // Waits for the step in flight, drops queued rounds and stops sending: the session is
    // starting again or ending.
    void reset();
    // Computes `run` on `replica`, sending results on `connection`.
    void start(AdmittedRun run, std::unique_ptr<ModelReplica> replica, Connection* connection);
    // A sharded run: each step's gradient bundle goes to `sink` (on this object's thread) as the
    // backward pass fills it, its first `ready` bytes final (ShardNode::gradientsReady), and the
    // result the coordinator receives carries the buffers only. `sink` returns the bytes it sent on
    // to other machines. `busy` hears when a step starts computing on the replica (true) and when
    // it has ended (false), on this object's thread. A streaming round sends its fragment's run of
    // the bundle once it ends, and merges the values `landed` gives for the fragment it names
    // (ShardPart::takeLanded).
    using Landed = std::function<std::optional<std::vector<at::Tensor>>(int fragment)>;
    void
    setShardSink(std::function<qint64(int64_t step, const QByteArray& bundle, qint64 ready)> sink,
                 std::function<void(bool computing)> busy, Landed landed) {
        m_shardSink = std::move(sink);
        m_shardBusy = std::move(busy);
        m_shardLanded = std::move(landed);
    }
    // The replica's trainable tensors (null before start()).
    std::vector<at::Tensor>* replicaParams() { return m_replica ? &m_replica->params() : nullptr; }
    // The connection was lost: results computed meanwhile are dropped.
    void lostConnection() { m_conn = nullptr; }
    // Queues an assignment (with its weights blob, when it carried one) and starts it when no
    // step is computing.
    void enqueue(const wire::Assign& a, std::optional<QByteArray> weights);
    // Runs `job` on the compute thread's place while no step needs it (the dataset's check,
    // which reads gigabytes); `job` reports back with a queued call of its own.
    void runIdle(std::function<void()> job);

    // Pipelined rounds (streaming local-SGD): how many began with the next already in hand, and how
    // many waited for it.
    int64_t roundsQueued() const { return m_roundsQueued; }
    int64_t roundsWaited() const { return m_roundsWaited; }

private:
    void startNext();
    // `weights` (the assignment's bundle, when it brings one) is let go once applied: a whole
    // model's bundle would otherwise stay beside the replica for the whole step.
    void compute(const wire::Assign& a, std::optional<QByteArray> weights,
                 std::optional<std::vector<at::Tensor>> landed);
    // A gradient step: the bundle opens before the step and grows as the backward pass fills it.
    QString computeGradients(WorkRequest req, wire::Result& res, QStringList& notes);
    QString computeShardGradients(WorkRequest req, wire::Result& res, QStringList& notes);
    // A sharded streaming round (computeshard.cpp): merges the fragment that `landed` here,
    // trains, and hands its own fragment's delta to the owners.
    QString computeShardRound(WorkRequest req, std::optional<std::vector<at::Tensor>> landed,
                              wire::Result& res, QStringList& notes);
    void finishStep(wire::Result res, const QString& error, const QStringList& notes,
                    bool pipelined);
    // The assignment's weights into the replica: whole, or an update that `round`'s mode
    // applies. Returns what went wrong, or nothing.
    QString takeWeights(const QByteArray& weights, bool delta, LocalRound* round);
    void openResult(const QByteArray& bundle);
    void growResult(qint64 ready, int64_t step);
    // Calls `f` on this object's (the event loop's) thread.
    template <typename F> void post(F&& f) {
        QMetaObject::invokeMethod(this, std::forward<F>(f), Qt::QueuedConnection);
    }

    Hooks m_hooks;
    QPointer<Connection> m_conn; // null while there is nowhere to send results
    AdmittedRun m_run;
    std::unique_ptr<ModelReplica> m_replica;
    std::optional<OuterWorkerSide> m_outer;   // local-SGD only
    std::unique_ptr<RoundState> m_roundState; // compute thread: the local mode's own
    std::unique_ptr<GradientBundle> m_grads;  // compute thread: the result being filled
    QPointer<Connection> m_resultConn;        // where the result's blob was opened
    uint64_t m_resultBlob = 0;
    std::thread m_thread;
    bool m_computing = false;
    // Streaming local-SGD's next round, given before the current one ends, waits here.
    std::deque<std::pair<wire::Assign, std::optional<QByteArray>>> m_queue;
    int64_t m_roundsQueued = 0, m_roundsWaited = 0;
    double m_share = 0; // the computing assignment's
    std::function<qint64(int64_t, const QByteArray&, qint64)> m_shardSink;
    std::function<void(bool)> m_shardBusy;
    Landed m_shardLanded;
    qint64 m_shardEarly = 0; // gradient bytes of the step in flight sent before it was computed
};

} // namespace tandem
