#pragma once

#include "engine/internal.h"

// Engine-internal: the workers of one run and the slot each is in. The training loop asks the
// pool who takes part and how many samples each gets; the pool keeps the balancer's
// measurements, leaves out a worker whose communication costs more than its compute adds,
// measures it again now and then, and drops one that fails. Workers that join through the hub
// arrive as events and take their place at the next step boundary.

#include "engine/coordinator/balancer.h"
#include "engine/coordinator/hub.h"
#include "engine/coordinator/modechoice.h"
#include "engine/coordinator/remoteworker.h"
#include "engine/training.h"
#include "engine/work.h"

#include <QElapsedTimer>
#include <QHash>
#include <QSet>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace tandem {

enum class WorkerSlot {
    Active,  // gets its share of every step
    LeftOut, // the balancer gives it nothing: moving the weights costs more than it adds
    Probing, // left out, and measured again with a small slice this step
    Dropped, // left, failed or went silent; never given work again
};

// A worker taking part in the run, with what the summary reports about it.
struct PoolMember {
    std::shared_ptr<WorkerLink> link;
    RemoteWorker* remote = nullptr; // null for an in-process worker
    WorkerSummary stats;
    WorkerSlot slot = WorkerSlot::Active;
    int64_t leftOutSince = 0; // the step it was left out (or last probed) at
    QString leftOutWhy;       // and why, as said then
    // Steps until it is measured again while left out: WorkerPool::kProbeEvery, twice that
    // after each re-measurement that finds it would still slow the run, up to kProbeEveryMost.
    int64_t probeEvery = 0;
    // Its re-measurement's slice is out and its result not in yet: in streaming, rounds after
    // it are planned before it returns, and they must not judge it on what was known before.
    bool probeAwaited = false;
    // In sync, a remote worker enters the run on the small slices of WorkerPool::kEntry, one a
    // step, while the workers already measured take the rest; `entered` counts its results.
    int64_t entered = 0;
    bool entering = false; // its last share was an entry slice
    // Left out for its link alone: it is judged again by the link's live probes, not by a
    // slice of a step, which would move the whole model over that link.
    bool outByLink = false;
    // The most samples its device fit at once after it ran out of memory (0: it never did).
    // The balancer never gives it more, so the share that failed is never tried again.
    int64_t memoryCap = 0;
    int64_t served = 0; // steps (or async results) it computed a share of
    // Judged by the run's own steps (WorkerPool::stepTook): left out because the steps it took
    // part in were not shorter than those without it, whatever the balancer's model foresaw.
    bool outByOutcome = false;
    int64_t outcomeStrikes = 0; // verdicts in a row that it slowed the run
    // Steps before this one are timed without it, to compare with those it takes part in.
    int64_t trialUntil = 0;
    int64_t judgedAt = -1;  // the step of its last verdict
    int64_t lastTrial = -1; // the step its last trial began after

    bool alive() const { return slot != WorkerSlot::Dropped; }
    // A sharded run's member that computes nothing: never given a share.
    bool holdsOnly() const { return remote && remote->holdsOnly(); }
    bool leftOut() const { return slot == WorkerSlot::LeftOut || slot == WorkerSlot::Probing; }
    // The most samples this worker may take in one step (0: no limit). Both limits are per
    // forward pass; a local-SGD round makes `passes` of them.
    int64_t cap(int64_t passes) const;
    // Sent and received on the wire so far (0 for an in-process worker).
    int64_t bytes() const;
};

class WorkerPool {
public:
    // Steps between re-measurements of a worker the balancer left out: at first, and at most.
    static constexpr int64_t kProbeEvery = 50;
    static constexpr int64_t kProbeEveryMost = 16 * kProbeEvery;
    // A remote worker's entry in sync: the step's samples divided by these. The first slice
    // warms it up (its first step loads and allocates) and is not measured; the next two, of
    // different sizes, tell its fixed cost from its cost per sample, and it is judged on them.
    // A worker that cannot help then costs the run three small slices, not three steps of
    // an equal share it was assumed able to carry.
    static constexpr int kEntry[] = {16, 8, 16};
    // A worker is left out for its link before its entry when moving the model there and back
    // would take more than this many of the others' steps and more than kLinkMs, and taken back
    // once it would not. Below that its entry's measurements decide: the handshake's rate is a
    // rough figure (small fillers, TLS, a loaded machine), gradients partly overlap the
    // backward pass, and an entry over such a link costs the run a few seconds at most, once.
    static constexpr double kLinkSteps = 8;
    static constexpr double kLinkMs = 1000;
    // The balancer's model of a worker can be wrong in ways its measurements never show: a
    // device whose CPU quota runs out partway through a step, a stall in copies outside its
    // compute. So in sync, each remote worker is also judged by the run's own steps: the mean
    // of the last kJudgeSteps it took part in against that of as many without it, with the same
    // others and batch, taken since it was last judged (while it was left out, or on purpose:
    // a trial, at most one in kBaselineSteps). The steps with it are first set against the
    // balancer's forecast of the others' compute alone, which no step without it can beat:
    // clearly shorter, and it needs no trial. It is left out only where its steps are clearly
    // longer, by kJudgeMargin.
    static constexpr int kJudgeSteps = 12;
    static constexpr double kJudgeMargin = 0.02;
    static constexpr int64_t kBaselineSteps = 400;

    explicit WorkerPool(RunObserver& observer);

    // Where the hub delivers its events (on its network thread).
    std::function<void(HubEvent)> hubSink();
    void setHasHub(bool h) { m_hasHub = h; }
    // The bytes a sync step moves to a remote worker (its weights), and as many back (its
    // gradients): with the link's probe from its handshake, what its link alone costs a step.
    void setStepBytes(int64_t bytes) { m_stepBytes = bytes; }

    void add(std::shared_ptr<WorkerLink> link, RemoteWorker* remote = nullptr);
    // How many samples per forward pass fit a worker's device (memoryplan.h), from the device
    // it reports and whether it is this machine's own worker; an error when the model does
    // not fit at all.
    using MemoryPlan =
        std::function<Expected<int64_t>(const DeviceInfo& device, const QString& name, bool local)>;
    void setMemoryPlan(MemoryPlan plan) { m_memoryPlan = std::move(plan); }
    // Caps worker `i` at what fits its device, or drops it (and returns why) when the model
    // does not fit. Workers that join through the hub go through it as they are admitted.
    Status applyMemoryPlan(size_t i);
    // Blocks until `count` joined workers wait for admission, the timeout passes (-1: none)
    // or `cancelled` says so. Returns how many wait. Without a hub, returns at once. `probed`:
    // counts the workers whose link the handshake measured instead (--mode auto waits for them).
    int waitForJoined(int count, int timeoutMs, const std::function<bool()>& cancelled,
                      bool probed = false);
    // Every worker's link as its handshake measured it, in the order they came.
    QList<LinkFacts> probedLinks() const;
    // Worker `worker`'s (PoolMember::stats.name) link as last measured, by its handshake or a
    // live probe; none (0 bytes a second) where it was not.
    LinkFacts linkOf(const QString& worker) const;
    // Gives the workers that joined their place, and passes the hub's notes to the log. One
    // held back (holdBack()) waits until its time is up, unless `evenHeld`.
    // `only`: those of these devices alone; the others wait.
    void admitJoined(bool evenHeld = false, const QSet<QString>* only = nullptr);
    // Whether a worker joined that admitJoined() would give its place now.
    bool anyJoined() const;
    // Those workers' device IDs and names, in the order they came.
    std::vector<std::pair<QString, QString>> joinedWorkers() const;
    // A sharded run sends a worker away (its link to another machine was lost) or cannot take
    // it in: when its device comes back, it waits a while before it is taken in, so that a
    // link still cut costs the run one setup in a while and not one every step. The wait is
    // `firstMs`, doubled for each time before, up to 32 times; returned.
    qint64 holdBack(const QString& deviceId, qint64 firstMs);
    // Passes the hub's notes to the log.
    void flushNotes();
    // A line for the run's log.
    void note(const QString& text);

    size_t size() const { return m_members.size(); }
    PoolMember& at(size_t i) { return m_members[i]; }
    const PoolMember& at(size_t i) const { return m_members[i]; }
    // Indices of the workers not dropped that compute (those that only hold a range are not).
    std::vector<size_t> live() const { return alive(false); }
    // Indices of the members not dropped that only hold a range of a sharded run.
    std::vector<size_t> holders() const { return alive(true); }
    bool anyAlive() const;

    // Splits `n` samples among `live` for the step after `step` (`passes` forward passes each).
    // On the step's first round it also decides who is left out, probes a worker left out for
    // kProbeEvery steps, and says so in the log.
    std::vector<int64_t> shares(const std::vector<size_t>& live, int64_t n, int64_t passes,
                                int64_t step, bool firstRound);
    // The same for a mode whose exchange overlaps the others' compute (streaming), for its
    // round `round`: the balancer's split, with the same decisions to leave out, re-measure
    // and take back, but no entry slices and no judgement of a link before it is used: a
    // round's exchange costs no one time unless it outlasts the round, which its
    // measurements then show.
    std::vector<int64_t> roundShares(const std::vector<size_t>& live, int64_t n, int64_t passes,
                                     int64_t round);
    // A sync step of `n` samples ended after `ms`; took[i]: worker i's samples in it, `last`
    // the one whose result came in last (kNone: not known). Judges the remote workers by the
    // steps with them against those without (kJudgeSteps), and tells the balancer who ended
    // last (ThroughputBalancer::lastToFinish).
    static constexpr size_t kNone = size_t(-1);
    void stepTook(const std::vector<int64_t>& took, int64_t n, double ms, int64_t step,
                  size_t last = kNone);
    // Whether the balancer has timed worker `i` yet (a result of it has been recorded).
    bool timed(size_t i) const { return m_balancer.speed(m_members[i].stats.name) > 0; }
    // A result came back after `rttMs`: its notes, the worker's time and the balancer's
    // measurement (when `measure`).
    void record(size_t i, const WorkResult& r, double rttMs, bool measure);
    // The worker failed; `consequence` completes the log line ("its samples go to the others").
    void drop(size_t i, const Error& why, const QString& consequence, int64_t step);
    // Why the last worker was dropped; a remote worker's failure is about a peer.
    const Error& lastDrop() const { return m_lastDrop; }

    // Blocks until `anyReady` holds, checked whenever a worker's result or failure arrives,
    // or `timeoutMs` passes.
    void waitUntil(const std::function<bool()>& anyReady, int timeoutMs);

    // Every worker as the run ends, with its status and why.
    QList<WorkerSummary> summaries() const;
    // Bytes on the wire summed over remote workers, and how many there were.
    // Bytes on the wire to and from remote workers, and the steps they served between them.
    std::pair<int64_t, int64_t> remoteBytes() const;

private:
    // Indices of the members not dropped that only hold a range (`holding`) or that compute.
    std::vector<size_t> alive(bool holding) const;
    MemoryPlan m_memoryPlan;
    // Why the balancer leaves `m` out, in words for the log and the summary.
    // Why worker `i` of `live` gets nothing of a step of `n` samples, and the figures that say
    // it (RunEvent::costMs, stepMs).
    RunEvent leftOutEvent(const std::vector<size_t>& live, size_t j, int64_t n, int64_t passes,
                          int64_t step) const;
    static RunEvent leftOutEventFor(const PoolMember& m, int64_t step);
    void emitEvent(RunEvent::Kind kind, const PoolMember& m, const QString& reason, int64_t step,
                   bool leaving = false);
    void updateSlots(const std::vector<size_t>& live, std::vector<int64_t>& counts, int64_t n,
                     int64_t passes, int64_t step);
    void sayLeftOut(PoolMember& m, const RunEvent& e);
    bool hasProbedLink(const QString& worker) const;
    // The step the workers of `live` but j take, from those already measured (0: none is).
    double stepWithoutMs(const std::vector<size_t>& live, size_t j, int64_t n,
                         int64_t passes) const;
    // What moving the weights there and the gradients back costs a step over `link`.
    double linkMs(const LinkFacts& link) const;
    // shares() for the workers that take part in the step.
    std::vector<int64_t> splitShares(const std::vector<size_t>& live, int64_t n, int64_t passes,
                                     int64_t step, bool firstRound);
    // The step's entry slices (-1 for a worker not entering, 0 for one that waits a step), or
    // nothing when no one enters: there is no worker already measured to take the rest, or the
    // step is too small to slice.
    std::vector<int64_t> entrySlices(const std::vector<size_t>& live, int64_t n, int64_t passes);
    // Whether moving the model there and back in `moveMs` would slow a step of `stepMs` too
    // much to be worth an entry (kLinkSteps, kLinkMs).
    static bool linkTooSlow(double moveMs, double stepMs) {
        return stepMs > 0 && moveMs > kLinkSteps * stepMs && moveMs > kLinkMs;
    }
    // A worker about to enter whose link alone, by its handshake's probe, is too slow: left
    // out before it costs a step. Returns whether it was.
    bool leftOutByLink(const std::vector<size_t>& live, size_t j, int64_t n, int64_t passes,
                       int64_t step);

    // The run's steps, for stepTook's verdicts: who took part, the batch, and how long it took.
    struct TimedStep {
        std::vector<char> with; // by member index
        int64_t n = 0, step = 0;
        double ms = 0;
    };
    // The mean of the last kJudgeSteps steps of `n` samples with exactly the workers of `with`
    // since step `since`, the longest set aside, or 0 when there are fewer.
    double meanStepMs(const std::vector<char>& with, int64_t n, int64_t since) const;
    void judgeByOutcome(size_t i, const TimedStep& last, int64_t step);
    // Before the split: gives nothing to a worker on trial or left out for what it cost, and
    // takes one back once its wait is over, to be timed again.
    void outcomeSlots(const std::vector<size_t>& live, int64_t step);

    RunObserver& m_obs;
    ThroughputBalancer m_balancer;
    std::deque<TimedStep> m_steps; // the latest, oldest first
    bool m_stepUnclean = false;    // this step gave an entry slice or a probe, or lost a worker
    int64_t m_passes = 1;          // forward passes per share, as the last step's split had
    std::vector<PoolMember> m_members;
    bool m_hasHub = false;
    int64_t m_stepBytes = 0;
    Error m_lastDrop;

    mutable std::mutex m_mutex; // guards the inbox, filled on the hub's thread
    std::condition_variable m_cv;
    std::vector<std::shared_ptr<RemoteWorker>> m_joined;
    struct HeldBack {
        qint64 untilMs = 0; // on m_clock
        int times = 0;
    };
    QHash<QString, HeldBack> m_heldBack; // by device ID
    QElapsedTimer m_clock;
    bool heldBack(const RemoteWorker& w) const; // under m_mutex
    QList<LinkFacts> m_probed;
    QHash<QString, LinkFacts> m_links; // each worker's latest link, handshake or live probe
    QStringList m_notes;
    QList<std::pair<QString, QString>> m_declined; // nodes that declined an invitation, and why
    std::mutex m_readyMutex;
    std::condition_variable m_readyCv;
};

} // namespace tandem
