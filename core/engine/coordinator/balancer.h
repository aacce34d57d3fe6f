#pragma once

#include "engine/internal.h"

#include <QHash>
#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

// Splits each step's global batch among workers so that they finish together. Each worker's
// time for b samples is modelled as overhead + fixed + b / speed: its communication per step
// (the median of the last few measurements), and its compute as a fixed part per step plus a
// part per sample, fitted to its last few steps. A GPU's step at a small share is mostly fixed
// cost (launches, the optimizer's own), so samples over time would make it look slow and hand
// a CPU beside it more than the CPU can finish in the GPU's step. The fit is Theil and Sen's:
// the median of the slopes between steps of clearly different sizes (at least a quarter apart),
// which one stalled step cannot move; while the recent steps are all of one size, the fixed
// part found last holds, and until there is one it is taken as zero. Equal finish times then
// give b_i = (T - overhead_i - fixed_i) * speed_i with sum(b_i) = B. A worker whose fixed costs
// alone exceed T gets nothing this step: it would only make the step longer than the others
// take without it. The overhead is measured as the round trip less the worker's compute,
// so the part of a transfer that overlaps compute (gradients sent during the backward pass)
// does not count against a worker: a slow link is charged only for what it adds. Until a worker has
// been measured it is assumed to be as fast as the average.
//
// Medians, not running averages: a laptop whose lid closed for 30 s returns one step that
// took 30 s. That is a stall, not what moving its weights costs, and an average would carry it
// for dozens of steps and leave the worker out of the run. A median ignores it, and a worker
// is judged by its overhead only once it has been measured kMinToJudge times.
//
// A worker whose steps vary (a machine shared with other work, a throttled or thermally
// limited one, a busy link) ends a step late now and then, and a sync step lasts as long as its
// latest worker. Finishing together on average is then too much for it: moving one sample
// from worker i to the others shortens the step by 1/v_i when i was the last to finish and
// lengthens it by about 1/V_others otherwise, so the step is shortest when i ends last with
// probability v_i / V, its part of the step's speed. Each worker's time is therefore planned at
// the (1 - v_i / V) quantile of how much its steps ran over the model (lateMarginMs): a slow
// worker beside a fast one at a high quantile, the fast one at a low one, where the margin is
// nil. The quantile is taken by rank below it, so the largest one or two overruns of the window
// (stalls) never set it.
//
// That quantile is right where a worker's overruns do not depend on its share. Some do: a
// machine whose CPU quota runs out partway through a step (a cgroup's, a laptop's power limit)
// is throttled until its next period, so the larger its share, the likelier and the longer its
// overrun, and a share planned on the overruns of smaller ones ends last far more often than
// v_i / V. So each sync step also says which worker ended last (lastToFinish), and each
// worker's margin follows what happens: it grows by a little when the worker ended last and
// shrinks when it did not, in the proportion that holds it still where the worker ends last
// with probability v_i / V (a stochastic approximation of that quantile, Robbins and Monro's).
class ThroughputBalancer {
public:
    static constexpr int kWindow = 9;
    static constexpr int kMinToJudge = 3;
    // Two steps tell the fixed part from the per-sample one when one had this many times the
    // other's samples.
    static constexpr double kSpread = 1.25;
    // A sample costs at least this (a billion samples a second).
    static constexpr double kLeastPerSampleMs = 1e-6;
    // How far lastToFinish() moves a worker's margin a step, as a part of the step: one that
    // ends last in three steps of five, where its speed says one in five, gains a third of a
    // step of margin in about seventeen steps.
    static constexpr double kLastGain = 0.05;

    void record(const QString& worker, int64_t samples, double computeMs, double overheadMs);
    void forget(const QString& worker) { m_stats.remove(worker); }
    // A measurement that replaces what was known of the worker, as if it were all its recent
    // steps: the re-measurement of a worker left out, whose load or link may have changed since.
    // A load scales a step's fixed and per-sample parts alike, so where the two were told
    // apart before, the new step is split between them in the same proportion.
    void restart(const QString& worker, int64_t samples, double computeMs, double overheadMs);
    // Judges the worker on what it has measured so far, its link included, as if it had been
    // measured kMinToJudge times: for a worker that entered the run on a few small slices,
    // which are all the steps the others can spare for it.
    void settle(const QString& worker);
    // A step that `workers` all took part in ended after `stepMs`, `last` the last of them to
    // return its result: each one's margin moves towards where it ends last as often as its
    // part of the step's speed says (see above). Nothing moves until every one of them has
    // been measured kMinToJudge times.
    void lastToFinish(const std::vector<QString>& workers, const QString& last, double stepMs);

    // Per-worker batch sizes for `workers` summing to `batch`. maxBatch[i] > 0 caps worker i
    // (device memory): what it cannot take goes to the others with room, and past a cap only
    // when every worker in the step is at its cap.
    std::vector<int64_t> split(int64_t batch, const std::vector<QString>& workers,
                               const std::vector<int64_t>& maxBatch = {}) const;

    double speed(const QString& worker) const; // samples/s of compute, 0 when unmeasured
    double overheadMs(const QString& worker) const;
    double fixedMs(const QString& worker) const; // compute's fixed part per step
    // What worker is planned to run over its model in a step shared with `workers` (see above).
    double lateMarginMs(const QString& worker, const std::vector<QString>& workers) const;
    // The step's time the model foresees for `batch` split among `workers` as split() would.
    double predictedStepMs(int64_t batch, const std::vector<QString>& workers,
                           const std::vector<int64_t>& maxBatch = {}) const;

private:
    struct Rates {
        std::vector<double> speed;    // samples/s
        std::vector<double> overhead; // s per step: the link's, compute's fixed part, the margin
        std::vector<double> margin;   // s: the late margin (part of overhead)
    };
    // The phases of split(): each worker's measured rates; the shares that end the step
    // together (none for a worker whose overhead alone outlasts it); the caps, with what a
    // capped worker cannot take moved to those with room; whole samples that add up.
    Rates rates(const std::vector<QString>& workers) const;
    static std::vector<double> finishTogether(int64_t batch, const Rates& r);
    static void applyCaps(std::vector<double>& share, const std::vector<double>& speed,
                          const std::vector<int64_t>& maxBatch);
    static std::vector<int64_t> roundShares(int64_t batch, const std::vector<double>& share,
                                            const std::vector<int64_t>& maxBatch);

    struct Stats {
        // The last kWindow measurements, oldest first.
        std::vector<double> samples, computeMs, overheadMs;
        double perSampleMs = 0; // the compute model, fitted to them
        double fixedMs = 0;
        bool fitted = false; // fixedMs is from steps of different sizes
        double overhead = 0; // the median
        // Added to the planned overrun by lastToFinish(); never below the overrun's negative,
        // so the margin stays at zero or more.
        double lastMs = 0;
    };
    static void fit(Stats& s);
    // The `q` quantile, by rank below it, of how much s's measured steps ran over its model.
    static double overrunMs(const Stats& s, double q);
    QHash<QString, Stats> m_stats;
};

} // namespace tandem
