// The balancer: shares by measured throughput, one stall does not move them, and a device's
// memory cap holds.

#include "engine/coordinator/balancer.h"
#include "engine/devices.h"
#include "engine/step/batch.h"
#include "engine/step/modelcheck.h"
#include "engine/step/optimizer.h"
#include "engine/step/precision.h"
#include "engine/step/replica.h"
#include "engine/step/sampler.h"
#include "engine/training.h"
#include "engine/wire/wiretensors.h"
#include "engine/wire/workwire.h"
#include "formats/ziparchive.h"
#include "model/scriptmodel.h"
#include "model/torchcompat.h"

#include "enginetestutil.h"

#include <QFile>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <ATen/Parallel.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/cuda.h>

#include <cmath>
#include <cstdlib>

using namespace tandem;

using namespace tandem;
using namespace tandem::testing;

class TestBalancer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void balancerSplitsByThroughput();
    void balancerIsNotFooledByOneStall();
    void balancerKeepsAMemoryCap();
    void capsHoldWhileAnotherWorkerHasRoom();
    void aFixedCostGpuBesideAPerSampleCpu();
    void theFixedPartHoldsAndShrugsOffAStall();
    void anEntryIsJudgedOnItsSlicesAndAReMeasurementKeepsTheSplit();
    void aWorkerThatRunsOverIsPlannedAtItsLateQuantile_data();
    void aWorkerThatRunsOverIsPlannedAtItsLateQuantile();
    void aWorkerThrottledByItsQuotaEndsLastAsOftenAsItsSpeedSays();
};

namespace {

// Synthetic workers: a "GPU" whose step is 20 ms whatever its share plus 0.01 ms a sample, and a
// "CPU" at 2 ms a sample with `cpuFixedMs` of its own; each timed at the sizes given.
ThroughputBalancer gpuAndCpu(double cpuFixedMs) {
    ThroughputBalancer b;
    for (const double s : {32.0, 48.0, 56.0, 40.0, 54.0})
        b.record(QStringLiteral("gpu"), int64_t(s), 20.0 + 0.01 * s, 0.5);
    for (const double s : {32.0, 16.0, 8.0, 12.0, 10.0})
        b.record(QStringLiteral("cpu"), int64_t(s), cpuFixedMs + 2.0 * s, 0.5);
    return b;
}

} // namespace

// A step time with a fixed part: the GPU is fast per sample but pays 20 ms a step however few
// samples it gets. Samples over time would rate it at about 2,500 samples/s at 54 samples and
// give the CPU (500/s) about 15 of 64: 30 ms for the CPU against 20.6 ms for the GPU alone. With
// the fixed part fitted, the CPU gets what it can finish within the GPU's step, or nothing.
void TestBalancer::aFixedCostGpuBesideAPerSampleCpu() {
    const std::vector<QString> both{QStringLiteral("gpu"), QStringLiteral("cpu")};
    const std::vector<QString> gpu{QStringLiteral("gpu")};
    {
        const ThroughputBalancer b = gpuAndCpu(0.5);
        QVERIFY(qAbs(b.fixedMs(QStringLiteral("gpu")) - 20.0) < 1e-6);
        QVERIFY(qAbs(b.fixedMs(QStringLiteral("cpu")) - 0.5) < 1e-6);
        QVERIFY(qAbs(b.speed(QStringLiteral("gpu")) - 100000.0) < 1e-3);
        const auto shares = b.split(64, both);
        QCOMPARE(shares[0] + shares[1], int64_t(64));
        // With each link's 0.5 ms: T = (64 + 20.5·100 + 1·0.5) / 100.5 = 21.04 ms, and the CPU's
        // 1 ms and 2 ms a sample fit 10 samples in it.
        QCOMPARE(shares[1], int64_t(10));
        const double together = b.predictedStepMs(64, both), alone = b.predictedStepMs(64, gpu);
        QVERIFY2(together <= alone + 1e-9,
                 qPrintable(QStringLiteral("%1 ms together, %2 alone").arg(together).arg(alone)));
        QVERIFY(qAbs(alone - 21.14) < 1e-6);
    }
    {
        // A CPU with 25 ms of its own a step cannot finish even one sample within the GPU's
        // 20.6 ms: it gets nothing, and the step is the GPU's alone.
        const ThroughputBalancer b = gpuAndCpu(25.0);
        QVERIFY(qAbs(b.fixedMs(QStringLiteral("cpu")) - 25.0) < 1e-6);
        QCOMPARE(b.split(64, both), (std::vector<int64_t>{64, 0}));
        QCOMPARE(b.predictedStepMs(64, both), b.predictedStepMs(64, gpu));
        // A batch large enough that the GPU's step outlasts the CPU's fixed part: it helps.
        const auto large = b.split(8192, both);
        QVERIFY(large[1] > 0);
        QVERIFY(b.predictedStepMs(8192, both) < b.predictedStepMs(8192, gpu));
    }
}

// Steps of one size say nothing of the fixed part: the one fitted before holds. One stalled step
// among steps of several sizes moves the fit by little.
void TestBalancer::theFixedPartHoldsAndShrugsOffAStall() {
    ThroughputBalancer b = gpuAndCpu(0.5);
    for (int i = 0; i < 5; ++i)
        b.record(QStringLiteral("gpu"), 54, 20.54, 0.5);
    QVERIFY(qAbs(b.fixedMs(QStringLiteral("gpu")) - 20.0) < 1e-6);
    QVERIFY(qAbs(b.speed(QStringLiteral("gpu")) - 100000.0) < 1.0);
    ThroughputBalancer c;
    for (const auto& [s, ms] : std::vector<std::pair<int64_t, double>>{
             {32, 20.32}, {48, 20.48}, {40, 5000.0}, {56, 20.56}, {24, 20.24}})
        c.record(QStringLiteral("gpu"), s, ms, 0.5);
    QVERIFY2(qAbs(c.fixedMs(QStringLiteral("gpu")) - 20.0) < 1.0,
             qPrintable(QString::number(c.fixedMs(QStringLiteral("gpu")))));
    // Without steps of different sizes a worker is per-sample only, as before.
    ThroughputBalancer d;
    for (int i = 0; i < 3; ++i)
        d.record(QStringLiteral("cpu"), 20, 100.0, 0);
    QCOMPARE(d.fixedMs(QStringLiteral("cpu")), 0.0);
    QCOMPARE(d.speed(QStringLiteral("cpu")), 200.0);
}

void TestBalancer::balancerSplitsByThroughput() {
    ThroughputBalancer b;
    const std::vector<QString> ids{QStringLiteral("fast"), QStringLiteral("slow")};
    // Unmeasured workers share equally.
    QCOMPARE(b.split(64, ids), (std::vector<int64_t>{32, 32}));
    // 600 and 200 samples/s, no overhead: 3 to 1.
    b.record(QStringLiteral("fast"), 60, 100.0, 0);
    b.record(QStringLiteral("slow"), 20, 100.0, 0);
    QCOMPARE(b.split(64, ids), (std::vector<int64_t>{48, 16}));
    // The slow one also spends 40 ms a step communicating, measured over a few steps: equal
    // finish times give it less.
    ThroughputBalancer c;
    for (int i = 0; i < ThroughputBalancer::kMinToJudge; ++i) {
        c.record(QStringLiteral("fast"), 60, 100.0, 0);
        c.record(QStringLiteral("slow"), 20, 100.0, 40.0);
    }
    const auto withComm = c.split(64, ids);
    QCOMPARE(withComm[0] + withComm[1], 64);
    QVERIFY(withComm[1] < 16 && withComm[1] > 0);
    // Overhead longer than the whole step, measured again and again: left out (it would only
    // slow the step down).
    ThroughputBalancer d;
    for (int i = 0; i < ThroughputBalancer::kMinToJudge; ++i) {
        d.record(QStringLiteral("fast"), 60, 100.0, 0);
        d.record(QStringLiteral("slow"), 20, 100.0, 500.0);
    }
    QCOMPARE(d.split(64, ids), (std::vector<int64_t>{64, 0}));
    // A memory cap moves the excess to the others; the total always holds.
    QCOMPARE(b.split(64, ids, {40, 0}), (std::vector<int64_t>{40, 24}));
    QCOMPARE(b.split(1, ids)[0] + b.split(1, ids)[1], 1);
    QCOMPARE(b.split(7, {QStringLiteral("solo")}), (std::vector<int64_t>{7}));
    // A real change in speed is followed within a few steps.
    for (int i = 0; i < ThroughputBalancer::kWindow; ++i)
        b.record(QStringLiteral("fast"), 60, 200.0, 0); // now 300 samples/s
    QCOMPARE(b.speed(QStringLiteral("fast")), 300.0);
}

void TestBalancer::balancerIsNotFooledByOneStall() {
    const std::vector<QString> ids{QStringLiteral("desktop"), QStringLiteral("laptop")};
    ThroughputBalancer b;
    for (int i = 0; i < 6; ++i) {
        b.record(QStringLiteral("desktop"), 48, 100.0, 5.0);
        b.record(QStringLiteral("laptop"), 16, 100.0, 5.0);
    }
    const std::vector<int64_t> before = b.split(64, ids);
    QVERIFY(before[1] > 0);
    // The laptop's lid closed for 30 s in the middle of a step: that step's round trip, less
    // its compute, is 30 s. It is a stall, not what moving the weights costs.
    b.record(QStringLiteral("laptop"), 16, 100.0, 30000.0);
    QCOMPARE(b.split(64, ids), before);
    QVERIFY(b.overheadMs(QStringLiteral("laptop")) < 10.0);
    // Frozen in the middle of its compute instead: one slow compute does not halve its share.
    b.record(QStringLiteral("laptop"), 16, 30000.0, 5.0);
    QCOMPARE(b.split(64, ids), before);
    // One measurement of a slow link is not enough to leave a new worker out either.
    ThroughputBalancer fresh;
    fresh.record(QStringLiteral("desktop"), 48, 100.0, 5.0);
    fresh.record(QStringLiteral("laptop"), 16, 100.0, 9120.0);
    QVERIFY(fresh.split(64, ids)[1] > 0);
}

void TestBalancer::balancerKeepsAMemoryCap() {
    // A worker that ran out of memory at 64 and fits 32 never gets more than 32, however fast.
    ThroughputBalancer b;
    const std::vector<QString> ws{QStringLiteral("gpu"), QStringLiteral("cpu")};
    for (int i = 0; i < 6; ++i) {
        b.record(ws[0], 100, 10.0, 1.0);  // 10,000 samples/s
        b.record(ws[1], 100, 100.0, 1.0); // 1,000 samples/s
    }
    const auto free = b.split(128, ws);
    QVERIFY(free[0] > 100);
    const auto capped = b.split(128, ws, {32, 0});
    QCOMPARE(capped[0], int64_t(32));
    QCOMPARE(capped[1], int64_t(96));
}

void TestBalancer::capsHoldWhileAnotherWorkerHasRoom() {
    // The fast worker's cap leaves 20 samples over; the middle one is under its own cap, and
    // must not be handed past it: what it cannot take goes to the slow one, which has room.
    ThroughputBalancer b;
    const std::vector<QString> ws{QStringLiteral("fast"), QStringLiteral("middle"),
                                  QStringLiteral("slow")};
    for (int i = 0; i < 6; ++i) {
        b.record(ws[0], 400, 100.0, 0.0); // 4,000 samples/s
        b.record(ws[1], 100, 100.0, 0.0); // 1,000
        b.record(ws[2], 100, 100.0, 0.0); // 1,000
    }
    QCOMPARE(b.split(60, ws), (std::vector<int64_t>{40, 10, 10}));
    const auto capped = b.split(60, ws, {20, 12, 0});
    QCOMPARE(capped, (std::vector<int64_t>{20, 12, 28}));
    // Every cap holds while the batch fits under them, whatever the rounding.
    for (int64_t batch = 1; batch <= 72; ++batch) {
        const auto s = b.split(batch, ws, {20, 12, 40});
        QCOMPARE(s[0] + s[1] + s[2], batch);
        QVERIFY2(s[0] <= 20 && s[1] <= 12 && s[2] <= 40, qPrintable(QString::number(batch)));
    }
    // Caps that cannot hold the batch: the batch still adds up, the rest spread over them.
    const auto over = b.split(80, ws, {20, 12, 40});
    QCOMPARE(over[0] + over[1] + over[2], int64_t(80));
}

// A worker that entered on two slices is judged on them, its link included: before settle()
// two measurements are too few to count a slow link, and the CPU would get a share it cannot
// finish in the GPU's step. A re-measurement under twice the load keeps the fixed part's
// proportion found before, rather than taking all of the step as per-sample time (which would
// make a small share look cheap).
void TestBalancer::anEntryIsJudgedOnItsSlicesAndAReMeasurementKeepsTheSplit() {
    const std::vector<QString> both{QStringLiteral("gpu"), QStringLiteral("cpu")};
    ThroughputBalancer b;
    for (const double s : {224.0, 240.0, 224.0})
        b.record(QStringLiteral("gpu"), int64_t(s), 8.0 + 0.03 * s, 0);
    b.record(QStringLiteral("cpu"), 32, 10.0 + 0.46 * 32, 13.0);
    b.record(QStringLiteral("cpu"), 16, 10.0 + 0.46 * 16, 13.0);
    QVERIFY(qAbs(b.fixedMs(QStringLiteral("cpu")) - 10.0) < 1e-6);
    QVERIFY(b.split(256, both)[1] > 0); // its 13 ms link not yet counted
    b.settle(QStringLiteral("cpu"));
    QVERIFY(qAbs(b.overheadMs(QStringLiteral("cpu")) - 13.0) < 1e-6);
    QCOMPARE(b.split(256, both), (std::vector<int64_t>{256, 0}));

    // Twice the load: 32 samples take twice as long, and the fixed part doubles with them.
    b.restart(QStringLiteral("cpu"), 32, 2 * (10.0 + 0.46 * 32), 13.0);
    QVERIFY2(qAbs(b.fixedMs(QStringLiteral("cpu")) - 20.0) < 1e-6,
             qPrintable(QString::number(b.fixedMs(QStringLiteral("cpu")))));
    QVERIFY(qAbs(b.speed(QStringLiteral("cpu")) - 1000.0 / 0.92) < 1e-6);
    // Held while its steps stay one size.
    b.record(QStringLiteral("cpu"), 32, 2 * (10.0 + 0.46 * 32), 13.0);
    QVERIFY(qAbs(b.fixedMs(QStringLiteral("cpu")) - 20.0) < 1e-6);
    // A worker never told apart is re-measured as all per-sample, as before.
    ThroughputBalancer c;
    c.record(QStringLiteral("cpu"), 32, 24.72, 13.0);
    c.restart(QStringLiteral("cpu"), 32, 49.44, 13.0);
    QCOMPARE(c.fixedMs(QStringLiteral("cpu")), 0.0);
}

// A remote worker at 5 ms a sample beside a local one at 1.14 ms, whose steps run over its
// model by anything from 0 to 70 ms (a CPU throttled in 100 ms periods, as a capped machine
// is). Planned to finish together on average, it would end most steps late; planned at its
// late quantile, the run's mean step comes within 3 % of the best share's, found by trying
// every share over the same overruns; and so it does where the balancer is also told which
// worker ended each step last.
void TestBalancer::aWorkerThatRunsOverIsPlannedAtItsLateQuantile_data() {
    QTest::addColumn<bool>("told");
    QTest::newRow("from its overruns") << false;
    QTest::newRow("told who ended last too") << true;
}

void TestBalancer::aWorkerThatRunsOverIsPlannedAtItsLateQuantile() {
    QFETCH(bool, told);
    const std::vector<QString> ws{QStringLiteral("local"), QStringLiteral("remote")};
    const int64_t batch = 128;
    auto localMs = [](int64_t b) { return 1.14 * double(b); };
    auto remoteMs = [](int64_t b) { return 20.0 + 5.0 * double(b); };
    QRandomGenerator rng(7);
    std::vector<double> overrun(400);
    for (double& o : overrun)
        o = rng.bounded(70.0);
    auto stepMs = [&](int64_t remoteShare, double over) {
        return std::max(localMs(batch - remoteShare),
                        remoteShare > 0 ? remoteMs(remoteShare) + over : 0.0);
    };
    ThroughputBalancer b;
    double late = 0;
    int64_t lastShare = 0;
    for (size_t k = 0; k < overrun.size(); ++k) {
        const std::vector<int64_t> s = b.split(batch, ws);
        if (k >= 100)
            late += stepMs(s[1], overrun[k]);
        lastShare = s[1];
        b.record(ws[0], s[0], localMs(s[0]), 0);
        if (s[1] > 0) // its link costs 20 ms, its compute 5 ms a sample, and then its overrun
            b.record(ws[1], s[1], 5.0 * double(s[1]), 20.0 + overrun[k]);
        const bool remoteLast = s[1] > 0 && remoteMs(s[1]) + overrun[k] > localMs(s[0]);
        if (told && s[0] > 0 && s[1] > 0)
            b.lastToFinish(ws, ws[remoteLast ? 1 : 0], stepMs(s[1], overrun[k]));
    }
    late /= double(overrun.size() - 100);
    double best = 1e300, together = 0;
    int64_t bestShare = 0;
    for (int64_t share = 0; share <= batch; ++share) {
        double mean = 0;
        for (size_t k = 100; k < overrun.size(); ++k)
            mean += stepMs(share, overrun[k]);
        mean /= double(overrun.size() - 100);
        if (mean < best) {
            best = mean;
            bestShare = share;
        }
        // The share that ends together with the local worker at the mean overrun, 35 ms.
        if (std::abs(localMs(batch - share) - remoteMs(share) - 35.0) < 3.1)
            together = mean;
    }
    const QString what = QStringLiteral("mean step %1 ms at a last share of %2; the best "
                                        "share %3 gives %4 ms; finishing together on average %5")
                             .arg(late)
                             .arg(lastShare)
                             .arg(bestShare)
                             .arg(best)
                             .arg(together);
    QVERIFY2(late <= 1.03 * best, qPrintable(what));
    QVERIFY2(together > 1.03 * best, qPrintable(what));
    QVERIFY2(late < localMs(batch), qPrintable(what)); // and it still helps
}

namespace {

// A worker whose CPU time is capped at 30 ms in each 100 ms period (a cgroup's quota, as
// ../shared/tools/slowcpu sets it): it runs at full speed until the period's quota is spent and
// then waits for the next period. So its overrun depends on its share: a small share often fits
// in what is left of a period, a large one seldom does and then ends up to 70 ms late.
class QuotaWorker {
public:
    // Wall time, from `startMs` on one clock, to finish `cpuMs` of work, once its other
    // threads (its link's, its data's) have taken `otherMs` of the period's quota.
    double run(double startMs, double cpuMs, double otherMs) {
        double t = startMs;
        if (const auto period = int64_t(std::floor(t / kPeriodMs)); period != m_period) {
            m_period = period;
            m_used = 0;
        }
        m_used = std::min(kQuotaMs, m_used + otherMs);
        while (cpuMs > 1e-9) {
            const auto period = int64_t(std::floor(t / kPeriodMs));
            if (period != m_period) {
                m_period = period;
                m_used = 0;
            }
            const double periodEnd = double(period + 1) * kPeriodMs;
            const double slice = std::min({cpuMs, kQuotaMs - m_used, periodEnd - t});
            if (slice <= 1e-9) {
                t = periodEnd; // throttled until the next period
                continue;
            }
            t += slice;
            m_used += slice;
            cpuMs -= slice;
        }
        return t - startMs;
    }

private:
    static constexpr double kPeriodMs = 100, kQuotaMs = 30;
    int64_t m_period = -1;
    double m_used = 0;
};

// A step of mnist-cnn's shape at batch 128: this machine's worker at 1.45 ms a sample, the other
// at 1.35 ms a sample under the quota, of which its other threads have taken up to 20 ms as it
// starts, 2 ms of link, and 4 ms of update after both are in. Returns the mean step over steps 100
// to 400, and how often the other worker ended last then; `share` >= 0 fixes its share, else the
// balancer splits (told who ended last when `told`).
struct QuotaRun {
    double meanMs = 0;
    double lastPart = 0;
    int64_t lastShare = 0;
};
QuotaRun runBesideAQuota(int64_t share, bool told) {
    const std::vector<QString> ws{QStringLiteral("local"), QStringLiteral("capped")};
    const int64_t batch = 128;
    ThroughputBalancer b;
    QuotaWorker capped;
    QRandomGenerator rng(11);
    QuotaRun out;
    double clock = 0;
    int counted = 0, last = 0;
    for (int k = 0; k < 400; ++k) {
        const std::vector<int64_t> s =
            share >= 0 ? std::vector<int64_t>{batch - share, share} : b.split(batch, ws);
        const double localMs = 1.45 * double(s[0]);
        const double computeMs =
            s[1] > 0 ? capped.run(clock + 1.0, 1.35 * double(s[1]), rng.bounded(20.0)) : 0;
        const double cappedMs = s[1] > 0 ? 2.0 + computeMs : 0;
        const double stepMs = std::max(localMs, cappedMs) + 4.0;
        if (k >= 100) {
            out.meanMs += stepMs;
            last += cappedMs > localMs ? 1 : 0;
            ++counted;
        }
        out.lastShare = s[1];
        clock += stepMs;
        b.record(ws[0], s[0], localMs, 0);
        if (s[1] > 0)
            b.record(ws[1], s[1], computeMs, 2.0);
        if (told && s[0] > 0 && s[1] > 0)
            b.lastToFinish(ws, cappedMs > localMs ? ws[1] : ws[0], stepMs);
    }
    out.meanMs /= counted;
    out.lastPart = double(last) / counted;
    return out;
}

} // namespace

// Under a quota, the quantile of the overruns seen so far plans a share that ends last in about
// two steps of five, twice what its part of the speed (about a fifth) would have. Told which
// worker ended last, the balancer moves its margin until the capped worker ends last in about a
// quarter of the steps, and the mean step is shorter. (With eight other seeds of the other
// threads' use: 0.6-1.5 % shorter in seven, 0.3 % longer in one; 2.6-4.9 % above the best fixed
// share's, against 3.7-4.7 %.)
void TestBalancer::aWorkerThrottledByItsQuotaEndsLastAsOftenAsItsSpeedSays() {
    double best = 1e300;
    int64_t bestShare = 0;
    for (int64_t share = 0; share <= 64; ++share)
        if (const QuotaRun r = runBesideAQuota(share, false); r.meanMs < best) {
            best = r.meanMs;
            bestShare = share;
        }
    const QuotaRun quantile = runBesideAQuota(-1, false);
    const QuotaRun told = runBesideAQuota(-1, true);
    const QString what =
        QStringLiteral("best share %1: %2 ms; planned on the quantile alone: %3 ms, share %4, "
                       "last in %5 of steps; told who ended last: %6 ms, share %7, last in %8")
            .arg(bestShare)
            .arg(best)
            .arg(quantile.meanMs)
            .arg(quantile.lastShare)
            .arg(quantile.lastPart)
            .arg(told.meanMs)
            .arg(told.lastShare)
            .arg(told.lastPart);
    qInfo("%s", qPrintable(what));
    QVERIFY2(quantile.lastPart > 0.35, qPrintable(what));
    QVERIFY2(told.lastPart > 0.15 && told.lastPart < 0.3, qPrintable(what));
    QVERIFY2(told.meanMs <= quantile.meanMs, qPrintable(what));
    QVERIFY2(told.meanMs <= 1.05 * best, qPrintable(what));
    QVERIFY2(told.meanMs < 1.45 * 128 + 4.0, qPrintable(what)); // and it still helps
}

QTEST_GUILESS_MAIN(TestBalancer)
#include "test_balancer.moc"
