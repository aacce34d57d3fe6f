// The shard plan (engine/shard/shardplan.h): which machine owns which range of a sharded run's
// trainable values, on synthetic machines.

#include "engine/shard/shardplan.h"

#include <QRandomGenerator>
#include <QTest>

using namespace tandem;

namespace {

constexpr int64_t kGB = 1024LL * 1024 * 1024;

// The plan's own promises, whatever the machines: the shards follow each other from the first
// value to the last, each boundary inside the values falls on kShardAlignment, each shard's bytes
// are its values' and no owner holds more than it has beside its worker.
bool wellFormed(const ShardPlan& plan, const std::vector<ShardCandidate>& machines, QString* why) {
    int64_t at = 0;
    for (const ShardPlan::Shard& s : plan.shards) {
        const ShardCandidate& m = machines[size_t(s.owner)];
        if (s.begin != at || s.end <= s.begin) {
            *why = QStringLiteral("shard of %1 is [%2, %3) after %4")
                       .arg(m.name)
                       .arg(s.begin)
                       .arg(s.end)
                       .arg(at);
            return false;
        }
        if (s.begin % kShardAlignment != 0) {
            *why = QStringLiteral("shard of %1 begins at %2").arg(m.name).arg(s.begin);
            return false;
        }
        if (s.bytes != s.values() * plan.bytesPerValue) {
            *why = QStringLiteral("shard of %1 counts %2 bytes").arg(m.name).arg(s.bytes);
            return false;
        }
        if (m.budgetBytes > 0 && s.bytes > m.budgetBytes - m.workerBytes) {
            *why = QStringLiteral("%1 holds %2 bytes beside a worker of %3, of %4")
                       .arg(m.name)
                       .arg(s.bytes)
                       .arg(m.workerBytes)
                       .arg(m.budgetBytes);
            return false;
        }
        at = s.end;
    }
    if (at != plan.values) {
        *why = QStringLiteral("the shards end at %1 of %2 values").arg(at).arg(plan.values);
        return false;
    }
    return true;
}

double shareOf(const ShardPlan& plan, int owner) {
    const ShardPlan::Shard* s = plan.shardOf(owner);
    return s ? double(s->values()) / double(plan.values) : 0;
}

} // namespace

class TestShardPlan : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void equalMachinesHoldEqualShards();
    void aSmallMachineHoldsWhatFitsAndTheOthersTheRest();
    void aMachineThatComputesNothingHoldsWhatTheOthersCannot();
    void fasterLinksHoldLargerShards();
    void aRunTooLargeForTheMachinesIsRefusedWithWhatFits();
    void everyPlanCoversTheValuesOnce();
};

void TestShardPlan::equalMachinesHoldEqualShards() {
    const std::vector<ShardCandidate> three{{QStringLiteral("this machine"), 16 * kGB, 4 * kGB, 0},
                                            {QStringLiteral("laptop"), 16 * kGB, 4 * kGB, 0},
                                            {QStringLiteral("desktop"), 16 * kGB, 4 * kGB, 0}};
    const int64_t values = 494'032'768; // Qwen2.5-0.5B's parameters
    const int64_t adam = shardBytesPerValue(OptimizerKind::AdamW);
    QCOMPARE(adam, 16);
    QCOMPARE(shardBytesPerValue(OptimizerKind::Sgd), 12);
    auto plan = planShards(values, adam, three);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QString why;
    QVERIFY2(wellFormed(*plan, three, &why), qPrintable(why));
    QCOMPARE(plan->shards.size(), size_t(3));
    for (int i = 0; i < 3; ++i)
        QVERIFY2(std::abs(shareOf(*plan, i) - 1.0 / 3) < 1e-5,
                 qPrintable(QString::number(shareOf(*plan, i))));
    QCOMPARE(plan->describe(1),
             QStringLiteral("shard 2 of 3, 2.5 GB (33 % of the trainable values)"));
}

// A 16 GB machine, one with room for a third of the state beside its worker, and a third: the
// small one holds what fits it, and the others share the rest equally.
void TestShardPlan::aSmallMachineHoldsWhatFitsAndTheOthersTheRest() {
    const int64_t values = 600 * 1024 * 1024, bpv = 16; // 9.4 GB of state
    const std::vector<ShardCandidate> machines{{QStringLiteral("big"), 16 * kGB, 2 * kGB, 0},
                                               {QStringLiteral("small"), 3 * kGB, 2 * kGB, 0},
                                               {QStringLiteral("other"), 16 * kGB, 2 * kGB, 0}};
    auto plan = planShards(values, bpv, machines);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QString why;
    QVERIFY2(wellFormed(*plan, machines, &why), qPrintable(why));
    QCOMPARE(plan->shardOf(1)->bytes, 1 * kGB); // all it has beside its worker
    QVERIFY(std::abs(plan->shardOf(0)->values() - plan->shardOf(2)->values()) <= kShardAlignment);
    QVERIFY(plan->shardOf(0)->values() > plan->shardOf(1)->values());
}

// A CPU box left out of the step keeps all of its memory for state; the two machines that
// compute have little beside their workers.
void TestShardPlan::aMachineThatComputesNothingHoldsWhatTheOthersCannot() {
    const int64_t values = 1'000'000'000, bpv = 16; // 14.9 GB
    const std::vector<ShardCandidate> machines{{QStringLiteral("gpu"), 12 * kGB, 10 * kGB, 0},
                                               {QStringLiteral("mac"), 12 * kGB, 9 * kGB, 0},
                                               {QStringLiteral("cpu box"), 24 * kGB, 0, 0}};
    auto plan = planShards(values, bpv, machines);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QString why;
    QVERIFY2(wellFormed(*plan, machines, &why), qPrintable(why));
    QCOMPARE(plan->shardOf(0)->bytes, 2 * kGB);
    QCOMPARE(plan->shardOf(1)->bytes, 3 * kGB);
    QCOMPARE(plan->shardOf(2)->values(), values - (5 * kGB) / bpv);
    QVERIFY2(plan->describe(2).startsWith(QStringLiteral("shard 3 of 3, 9.9 GB (66 %")),
             qPrintable(plan->describe(2)));
    // Without the box the two cannot hold it.
    QVERIFY(!planShards(values, bpv, {machines[0], machines[1]}));
}

// Every link measured: each machine's share follows its link's speed, so the slow link carries
// less of the gradients in and the weights out. One link not measured: equal shares.
void TestShardPlan::fasterLinksHoldLargerShards() {
    std::vector<ShardCandidate> machines{{QStringLiteral("a"), 64 * kGB, kGB, 2e9},
                                         {QStringLiteral("b"), 64 * kGB, kGB, 1e9},
                                         {QStringLiteral("c"), 64 * kGB, kGB, 1e9}};
    const int64_t values = 100'000'000;
    auto plan = planShards(values, 16, machines);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QVERIFY(std::abs(shareOf(*plan, 0) - 0.5) < 1e-4);
    QVERIFY(std::abs(shareOf(*plan, 1) - 0.25) < 1e-4);
    QVERIFY(std::abs(shareOf(*plan, 2) - 0.25) < 1e-4);
    machines[2].linkBytesPerS = 0;
    plan = planShards(values, 16, machines);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    for (int i = 0; i < 3; ++i)
        QVERIFY(std::abs(shareOf(*plan, i) - 1.0 / 3) < 1e-4);
}

// The error names each machine's room and the largest run the machines hold; a run of exactly
// that size is accepted, and one alignment unit more per machine is not.
void TestShardPlan::aRunTooLargeForTheMachinesIsRefusedWithWhatFits() {
    const std::vector<ShardCandidate> machines{
        {QStringLiteral("this machine"), 12 * kGB, 6 * kGB, 0},
        {QStringLiteral("laptop"), 10 * kGB, 6 * kGB, 0}};
    const int64_t values = 1'500'000'000;
    auto refused = planShards(values, 16, machines);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::OutOfMemory);
    const QString m = refused.error().message;
    qInfo("%s", qPrintable(m));
    for (const char* part :
         {"1.50 billion trainable values need 22.4 GB", "16 bytes each", "can hold 10.0 GB of it",
          "this machine 6.0 GB (12.0 GB to train "
          "with, 6.0 GB for its own worker)",
          "laptop 4.0 GB", "up to 671.1 million trainable values", "--lora",
          "choose SGD (12 bytes a value)"})
        QVERIFY2(m.contains(QLatin1String(part)), qPrintable(m));
    const int64_t fits = 10 * kGB / 16;
    QVERIFY(planShards(fits, 16, machines));
    QVERIFY(!planShards(fits + 2 * kShardAlignment, 16, machines));
    // Already on SGD: nothing to gain there.
    refused = planShards(values, shardBytesPerValue(OptimizerKind::Sgd), machines);
    QVERIFY(!refused);
    QVERIFY2(!refused.error().message.contains(QLatin1String("SGD")),
             qPrintable(refused.error().message));
    // A machine that did not say its memory is not held to a limit.
    std::vector<ShardCandidate> unknown = machines;
    unknown[1].budgetBytes = 0;
    QVERIFY(planShards(values, 16, unknown));
}

// Random machines and sizes, with a fixed seed: every accepted plan is well formed, and a plan
// is refused only when the machines' room together falls short.
void TestShardPlan::everyPlanCoversTheValuesOnce() {
    QRandomGenerator rng(20261130);
    int accepted = 0, refused = 0;
    for (int round = 0; round < 2000; ++round) {
        std::vector<ShardCandidate> machines(size_t(1 + rng.bounded(5)));
        int64_t room = 0;
        bool linked = rng.bounded(2) == 0;
        for (size_t i = 0; i < machines.size(); ++i) {
            ShardCandidate& m = machines[i];
            m.name = QStringLiteral("m%1").arg(i);
            m.budgetBytes = int64_t(rng.bounded(1, 4096)) * 1024 * 1024;
            m.workerBytes = rng.bounded(3) == 0 ? 0 : int64_t(rng.bounded(0, 4096)) * 1024 * 1024;
            m.linkBytesPerS = linked ? double(rng.bounded(1, 1000)) * 1e6 : 0;
            room += std::max<int64_t>(0, m.budgetBytes - m.workerBytes) / (16 * kShardAlignment);
        }
        const int64_t values = 1 + int64_t(rng.bounded(1, 1 << 30));
        const int64_t units = (values + kShardAlignment - 1) / kShardAlignment;
        auto plan = planShards(values, 16, machines);
        QCOMPARE(bool(plan), room >= units);
        if (!plan) {
            ++refused;
            continue;
        }
        ++accepted;
        QString why;
        QVERIFY2(wellFormed(*plan, machines, &why), qPrintable(why));
    }
    QVERIFY(accepted > 100 && refused > 100);
}

QTEST_GUILESS_MAIN(TestShardPlan)
#include "test_shardplan.moc"
