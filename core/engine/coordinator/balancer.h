#pragma once

#include "engine/internal.h"

#include <QHash>
#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

// Splits each step's global batch among workers so that they finish together. Each worker's
// time for b samples is modelled as overhead + b / speed, where speed (samples per second of
// compute) and overhead (communication and fixed costs per step) are the medians of the last
// few measurements. Equal finish times then give b_i = (T - overhead_i) * speed_i with
// sum(b_i) = B. A worker whose overhead alone exceeds T gets nothing this step: it would only
// make the step longer. The overhead is measured as the round trip less the worker's compute,
// so the part of a transfer that overlaps compute (gradients sent during the backward pass)
// does not count against a worker: a slow link is charged only for what it adds. Until a worker has
// been measured it is assumed to be as fast as the average.
//
// Medians, not running averages: a laptop whose lid closed for 30 s returns one step that
// took 30 s. That is a stall, not what moving its weights costs, and an average would carry it
// for dozens of steps and leave the worker out of the run. A median ignores it, and a worker
// is judged by its overhead only once it has been measured kMinToJudge times.
class ThroughputBalancer {
public:
    static constexpr int kWindow = 5;
    static constexpr int kMinToJudge = 3;

    void record(const QString& worker, int64_t samples, double computeMs, double overheadMs);
    void forget(const QString& worker) { m_stats.remove(worker); }

    // Per-worker batch sizes for `workers` summing to `batch`. maxBatch[i] > 0 caps worker i
    // (device memory): what it cannot take goes to the others with room, and past a cap only
    // when every worker in the step is at its cap.
    std::vector<int64_t> split(int64_t batch, const std::vector<QString>& workers,
                               const std::vector<int64_t>& maxBatch = {}) const;

    double speed(const QString& worker) const; // samples/s of compute, 0 when unmeasured
    double overheadMs(const QString& worker) const;

private:
    struct Rates {
        std::vector<double> speed;    // samples/s
        std::vector<double> overhead; // s per step
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
        std::vector<double> speeds;     // the last kWindow measurements, oldest first
        std::vector<double> overheadMs; // likewise
        double speed = 0;               // their medians
        double overhead = 0;
    };
    QHash<QString, Stats> m_stats;
};

} // namespace tandem
