#pragma once

#include "engine/internal.h"

// Engine-internal: the coordinator's side of a sharded sync run (RunConfig::shard). It sets the
// run up across this machine and its workers (each a member with a range, engine/shard/), and
// drives each step's control: the workers' gradients go to the owners over the members' own
// links, each owner reports whose range it holds, the conductor closes the step on every owner
// with the same list of workers and weights, and every member reports when its replica holds
// the step's weights. No gradient or weight of a remote worker passes through here unless this
// machine owns its range.
//
// The training thread calls it; its machine (ShardPart) and the workers' sessions live on
// the hub's network thread, whose reports it hears through onReport() and onLost().

#include "common/expected.h"
#include "engine/coordinator/spilledbytes.h"
#include "engine/shard/gatheredstate.h"
#include "engine/shard/shardlog.h"
#include "engine/shard/shardpart.h"

#include <QHash>
#include <QSet>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace tandem {

class CoordinatorHub;

class ShardConductor {
public:
    ~ShardConductor();

    // Training thread. Sets the run up through `hub` (started) across this machine and the workers
    // `workers` (device IDs): this machine's replica (the run's weights, which it keeps up to date)
    // is `replica`, and `ends[i]` is where the range of member i (this machine, then `workers`)
    // ends: each begins where the one before ends, and the last ends at the last value
    // (planShardedRun). Where the run has taken `steps` optimizer steps (a resumed run, or one set
    // up again), `state` is the whole optimizer state each owner takes its range of; it is read a
    // range at a time. Returns once every member's links are up, or fails saying what did not come
    // within `timeoutMs`.
    Status start(CoordinatorHub* hub, const std::vector<QString>& workers,
                 const std::vector<int64_t>& ends, std::vector<at::Tensor>* replica, DType wire,
                 OptimizerConfig optimizer, int64_t firstStep, int64_t steps,
                 const StateParts& state, int timeoutMs);
    // How many members compute: this machine's own worker unless RunConfig::localWorker is off,
    // and the workers that do not only hold (--hold-only). One that does not compute still owns
    // its range. Before start().
    void setComputing(size_t members) { m_computing = members; }
    // The workers (device IDs) that only hold: they keep no replica up to date, so the owners
    // send them no weights. Before start().
    void setHolders(QSet<QString> workers) { m_holders = std::move(workers); }
    // How the run names each worker (device ID → "NAME (device 1F65 EBAE)"), for what it says
    // of a machine. Before start().
    void setNames(QHash<QString, QString> names) { m_names = std::move(names); }
    // Keeps, in `folder`, a log of what each step adds to every range (shardlog.h): the owners
    // send this machine their sums before their weights. A machine lost then costs no step:
    // rebuild() gives the whole run's state after the last step every machine finished, and the
    // Trainer sets the run up again on the machines left. Empty: no log. Before start().
    void setBackup(const QString& folder) { m_backupDir = folder; }
    // Where each worker's range (its weights and state) waits in a file while the link takes it
    // (spilledbytes.h): the run's folder. Empty: in memory. Before start().
    void setSpillDir(const QString& folder) { m_spillDir = folder; }
    // Where a setup that takes long says how far it is (a line at a time): the run's log. Before
    // start().
    void setProgress(std::function<void(const QString&)> say) { m_progress = std::move(say); }
    // Workers (device IDs) that come back to a run that went on without them: of a newcomer and
    // a member that has trained with the run, where the link between them is lost, the newcomer
    // goes. Before start().
    void setNewcomers(QSet<QString> workers) { m_newcomers = std::move(workers); }
    // Training thread, between steps of a run set up: asks each of `workers` (device IDs, not
    // members yet) whether it reaches every member where the members listen (ShardPart::probe),
    // and returns at once: the run trains on while they dial. A machine that cannot reach one
    // member would fail the whole setup, which stops every machine's training for as long as
    // the setup waits for its links (ShardPart's patience, 30 s) and sets the run up again
    // twice. A later probe replaces this one.
    void sendProbe(const std::vector<QString>& workers);
    // The answers to the last sendProbe() so far, by worker: empty where it reaches every
    // member, else why it does not (one that left is named too). Waits up to `waitMs` for every
    // worker's answer.
    QHash<QString, QString> probeAnswers(int waitMs = 0);
    // Forgets the probe and its answers.
    void endProbe();
    // The owners step with local-SGD's outer optimizer (start()'s `optimizer`, which the setup
    // then carries to the workers: their settings name the inner one). Before start().
    void setOuterStep(bool on) { m_outerStep = on; }
    // Streaming local-SGD: the model is cut into `fragments` and step s exchanges fragment
    // s mod `fragments` alone (ShardSetup::fragments). Each member's replica, this machine's
    // too, trains on while a step's values land beside it: takeLanded() gives them. Before
    // start().
    void setFragments(int fragments) { m_fragments = std::max(1, fragments); }
    // Training thread, streaming: the values of fragment `fragment` that landed on this machine
    // with step `step` (each of the fragment's trainable tensors, fp32 on the CPU; undefined
    // outside it), once waitUpdated(step) has returned. Fails where they did not land.
    Expected<std::vector<at::Tensor>> takeLanded(int fragment, int64_t step);
    // Whether the logs hold every step since the setup (none failed to write).
    bool backedUp() const;
    // Why the logs stopped (a disk that filled, sums that did not fit); empty while they go on.
    QString logFailure() const;
    // What the logs' records hold on disk now.
    qint64 logBytes() const;
    // Training thread, between steps: each log begins again from its range's state now, which
    // its owner sends, a range at a time. Fails when a member is lost meanwhile, or after
    // `timeoutMs`.
    Status rebaseLogs(int timeoutMs);
    QString selfId() const { return m_self; }
    // How many times start() has set the run up: every machine takes the weights whole with its
    // first step after each. Training thread.
    int64_t setups() const { return m_setups; }
    // Every member's device ID and range, in the order of the values.
    std::vector<ShardRange> ranges() const { return m_ranges; }

    // This machine's worker's gradient bundle for `step`, of which the first `ready` bytes are
    // final (GradientBundle::ready()); again as it grows. Any thread.
    void ownGradients(int64_t step, const QByteArray& bundle, qint64 ready);
    // Tells every owner how `step` closes as it starts: the workers whose ranges count, with
    // their weights (`counted`, in that order), and the learning rate. Each owner steps its range
    // once it holds every one of them, and sends its weights on. An owner that cannot close it
    // fails the run (the next wait says so).
    void close(int64_t step, double lr, const std::vector<std::pair<QString, double>>& counted);
    // Waits until every member's replica holds the weights after `step`. Fails when an owner
    // refused a worker's range (naming it) or a member is lost, or after `timeoutMs`.
    Status waitUpdated(int64_t step, int timeoutMs);
    // Between steps: the optimizer's state of the whole model, from every owner's range, in the
    // one-owner run's names (ShardOwner::gatherState), and the steps it has taken: what a
    // checkpoint keeps. The ranges come one at a time (GatheredState), so this machine holds the
    // state once and one range's bytes beside it. The owners' fp32 weights go into the replica,
    // which until then held them as the wire carried them: over a 16-bit wire, roundReplica()
    // takes them back there before the next step. Without `keepState` (the end of a run, whose
    // export needs only the weights) no state is kept: each range's goes once its weights are in,
    // and the logs are not begun again from it.
    Expected<std::pair<int64_t, NamedTensors>> gatherState(int timeoutMs, bool keepState = true);
    // The same for a checkpoint, each range's state kept in a file in `dir` until the
    // checkpoint's writer reads each tensor from it (SpilledState): this machine holds one
    // range's bytes at a time, and never the whole state.
    Expected<std::pair<int64_t, std::unique_ptr<SpilledState>>> spillState(const QString& dir,
                                                                           int timeoutMs);
    // Between steps: rounds the replica to the wire's dtype, as the owners' weights reach every
    // machine. The start does it, so that the first step computes on what every later one does
    // and every machine on the same weights; after gatherState(), it undoes the fp32 weights.
    void roundReplica();

    // The members lost since the setup, by device ID, in the order they went.
    QStringList lost() const;
    // Training thread: ends this setup. This machine's part goes, and so do its links; each
    // worker ends its part with the next setup; what the members say of this one from now on is
    // not kept, and lost() is empty. start() may follow.
    void stop();
    // Training thread, after stop(): the whole run's fp32 weights and optimizer state (in the
    // one-owner run's names) after step `throughStep`, each range from its log.
    struct Rebuilt {
        std::vector<at::Tensor> masters;
        int64_t steps = 0;
        NamedTensors state;
    };
    Expected<Rebuilt> rebuild(int64_t throughStep) const;

    // What each member's links carried a step, in the order of the ranges, from its replica's
    // first update to its last: the bytes it sent and received to and from the coordinator and
    // the other members, over `steps` steps (0: not measured yet); and the same over the
    // `fullSteps` of those in which every member computed (a member the balancer leaves out of
    // a step sends no gradients in it).
    struct Traffic {
        ShardRange range;
        int64_t steps = 0;
        double sentPerStep = 0;
        double receivedPerStep = 0;
        int64_t fullSteps = 0;
        double sentPerFullStep = 0;
        double receivedPerFullStep = 0;
    };
    std::vector<Traffic> traffic() const;
    // What the member `deviceId` holds and what its links carried in its replica's last update,
    // for each step's figures (WorkerStepStats); shard 0 where it is not a member.
    struct Holding {
        int shard = 0; // 1 for the first range
        int shards = 0;
        int64_t bytes = 0;    // what its owner keeps for it, a step's arriving gradients too
        double linkBytes = 0; // sent and received, in its last step
    };
    Holding holding(const QString& deviceId) const;

    // Network thread.
    void onReport(const QString& member, const wire::ShardReport& report);
    void onLost(const QString& member, const QString& why);
    void onState(const QString& member, int64_t steps, const RangeState& state);

private:
    // Waits for `done` (with m_mutex held) or a failure, up to `timeoutMs`; `what` names what was
    // awaited for the error.
    template <typename Done>
    Status await(std::unique_lock<std::mutex>& lock, Done done, int timeoutMs, const QString& what);

    // Network thread: a setup's fields other than its members and ranges, for a run whose first
    // step is `firstStep`, its optimizer having taken `steps`.
    wire::ShardSetup newSetup(int64_t firstStep, int64_t steps) const;
    // Network thread: a setup again, on the machines left: what the last one heard, its part
    // on this machine and its logs go.
    void forgetSetup();
    // Network thread (written there before any report can come).
    bool isMember(const QString& deviceId) const;
    // Any thread: a log at `path` for `range`, beginning after `steps` optimizer steps with the
    // range state `base` (ShardOwner::rangeStateBytes()), its first record of step `firstStep`.
    // Writing a base of gigabytes takes seconds, so the training thread does it and the network
    // thread, which answers the links' pings, only takes the log in.
    Expected<std::unique_ptr<ShardLog>> newLog(const ShardRange& range, const QString& path,
                                               int64_t firstStep, int64_t steps,
                                               const RangeState& base) const;
    QString logPath(size_t range) const;
    // Streaming's windows of the values, a step each in turn (setFragments()); none otherwise.
    std::vector<ShardWindow> windows() const;
    // Training thread, between steps: range `range`'s log begins again from `base`. The new log
    // is written beside the old one, and takes its place on the network thread.
    void swapLog(size_t range, int64_t firstStep, int64_t steps, const RangeState& base);
    // Asks range `range`'s owner for its state (ShardOwner::rangeState()) and waits for it: the
    // steps it has taken and the state, where it lies (this machine's own owner's tensors, or
    // the file a worker's was written to as it came).
    Expected<std::pair<int64_t, RangeState>> fetchState(size_t range, int timeoutMs);
    // Every range's state in turn, into `sink`, each range's log begun again from it unless the
    // run ends (`rebase` false): the steps the owners have taken.
    using RangeSink = std::function<Status(const ShardRange&, int64_t, const RangeState&)>;
    Expected<int64_t> collectState(const RangeSink& sink, int timeoutMs, bool rebase = true);
    // What the ranges' owners start from: this machine's range's owner, made here, and each
    // worker's blob, as it takes it with the setup, kept in a file (null for this machine's).
    struct RangeStarts {
        std::unique_ptr<ShardOwner> self;
        std::vector<std::shared_ptr<SpilledBytes>> blobs;
    };
    // Any thread, before a setup: each range's start, made a range at a time (one range's state
    // here at once, besides this machine's own); and, with the logs, each range's log begun from
    // the same state (`logged` says whether they could be).
    Expected<RangeStarts> rangeStarts(const std::vector<ShardRange>& ranges, int64_t firstStep,
                                      int64_t steps, const StateParts& state,
                                      std::vector<std::unique_ptr<ShardLog>>* logs,
                                      Status* logged) const;
    void onSummed(size_t range, const ShardLog::Span& span);
    // A worker gone before the setup could name it a member.
    void markLost(const QString& deviceId);
    // A log that could not be written stops the logs: a machine lost then stops the run.
    void noteLog(const Status& st);

    CoordinatorHub* m_hub = nullptr;
    QString m_self;
    std::vector<QString> m_members; // this machine first
    std::vector<ShardRange> m_ranges;
    std::vector<at::Tensor>* m_replica = nullptr;
    DType m_wire = DType::F32;
    OptimizerConfig m_optimizer;
    bool m_outerStep = false;
    int m_fragments = 1;
    int64_t m_setups = 0;
    ShardPart* m_machine = nullptr; // the network thread's, a child of the hub

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    QSet<QString> m_ready;
    std::map<int64_t, QSet<QString>> m_updated;
    std::map<QString, std::pair<int64_t, RangeState>> m_states; // gatherState()'s answers
    QString m_failure;         // a refusal, a lost member, a link that failed: the run cannot go on
    int64_t m_lastClosed = -1; // the last step closed: reports of steps long past are not kept
    // A member's bytes (sent, received) at its first update, the one before its last, and its
    // last.
    struct Count {
        int64_t step = -1;
        quint64 sent = 0, received = 0;
    };
    struct Counts {
        Count first, previous, last;
        int64_t fullSteps = 0; // and what they carried in them
        double fullSent = 0, fullReceived = 0;
    };
    std::map<QString, Counts> m_counts;
    std::map<int64_t, bool> m_fullStep; // closed steps: whether every member computed in it
    size_t m_computing = 0;
    QSet<QString> m_holders;
    QSet<QString> m_newcomers;
    QHash<QString, QString> m_names;
    // The members where they listen, as the last setup listed them (network thread); and a
    // probe's machines and their answers so far (empty: it reaches every member).
    QList<wire::ShardSetup::Peer> m_peers;
    QSet<QString> m_probing;
    QHash<QString, QString> m_probed;

    QString m_backupDir;
    QString m_spillDir;
    std::function<void(const QString&)> m_progress;
    std::vector<std::unique_ptr<ShardLog>> m_logs; // per range; network thread
    std::atomic<qint64> m_logBytes{0};             // their records' bytes, read from any thread
    QString m_logFailure;                          // a log that could not be written
    QStringList m_lost;
};

} // namespace tandem
