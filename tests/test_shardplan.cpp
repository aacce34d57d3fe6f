// The shard plan (engine/shard/shardplan.h): which machine owns which range of a sharded run's
// trainable values, on synthetic machines; and the owners (engine/shard/shardowner.h): a sharded
// step, checkpoint and resume against LibTorch's optimizer over the whole model; the log that
// rebuilds a lost owner (engine/shard/shardlog.h).

#include "engine/coordinator/spilledbytes.h"
#include "engine/modes/fragments.h"
#include "engine/shard/gatheredstate.h"
#include "engine/shard/shardlog.h"
#include "engine/shard/shardowner.h"
#include "engine/shard/shardplan.h"
#include "engine/shard/shardstep.h"
#include "engine/step/blockwiseadam.h"
#include "engine/wire/wiretensors.h"
#include "enginetestutil.h"
#include "hffolder.h"
#include "model/openmodel.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <sys/resource.h>
#include <tuple>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

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
        if (m.budgetBytes > 0 && s.bytes > m.budgetBytes - m.workerBytes - m.keptBytes) {
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
    void aCoordinatorHoldsWhatFitsBesideTheModelItKeeps();
    void theArchiveAJoiningWorkerIsSentWaitsInAFile();
    void fasterLinksHoldLargerShards();
    void theLinksComeFromTheWorkersProbes();
    void aRunTooLargeForTheMachinesIsRefusedWithWhatFits();
    void everyPlanCoversTheValuesOnce();
    void shardedStepsEqualOneOwner_data();
    void shardedStepsEqualOneOwner();
    void resumeOnAnotherMembership_data();
    void resumeOnAnotherMembership();
    void aRangeThatCutsAnEightBitBlockIsRefused();
    void whatDoesNotFitAShardIsRefused();
    void aRangeIsOneRunOfAGradientBundle_data();
    void aRangeIsOneRunOfAGradientBundle();
    void eachOwnersWeightsReachTheirPlaceInAReplica();
    void aLostOwnerIsRebuiltFromTheCheckpointAndTheLog();
    void aDamagedLogEndsTheReplayAtTheLastWholeStep();
    void aRecordTheDiskCannotHoldLeavesTheLogWhole();
    void aStepThroughTheOwnersEqualsTheOneOwnerStep_data();
    void aStepThroughTheOwnersEqualsTheOneOwnerStep();
    void aStreamingRoundStepsItsFragmentOnly();
    void whatAPeerSendsOutOfTurnIsRefused();
    void aLargeRangeIsCheckedToItsLastValue();
    void anOwnerStepsEachSegmentAsItsPartsArrive();
    void aRangeAtATimeGathersTheOneOwnerState_data();
    void aRangeAtATimeGathersTheOneOwnerState();
    void aGatheredStateThatDoesNotAddUpIsRefused();
    void aSpilledStateThatCannotBeReadFailsItsCheckpoint();
    void aRangeIsReadWhereItLies();
};

void TestShardPlan::equalMachinesHoldEqualShards() {
    const std::vector<ShardCandidate> three{{QStringLiteral("this machine"), 16 * kGB, 4 * kGB, 0},
                                            {QStringLiteral("laptop"), 16 * kGB, 4 * kGB, 0},
                                            {QStringLiteral("desktop"), 16 * kGB, 4 * kGB, 0}};
    const int64_t values = 494'032'768; // Qwen2.5-0.5B's parameters
    const int64_t adam = shardBytesPerValue(OptimizerKind::AdamW);
    QCOMPARE(adam, 12);
    QCOMPARE(shardBytesPerValue(OptimizerKind::Sgd), 8);
    auto plan = planShards(values, adam, three);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QString why;
    QVERIFY2(wellFormed(*plan, three, &why), qPrintable(why));
    QCOMPARE(plan->shards.size(), size_t(3));
    for (int i = 0; i < 3; ++i)
        QVERIFY2(std::abs(shareOf(*plan, i) - 1.0 / 3) < 1e-5,
                 qPrintable(QString::number(shareOf(*plan, i))));
    QCOMPARE(plan->describe(1),
             QStringLiteral("shard 2 of 3, 1.8 GB (33 % of the trainable values)"));
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
    // All it has beside its worker, less what a segment's step takes (a million values' sum and
    // temporaries, 16 MB) and what waits on its links meanwhile: the queue's 64 MB and a
    // segment's sum and weights for the other machines, 4 bytes a value for each of three.
    QCOMPARE(shardOwnerStepBytes(values, 3), int64_t(16 + 64 + 12) << 20);
    QCOMPARE(plan->shardOf(1)->bytes, 1 * kGB - (int64_t(16 + 64 + 12) << 20));
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
    // A segment's sum and temporaries, and what waits on the links, on each.
    const int64_t step = int64_t(16 + 64 + 12) << 20;
    QCOMPARE(shardOwnerStepBytes(values, 3), step);
    QCOMPARE(plan->shardOf(0)->bytes, 2 * kGB - step);
    QCOMPARE(plan->shardOf(1)->bytes, 3 * kGB - step);
    QCOMPARE(plan->shardOf(2)->values(), values - (5 * kGB - 2 * step) / bpv);
    QVERIFY2(plan->describe(2).startsWith(QStringLiteral("shard 3 of 3, 10.1 GB (68 %")),
             qPrintable(plan->describe(2)));
    // Without the box the two cannot hold it.
    QVERIFY(!planShards(values, bpv, {machines[0], machines[1]}));
}

// The coordinator keeps the run's model and the archive it sends a joining worker whether or
// not it computes: it holds only what fits beside them, and a refusal says what they take.
void TestShardPlan::aCoordinatorHoldsWhatFitsBesideTheModelItKeeps() {
    const int64_t values = 700'000'000, bpv = 16; // 10.4 GB
    std::vector<ShardCandidate> machines{{QStringLiteral("this machine"), 8 * kGB, 0, 0, 4 * kGB},
                                         {QStringLiteral("holder"), 8 * kGB, 0, 0}};
    auto plan = planShards(values, bpv, machines);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QString why;
    QVERIFY2(wellFormed(*plan, machines, &why), qPrintable(why));
    QVERIFY2(plan->shardOf(0)->bytes <= 4 * kGB, qPrintable(plan->describe(0)));
    QCOMPARE(plan->shardOf(1)->values(), values - plan->shardOf(0)->values());
    machines[0].keptBytes = 6 * kGB;
    auto refused = planShards(values, bpv, machines);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(
                 QLatin1String("this machine 1.9 GB (it computes nothing, 6.0 GB for the run's "
                               "model)")),
             qPrintable(refused.error().message));
}

// Every link measured: each machine's share follows its link's speed, so the slow link carries
// less of the gradients in and the weights out. One link not measured: equal shares.
// The coordinator keeps the model's archive for any worker that joins, whole run long: in a
// file in the run's folder, it takes no room from the coordinator's range (bytesKept()).
void TestShardPlan::theArchiveAJoiningWorkerIsSentWaitsInAFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile left(dir.filePath(QStringLiteral(".model-Ab12Cd"))); // a killed run's
    QVERIFY(left.open(QIODevice::WriteOnly) && left.write("old") == 3);
    left.close();
    const QString folder = dir.filePath(QStringLiteral("llama"));
    hffolder::Spec spec;
    spec.hidden = 64;
    spec.intermediate = 128;
    spec.vocab = 256;
    QVERIFY(hffolder::write(folder, spec));
    const Model llama = openModel(ModelSource::hfFolder(folder), {QString(), false, 5}).value();
    const QByteArray model = llama.archive(true).value();
    auto written = writeModelArchive(llama, true, dir.path());
    QVERIFY2(written, qPrintable(written ? QString() : written.error().message));
    std::shared_ptr<SpilledBytes> archive = *written;
    QVERIFY(archive->spilled());
    QCOMPARE(archive->size(), qint64(model.size()));
    QCOMPARE(archive->bytesKept(), qint64(0));
    const QStringList files =
        QDir(dir.path()).entryList({QStringLiteral(".model-*")}, QDir::Files | QDir::Hidden);
    // Its own file, unnamed where the system allows (Linux): no file is left if the run is
    // killed. The one a killed run left is gone.
    QVERIFY(files.size() <= 1);
    QVERIFY(!files.contains(QStringLiteral(".model-Ab12Cd")));

    // Written to the file as it is made, a weight at a time: the same bytes as archive() makes
    // whole. Each send reads it a part at a time, anywhere, and nothing beyond its end.
    QVERIFY(archive->read(0, model.size()).value() == model);
    QCOMPARE(archive->read(model.size() / 2, 5).value(), model.mid(model.size() / 2, 5));
    QCOMPARE(archive->read(model.size() - 3, 3).value(), model.right(3));
    QVERIFY(!archive->read(model.size() - 3, 4));
    QVERIFY(!archive->read(-1, 2));
    QCOMPARE(archive->inMemory().size(), 0);
    QVERIFY(
        modelFromArchive(archive->read(0, model.size()).value(), QStringLiteral("the archive")));

    archive.reset();
    QVERIFY(QDir(dir.path())
                .entryList({QStringLiteral(".model-*")}, QDir::Files | QDir::Hidden)
                .isEmpty());

    // No folder to write to: in memory, as much as it is.
    archive = writeModelArchive(llama, true, QString()).value();
    QVERIFY(!archive->spilled());
    QCOMPARE(archive->bytesKept(), qint64(model.size()));
    QVERIFY(archive->inMemory() == model);
    QCOMPARE(archive->read(7, 9).value(), model.mid(7, 9));

    // With the layout of the weights only (a base that travels apart), the same.
    const QByteArray layout = llama.archive(false).value();
    archive = writeModelArchive(llama, false, dir.path()).value();
    QVERIFY(archive->spilled());
    QVERIFY(archive->read(0, layout.size()).value() == layout);
    QVERIFY(writeModelArchive(llama, false, QString()).value()->inMemory() == layout);

    // A file that fills (a full disk) leaves the bytes in memory; a writer's own fault is said.
    const auto fullDisk = [](QIODevice& out) -> Expected<qint64> {
        if (out.write("abc", 3) != 3 || qobject_cast<QFile*>(&out))
            return makeError(ErrorCode::Io, QStringLiteral("no space left on device"));
        return 3;
    };
    auto kept = SpilledBytes::write(dir.path(), QStringLiteral(".range-"),
                                    QStringLiteral("a range"), fullDisk);
    QVERIFY(kept && !(*kept)->spilled());
    QCOMPARE((*kept)->all().value(), QByteArray("abc"));
    QVERIFY(QDir(dir.path())
                .entryList({QStringLiteral(".range-*")}, QDir::Files | QDir::Hidden)
                .isEmpty());
    auto faulty = SpilledBytes::write(
        dir.path(), QStringLiteral(".range-"), QStringLiteral("a range"),
        [](QIODevice&) -> Expected<qint64> {
            return makeError(ErrorCode::Corrupt, QStringLiteral("a state that names no "
                                                                "parameter"));
        });
    QVERIFY(!faulty && faulty.error().message.contains(QStringLiteral("names no parameter")));
}

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

// A run's links come from the handshakes' probes of its workers: each worker's its own, and this
// machine's, through which each was timed, the fastest of them. One the probe could only floor
// (faster than it times) or did not measure, or links within twice each other's rate, leave the
// ranges to memory alone.
void TestShardPlan::theLinksComeFromTheWorkersProbes() {
    const std::vector<LinkFacts> timed{{QStringLiteral("desk"), 117e6, 0.3, false},
                                       {QStringLiteral("laptop"), 5e6, 4, false}};
    const std::vector<double> speeds = shardLinkSpeeds(timed);
    QCOMPARE(speeds, (std::vector<double>{117e6, 117e6, 5e6}));
    std::vector<ShardCandidate> machines;
    for (double s : speeds)
        machines.push_back({QStringLiteral("m"), 64 * kGB, kGB, s});
    const auto plan = planShards(100'000'000, 16, machines);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QVERIFY(std::abs(shareOf(*plan, 2) - 5.0 / 239) < 1e-4);
    QVERIFY(std::abs(shareOf(*plan, 0) - shareOf(*plan, 1)) < 1e-4);
    // Links within twice each other's rate are equal ones as a probe measures them.
    std::vector<LinkFacts> close = timed;
    close[1].bytesPerSecond = 60e6;
    QCOMPARE(shardLinkSpeeds(close), std::vector<double>(3, 0.0));
    close[1].bytesPerSecond = 58e6;
    QCOMPARE(shardLinkSpeeds(close), (std::vector<double>{117e6, 117e6, 58e6}));
    std::vector<LinkFacts> floored = timed;
    floored[0].atLeast = true;
    QCOMPARE(shardLinkSpeeds(floored), std::vector<double>(3, 0.0));
    std::vector<LinkFacts> unmeasured = timed;
    unmeasured[1].bytesPerSecond = 0;
    QCOMPARE(shardLinkSpeeds(unmeasured), std::vector<double>(3, 0.0));
    QCOMPARE(shardLinkSpeeds({}), std::vector<double>{0.0});
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
         {"1.50 billion trainable values need 22.4 GB", "16 bytes each", "can hold 9.8 GB of it",
          "this machine 5.9 GB (12.0 GB to train "
          "with, 6.0 GB for its own worker)",
          "laptop 3.9 GB", "up to 659.6 million trainable values", "--lora",
          "choose SGD (8 bytes a value)"})
        QVERIFY2(m.contains(QLatin1String(part)), qPrintable(m));
    // Each holds a segment's step and what waits on its links beside its range.
    const int64_t fits = (10 * kGB - 2 * shardOwnerStepBytes(values, 2)) / 16;
    QCOMPARE(shardOwnerStepBytes(values, 2), int64_t(16 + 64 + 8) << 20);
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

    // Each owner also holds every computing machine's gradients for its range while a step adds
    // them: two machines sending fp32 take 8 bytes a value more, which the plan and its error
    // count.
    QCOMPARE(shardArrivingBytesPerValue(2, DType::F32), 8);
    QCOMPARE(shardArrivingBytesPerValue(1, DType::BF16), 2);
    QCOMPARE(shardArrivingBytesPerValue(0, DType::F32), 0);
    const int64_t arriving = shardArrivingBytesPerValue(2, DType::F32);
    refused = planShards(values, 16, machines, arriving);
    QVERIFY(!refused);
    for (const char* part :
         {"need 33.5 GB", "24 bytes each", "and 8 for the computing machines' gradients",
          "up to 439.7 million trainable values", "choose SGD (16 bytes a value)"})
        QVERIFY2(refused.error().message.contains(QLatin1String(part)),
                 qPrintable(refused.error().message));
    QVERIFY(planShards(fits, 16, machines));
    QVERIFY(!planShards(fits, 16, machines, arriving));
    const int64_t unit = 24 * kShardAlignment;
    const int64_t step = shardOwnerStepBytes(values, 2);
    const int64_t fitsArriving =
        ((6 * kGB - step) / unit + (4 * kGB - step) / unit) * kShardAlignment;
    auto plan = planShards(fitsArriving, 16, machines, arriving);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QVERIFY(!planShards(fitsArriving + kShardAlignment, 16, machines, arriving));
    QCOMPARE(plan->bytesPerValue, 24);
    for (const ShardPlan::Shard& s : plan->shards)
        QCOMPARE(s.bytes, s.values() * 24);

    // 8-bit AdamW's owners keep two fp32 scales a block of 256 values beside each value's 6
    // bytes: 32 bytes more each kShardAlignment values, in what fits and in each shard's bytes.
    const int64_t eight = shardBytesPerValue(OptimizerKind::AdamW8bit);
    const int64_t scales = shardBlockBytesPerUnit(OptimizerKind::AdamW8bit);
    QCOMPARE(scales, int64_t(32));
    QCOMPARE(shardBlockBytesPerUnit(OptimizerKind::AdamW), int64_t(0));
    const int64_t unit8 = (eight + 2) * kShardAlignment + scales;
    const int64_t fits8 = ((6 * kGB - step) / unit8 + (4 * kGB - step) / unit8) * kShardAlignment;
    plan = planShards(fits8, eight, machines, 2, scales);
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    for (const ShardPlan::Shard& s : plan->shards)
        QCOMPARE(s.bytes, s.values() * 8 + s.values() / kShardAlignment * scales);
    QVERIFY(planShards(fits8 + kShardAlignment, eight, machines, 2));
    refused = planShards(fits8 + kShardAlignment, eight, machines, 2, scales);
    QVERIFY(!refused);
    // Just too large: the refusal says by how much, to the value.
    QVERIFY2(refused.error().message.contains(
                 QStringLiteral("up to %1 (1,024 fewer than the run has")
                     .arg(QLocale(QLocale::English).toString(qlonglong(fits8)))),
             qPrintable(refused.error().message));
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
            // Beside its range, a segment's step (its sum and temporaries) and the sends that
            // wait on the links: the largest range that fits with them, counted down.
            const int64_t spare = std::max<int64_t>(0, m.budgetBytes - m.workerBytes);
            int64_t units = spare / (16 * kShardAlignment);
            while (units > 0 &&
                   units * 16 * kShardAlignment +
                           shardOwnerStepBytes(units * kShardAlignment, int64_t(machines.size())) >
                       spare)
                --units;
            room += units;
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

namespace {

// A model's trainable tensors: odd sizes, so that ranges begin and end inside them.
std::vector<at::Tensor> someParams() {
    at::manual_seed(7);
    std::vector<at::Tensor> p;
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{64, 33}, {33}, {17, 5, 9}, {1}, {700}, {2048}})
        p.push_back(at::randn(shape));
    return p;
}

std::vector<at::Tensor> clones(const std::vector<at::Tensor>& v) {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : v)
        out.push_back(t.clone());
    return out;
}

// Step `step`'s gradients from two workers that computed 24 and 40 of its 64 samples; on the
// third step neither has one for parameter 3.
std::vector<std::vector<at::Tensor>> gradsOf(const std::vector<at::Tensor>& params, int step) {
    at::manual_seed(uint64_t(100 + step));
    std::vector<std::vector<at::Tensor>> out(2);
    for (auto& g : out)
        for (size_t i = 0; i < params.size(); ++i)
            g.push_back(step == 2 && i == 3 ? at::Tensor() : at::randn(params[i].sizes()));
    return out;
}
constexpr double kWeights[2] = {24.0 / 64, 40.0 / 64};
double lrOf(int step) {
    return 0.01 / (1 + step);
}

// What the coordinator does with the whole model (modes/sync.cpp's combineResults).
void oneOwnerStep(Optimizer& opt, const std::vector<at::Tensor>& params, int step) {
    const auto g = gradsOf(params, step);
    std::vector<at::Tensor> sum(params.size());
    for (int w = 0; w < 2; ++w)
        for (size_t i = 0; i < params.size(); ++i) {
            if (!g[w][i].defined())
                continue;
            if (!sum[i].defined())
                sum[i] = g[w][i].mul(kWeights[w]);
            else
                sum[i].add_(g[w][i], kWeights[w]);
        }
    opt.step(sum, lrOf(step));
}

void shardedStep(std::vector<ShardOwner>& owners, const std::vector<at::Tensor>& shapes, int step) {
    const auto g = gradsOf(shapes, step);
    for (ShardOwner& o : owners) {
        for (int w = 0; w < 2; ++w)
            QVERIFY(o.add(o.cut(g[w]), kWeights[w]).ok());
        o.apply(lrOf(step));
    }
}

std::vector<ShardOwner> ownersOver(const std::vector<at::Tensor>& params,
                                   const std::vector<int64_t>& bounds, const OptimizerConfig& cfg,
                                   int64_t segmentValues = 0) {
    std::vector<ShardOwner> owners;
    for (size_t i = 0; i + 1 < bounds.size(); ++i)
        owners.push_back(ShardOwner::fromParams(ShardLayout::of(params), bounds[i], bounds[i + 1],
                                                params, cfg, segmentValues));
    return owners;
}

std::vector<const ShardOwner*> pointers(const std::vector<ShardOwner>& owners) {
    std::vector<const ShardOwner*> out;
    for (const ShardOwner& o : owners)
        out.push_back(&o);
    return out;
}

// Two Adam owners of `params`, of its first 1,000 values and of the rest, after one step.
std::vector<ShardOwner> twoOwnersAfterAStep(const std::vector<at::Tensor>& params) {
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::Adam;
    std::vector<ShardOwner> owners =
        ownersOver(params, {0, 1000, ShardLayout::of(params).values}, cfg);
    shardedStep(owners, params, 0);
    return owners;
}

// Equal to fp32 rounding: each value takes the same arithmetic, but a kernel may vectorise a
// range's edges differently from the middle of a tensor.
bool same(const at::Tensor& a, const at::Tensor& b, QString* why) {
    if (!a.sizes().equals(b.sizes())) {
        *why = QStringLiteral("shapes differ");
        return false;
    }
    const double diff = (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
    const double scale = std::max(1.0, b.abs().max().item<double>());
    *why = QStringLiteral("differs by %1 at scale %2").arg(diff).arg(scale);
    return diff <= 1e-6 * scale;
}

void compareWithOneOwner(const std::vector<ShardOwner>& owners, const std::vector<at::Tensor>& one,
                         const Optimizer& oneOpt) {
    const auto masters = ShardOwner::gatherMasters(pointers(owners));
    QVERIFY2(masters, qPrintable(masters ? QString() : masters.error().message));
    QCOMPARE(masters->size(), one.size());
    QString why;
    for (size_t i = 0; i < one.size(); ++i)
        QVERIFY2(same((*masters)[i], one[i], &why), qPrintable(QString::number(i) + why));
    const auto state = ShardOwner::gatherState(pointers(owners));
    QVERIFY2(state, qPrintable(state ? QString() : state.error().message));
    std::map<std::string, at::Tensor> expected;
    for (const auto& [name, t] : oneOpt.stateTensors())
        expected[name] = t;
    QCOMPARE(state->size(), expected.size());
    for (const auto& [name, t] : *state) {
        QVERIFY2(expected.count(name), name.c_str());
        QVERIFY2(same(t, expected[name], &why), qPrintable(QString::fromStdString(name) + why));
    }
}

} // namespace

void TestShardPlan::shardedStepsEqualOneOwner_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("split");
    const std::pair<const char*, OptimizerKind> kinds[] = {
        {"sgd", OptimizerKind::Sgd},         {"adam", OptimizerKind::Adam},
        {"adamw", OptimizerKind::AdamW},     {"rmsprop", OptimizerKind::RmsProp},
        {"adagrad", OptimizerKind::Adagrad}, {"adamw8bit", OptimizerKind::AdamW8bit},
    };
    for (const auto& [name, kind] : kinds)
        for (const char* split : {"one owner", "inside tensors", "planned", "in segments"})
            QTest::addRow("%s, %s", name, split) << int(kind) << QString::fromLatin1(split);
}

// The same gradients, weighted by each worker's samples, through one owner of the whole model
// (LibTorch's optimizer, as the coordinator runs it) and through owners of ranges: the same
// weights and the same optimizer state after six steps, one of them with a parameter that has
// no gradient. 8-bit AdamW's blocks lie over the flat order (BlockwiseAdamW), so its ranges and
// segments begin where a block does, as a plan's and shardSegmentValues()'s do; each owner's
// pieces then step the one-owner run's blocks, with the same scales and codes.
void TestShardPlan::shardedStepsEqualOneOwner() {
    QFETCH(int, kind);
    QFETCH(QString, split);
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind(kind);
    cfg.weightDecay = 0.01;
    cfg.nesterov = cfg.kind == OptimizerKind::Sgd;
    const std::vector<at::Tensor> params = someParams();
    const int64_t values = ShardLayout::of(params).values;
    std::vector<int64_t> bounds{0, values};
    const bool blocks = cfg.kind == OptimizerKind::AdamW8bit;
    if (split == QLatin1String("inside tensors"))
        bounds = blocks ? std::vector<int64_t>{0, 1024, 2304, 3584, values}
                        : std::vector<int64_t>{0, 1000, 2112 + 33 + 100, 2112 + 33 + 765 + 1 + 3,
                                               values};
    // Two ranges, each stepped in segments of 512 values: pieces of tensors cut where a
    // segment ends.
    int64_t segment = 0;
    if (split == QLatin1String("in segments")) {
        bounds = {0, 1024, values};
        segment = 512;
    }
    if (split == QLatin1String("planned")) {
        const auto plan = planShards(values, shardBytesPerValue(cfg.kind),
                                     {{QStringLiteral("a"), 0, 0, 1e9},
                                      {QStringLiteral("b"), 0, 0, 2e9},
                                      {QStringLiteral("c"), 0, 0, 1e9}});
        QVERIFY(plan.ok());
        bounds = {0};
        for (const ShardPlan::Shard& s : plan->shards)
            bounds.push_back(s.end);
        QCOMPARE(bounds.size(), size_t(4));
    }
    std::vector<at::Tensor> one = clones(params);
    Optimizer oneOpt(cfg, one);
    std::vector<ShardOwner> owners = ownersOver(params, bounds, cfg, segment);
    if (segment > 0) // the first range is half of the last tensor, in two pieces
        QCOMPARE(owners.front().pieces().size(), size_t(2));
    for (int step = 0; step < 6; ++step) {
        oneOwnerStep(oneOpt, one, step);
        shardedStep(owners, params, step);
        if (QTest::currentTestFailed())
            return;
    }
    QVERIFY((one[0] - params[0]).abs().max().item<double>() > 0); // it trained
    compareWithOneOwner(owners, one, oneOpt);
}

namespace {

// Owners over `bounds` cut from `state` written to a checkpoint and opened (openCheckpoint), as a
// sharded run resumes: each holds what `want` (cut from the state in memory) holds, and over all
// of them each value of the state is read once from the file, and no tensor whole.
void checkCutFromFile(const std::vector<at::Tensor>& masters, const NamedTensors& state,
                      int64_t steps, const OptimizerConfig& cfg, const std::vector<int64_t>& bounds,
                      const std::vector<ShardOwner>& want) {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("state.tandem"));
    TensorFile file;
    qint64 stateBytes = 0;
    for (const auto& [name, t] : state) {
        file.lazy << toLazy(name, t);
        if (name.rfind("step.", 0) != 0)
            stateBytes += qint64(t.nbytes());
    }
    QVERIFY(writeCheckpoint(path, file).ok());
    auto opened = openCheckpoint(path);
    QVERIFY(opened.ok());
    qint64 read = 0;
    bool whole = false;
    for (LazyTensor& l : opened->lazy) {
        const auto part = l.part;
        const bool counted = !l.name.startsWith(QStringLiteral("step."));
        l.part = [&read, part, counted](qint64 at, qint64 n) {
            read += counted ? n : 0;
            return part(at, n);
        };
        l.bytes = [&whole] {
            whole = true;
            return QByteArray();
        };
    }
    const StateParts parts = StateParts::of(opened->lazy);
    std::vector<ShardOwner> fromFile = ownersOver(masters, bounds, cfg);
    QCOMPARE(fromFile.size(), want.size());
    for (size_t k = 0; k < fromFile.size(); ++k) {
        const Status st = fromFile[k].restore(steps, parts);
        QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
        QVERIFY(fromFile[k].rangeStateBytes() == want[k].rangeStateBytes());
    }
    QCOMPARE(read, stateBytes);
    QVERIFY(!whole);
    // A part outside its tensor is refused, from the file and from memory alike.
    QVERIFY(!readLazyPart(opened->lazy.front(), 1, state.front().second.numel()));
    QVERIFY(!StateParts::of(state).entries.front().read(-1, 1));
}

} // namespace

void TestShardPlan::resumeOnAnotherMembership_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("adam") << int(OptimizerKind::Adam);
    QTest::newRow("adamw8bit") << int(OptimizerKind::AdamW8bit);
}

// A checkpoint of two owners' state, in the one-owner run's names, resumes on three owners with
// other ranges (their state and weights sent as bytes), and on one machine's optimizer: both end
// where six steps without a break do. 8-bit AdamW's block scales are cut by block.
void TestShardPlan::resumeOnAnotherMembership() {
    QFETCH(int, kind);
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind(kind);
    const std::vector<at::Tensor> params = someParams();
    const int64_t values = ShardLayout::of(params).values;
    std::vector<at::Tensor> one = clones(params);
    Optimizer oneOpt(cfg, one);
    std::vector<ShardOwner> two = ownersOver(params, {0, 3072, values}, cfg);
    for (int step = 0; step < 3; ++step) {
        oneOwnerStep(oneOpt, one, step);
        shardedStep(two, params, step);
    }
    const auto masters = ShardOwner::gatherMasters(pointers(two));
    const auto state = ShardOwner::gatherState(pointers(two));
    QVERIFY(masters.ok() && state.ok());
    const int64_t steps = two.front().stepCount();
    QCOMPARE(steps, int64_t(3));

    // The new owners start from the untrained weights: the trained ones come with the state.
    std::vector<ShardOwner> three = ownersOver(params, {0, 1024, 2048, values}, cfg);
    std::vector<ShardOwner> cutHere = ownersOver(*masters, {0, 1024, 2048, values}, cfg);
    for (size_t k = 0; k < three.size(); ++k) {
        // Each range's part is cut where the checkpoint is and travels to its owner as bytes,
        // with its fp32 weights.
        const Status cut = cutHere[k].restore(steps, *state);
        QVERIFY2(cut, qPrintable(cut ? QString() : cut.error().message));
        const Status st = three[k].restoreRange(steps, cutHere[k].rangeStateBytes());
        QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
    }
    // Cut from a checkpoint's file instead, each range reads its own part of each tensor: the
    // same state, and each value read once over all the ranges, none whole.
    checkCutFromFile(*masters, *state, steps, cfg, {0, 1024, 2048, values}, cutHere);
    if (QTest::currentTestFailed())
        return;
    std::vector<at::Tensor> alone = clones(*masters);
    Optimizer aloneOpt(cfg, alone);
    QList<TensorRecord> records;
    for (const auto& [name, t] : *state)
        records << toRecord(name, t);
    const Status st = aloneOpt.restore(steps, records);
    QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
    for (int step = 3; step < 6; ++step) {
        oneOwnerStep(oneOpt, one, step);
        oneOwnerStep(aloneOpt, alone, step);
        shardedStep(three, params, step);
    }
    compareWithOneOwner(three, one, oneOpt);
    QString why;
    for (size_t i = 0; i < one.size(); ++i)
        QVERIFY2(same(alone[i], one[i], &why), qPrintable(why));
}

// 8-bit AdamW keeps a scale for each block of 256 values of the flat order: every segment a range
// is stepped in is whole blocks, and owners whose ranges cut a block (which no plan makes, and a
// setup refuses) step its halves with scales of their own, which cannot be gathered as the
// one-owner run's state.
void TestShardPlan::aRangeThatCutsAnEightBitBlockIsRefused() {
    for (int64_t range : {int64_t(1), int64_t(5000), int64_t(40'000), int64_t(123'457),
                          int64_t(9'000'001), int64_t(1) << 30})
        QCOMPARE(shardSegmentValues(range) % BlockwiseAdamW::kBlock, int64_t(0));
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::AdamW8bit;
    const std::vector<at::Tensor> params = someParams();
    std::vector<ShardOwner> owners =
        ownersOver(params, {0, 1000, ShardLayout::of(params).values}, cfg);
    shardedStep(owners, params, 0);
    const auto state = ShardOwner::gatherState(pointers(owners));
    QVERIFY(!state.ok());
    QVERIFY2(state.error().message.contains(QStringLiteral("exp_avg_absmax")),
             qPrintable(state.error().message));
    GatheredState gathered(ShardLayout::of(params));
    for (const ShardOwner& o : owners)
        QVERIFY(gathered.add(o.begin(), o.end(), 1, o.rangeStateBytes(), nullptr).ok());
    QVERIFY(!gathered.take().ok());
    // A run is never set up on such ranges; a plan's are whole blocks.
    const int64_t values = ShardLayout::of(params).values;
    const Status cut = checkShardEnds({1000, values}, 2, values, OptimizerKind::AdamW8bit);
    QVERIFY(!cut);
    QVERIFY2(cut.error().message.contains(QStringLiteral("inside one of 8-bit AdamW's blocks")),
             qPrintable(cut.error().message));
    QVERIFY(checkShardEnds({1000, values}, 2, values, OptimizerKind::AdamW));
    QVERIFY(checkShardEnds({1024, values}, 2, values, OptimizerKind::AdamW8bit));
    QVERIFY(!checkShardEnds({1024, values - 1}, 2, values, OptimizerKind::AdamW8bit));
}

// What a peer sends an owner is checked before it is added: the wrong number of pieces, a piece
// of the wrong size or not of floating point, values or a weight that are not finite, a weight
// that is negative. A set of
// owners that leaves values without one, or holds some twice, cannot be gathered.
void TestShardPlan::whatDoesNotFitAShardIsRefused() {
    OptimizerConfig cfg;
    const std::vector<at::Tensor> params = someParams();
    const int64_t values = ShardLayout::of(params).values;
    std::vector<ShardOwner> owners = ownersOver(params, {0, 2120, values}, cfg);
    ShardOwner& o = owners.front();
    QCOMPARE(o.pieces().size(), size_t(2)); // all of the first tensor, part of the second
    const std::vector<at::Tensor> good = o.cut(gradsOf(params, 0)[0]);
    QVERIFY(o.add(good, 0.5).ok());
    std::vector<at::Tensor> bad = good;
    bad.pop_back();
    QVERIFY(!o.add(bad, 0.5).ok());
    bad = good;
    bad[1] = at::zeros({good[1].numel() + 1});
    const Status tooLong = o.add(bad, 0.5);
    QVERIFY(!tooLong.ok());
    QVERIFY2(tooLong.error().message.contains(QStringLiteral("not %1").arg(good[1].numel())),
             qPrintable(tooLong.error().message));
    bad[1] = at::zeros({good[1].numel()}, at::kLong);
    QVERIFY(!o.add(bad, 0.5).ok());
    QVERIFY(!o.add(good, -1).ok());
    std::vector<at::Tensor> nan = clones(good);
    nan[0][3] = std::numeric_limits<float>::quiet_NaN();
    QVERIFY(!o.add(nan, 0.5));
    nan[0][3] = std::numeric_limits<float>::infinity();
    QVERIFY(!o.add(nan, 0.5));
    QVERIFY(!o.add(good, std::nan("")).ok());
    QCOMPARE(o.added(), 1);
    const at::Tensor before = o.masters().clone();
    o.apply(0.1);
    QVERIFY(!at::equal(before, o.masters()));

    const auto gap = ShardOwner::gatherMasters({&owners.back()});
    QVERIFY(!gap.ok());
    const auto twice = ShardOwner::gatherState({&owners.front(), &owners.front(), &owners.back()});
    QVERIFY(!twice.ok());
    QVERIFY(ShardOwner::gatherMasters(pointers(owners)).ok());
}

void TestShardPlan::aRangeIsOneRunOfAGradientBundle_data() {
    QTest::addColumn<int>("wire");
    QTest::newRow("fp32") << int(WireDtype::Fp32);
    QTest::newRow("bf16") << int(WireDtype::Bf16);
    QTest::newRow("fp16") << int(WireDtype::Fp16);
}

// A worker's gradient bundle, filled as a backward pass fills it, holds each owner's range as one
// run of bytes: added as they are, in the wire's dtype, they give the sum the owner's own cut of
// the same gradients (rounded to that dtype) gives, value for value.
void TestShardPlan::aRangeIsOneRunOfAGradientBundle() {
    QFETCH(int, wire);
    const DType dtype = storageDtype(WireDtype(wire));
    const std::vector<at::Tensor> params = someParams();
    std::vector<std::string> names;
    for (size_t i = 0; i < params.size(); ++i)
        names.push_back("p" + std::to_string(i));
    const ModelLayout layout = ModelLayout::of(names, params, {}, {});
    const std::vector<at::Tensor> grads = gradsOf(params, 0)[0];
    GradientBundle bundle(layout, dtype);
    const QByteArray bytes = bundle.begin();
    for (size_t k = params.size(); k-- > 0;)
        bundle.add(k, grads[k]);
    QCOMPARE(bundle.ready(), bundle.size());
    const int64_t values = ShardLayout::of(params).values;
    QCOMPARE(bundle.size(), values * dtypeSize(dtype));
    std::vector<at::Tensor> rounded;
    for (const at::Tensor& g : grads)
        rounded.push_back(g.to(scalarTypeOf(dtype)).to(at::kFloat));
    std::vector<ShardOwner> fromWire = ownersOver(params, {0, 1000, 2900, values}, {});
    std::vector<ShardOwner> fromCut = ownersOver(params, {0, 1000, 2900, values}, {});
    for (size_t o = 0; o < fromWire.size(); ++o) {
        const auto [at, size] = fromWire[o].bundleBytes(dtype);
        const Status st = fromWire[o].addWire(bytes.mid(at, size), dtype, 0.25);
        QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
        QVERIFY(fromCut[o].add(fromCut[o].cut(rounded), 0.25));
        for (size_t p = 0; p < fromWire[o].sum().size(); ++p)
            QVERIFY2(at::equal(fromWire[o].sum()[p], fromCut[o].sum()[p]),
                     qPrintable(QStringLiteral("owner %1, piece %2").arg(o).arg(p)));
    }
    QVERIFY(!fromWire[1].addWire(bytes.mid(0, 10), dtype, 0.25));
}

// After a step, each owner packs its range's weights in the wire's dtype; a worker that writes
// every owner's into its replica holds the whole model as the owners have it, rounded to that
// dtype. Bytes of another size are refused.
void TestShardPlan::eachOwnersWeightsReachTheirPlaceInAReplica() {
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    std::vector<ShardOwner> owners = ownersOver(params, {0, 1000, 2900, layout.values}, {});
    shardedStep(owners, params, 0);
    const std::vector<at::Tensor> trained = *ShardOwner::gatherMasters(pointers(owners));
    for (const DType wire : {DType::F32, DType::BF16}) {
        std::vector<at::Tensor> replica;
        for (const at::Tensor& p : params)
            replica.push_back(at::zeros_like(p, at::kBFloat16));
        for (const ShardOwner& o : owners) {
            const QByteArray bytes = o.packMasters(wire);
            QCOMPARE(qint64(bytes.size()), o.bundleBytes(wire).second);
            const Status st = writeRange(layout, o.begin(), o.end(), bytes, wire, replica);
            QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
        }
        for (size_t i = 0; i < params.size(); ++i)
            QVERIFY(at::equal(replica[i], trained[i].to(at::kBFloat16)));
    }
    std::vector<at::Tensor> replica = clones(params);
    QVERIFY(!writeRange(layout, 0, 1000, QByteArray(10, '\0'), DType::F32, replica));
}

namespace {

// The second of two owners, [1500, values), steps in segments of 400 values; the coordinator logs
// each segment's sum before it is stepped, from step 1 on, with the range's state after step 0 as
// the log's base. Step 2 has no gradient for parameter 3 (gradsOf).
struct LoggedRun {
    std::unique_ptr<ShardOwner> owner;
    ShardLayout layout;
    OptimizerConfig cfg;
    QString log;
    std::vector<qint64> stepEnds;  // the log's size after its header and after each step
    std::vector<QByteArray> after; // the range's state (rangeStateBytes) after each step
};

void stepLogged(LoggedRun& run, int step, ShardLog* log) {
    ShardOwner& o = *run.owner;
    const auto g = gradsOf(someParams(), step);
    for (int w = 0; w < 2; ++w)
        QVERIFY(o.add(o.cut(g[w]), kWeights[w]).ok());
    int64_t from = 0;
    for (int64_t to : o.segmentEnds()) {
        if (log) {
            const Status st = log->append(ShardLog::spanOf(o, step, from, to, lrOf(step)));
            QVERIFY2(st.ok(), qPrintable(st ? QString() : st.error().message));
        }
        o.applySpan(from, to, lrOf(step));
        from = to;
    }
    run.after.push_back(o.rangeStateBytes());
}

void runLogged(LoggedRun& run, const QString& log) {
    run.cfg.kind = OptimizerKind::Adam;
    const std::vector<at::Tensor> params = someParams();
    run.layout = ShardLayout::of(params);
    run.owner = std::make_unique<ShardOwner>(
        ShardOwner::fromParams(run.layout, 1500, run.layout.values, params, run.cfg, 400));
    QVERIFY(run.owner->segmentEnds().size() > 3);
    run.log = log;
    stepLogged(run, 0, nullptr);
    auto backup = ShardLog::create(log, *run.owner, 1, 1, run.after.back());
    QVERIFY2(backup, qPrintable(backup ? QString() : backup.error().message));
    run.stepEnds.push_back(QFileInfo(log).size());
    for (int step = 1; step < 6; ++step) {
        stepLogged(run, step, backup->get());
        run.stepEnds.push_back(QFileInfo(log).size());
    }
    QCOMPARE((*backup)->lastWholeStep(), int64_t(5));
    QCOMPARE((*backup)->bytes(), QFileInfo(log).size() - run.stepEnds.front());
}

// Whether `o` holds, bit for bit, the state `want` (rangeStateBytes) names.
bool sameState(const ShardOwner& o, const QByteArray& want) {
    return o.rangeStateBytes() == want;
}

} // namespace

// The owner is lost after six steps: from the log's base (its state after the first) and the five
// logged steps, each a segment at a time and one of them without a gradient for a parameter, its
// range comes back with the same weights and optimizer state, bit for bit; and as it was after
// any step between. A step the log does not hold whole is refused, naming it.
void TestShardPlan::aLostOwnerIsRebuiltFromTheCheckpointAndTheLog() {
    QTemporaryDir dir;
    LoggedRun run;
    runLogged(run, dir.filePath(QStringLiteral("range-2.log")));
    if (QTest::currentTestFailed())
        return;
    for (int through = 0; through < 6; ++through) {
        auto back = ShardLog::rebuild(run.log, run.layout, run.cfg, through);
        QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
        QCOMPARE((*back)->stepCount(), int64_t(through + 1));
        QVERIFY2(sameState(**back, run.after[size_t(through)]),
                 qPrintable(QString::number(through)));
    }
    auto ahead = ShardLog::rebuild(run.log, run.layout, run.cfg, 6);
    QVERIFY(!ahead);
    QVERIFY2(ahead.error().message.contains(QStringLiteral("through 6, not through 7")),
             qPrintable(ahead.error().message));
    // Another run's layout cuts the range otherwise: refused.
    std::vector<at::Tensor> other = someParams();
    other.push_back(at::zeros({10}));
    QVERIFY(!ShardLog::rebuild(run.log, ShardLayout::of(other), run.cfg, 5));
}

// A log cut short inside its last step, or with a byte of a record changed, gives back the steps
// before; a span that does not follow the last, is not a segment or does not fit is refused and
// leaves the log as it was.
void TestShardPlan::aDamagedLogEndsTheReplayAtTheLastWholeStep() {
    QTemporaryDir dir;
    LoggedRun run;
    runLogged(run, dir.filePath(QStringLiteral("range-2.log")));
    if (QTest::currentTestFailed())
        return;
    QFile f(run.log);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray all = f.readAll();
    f.close();
    const auto& ends = run.stepEnds;
    QCOMPARE(ends.size(), size_t(6));
    QCOMPARE(qint64(all.size()), ends.back());
    const auto write = [&](const QByteArray& bytes) {
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(f.write(bytes), qint64(bytes.size()));
        f.close();
    };
    write(all.left(all.size() - 10));
    QVERIFY(!ShardLog::rebuild(run.log, run.layout, run.cfg, 5));
    auto four = ShardLog::rebuild(run.log, run.layout, run.cfg, 4);
    QVERIFY(four && sameState(**four, run.after[4]));

    // A byte in the middle of step 3's records changed.
    QByteArray damaged = all;
    const qint64 mid = (ends[2] + ends[3]) / 2;
    damaged[mid] = char(damaged[mid] ^ 0x10);
    write(damaged);
    QVERIFY(!ShardLog::rebuild(run.log, run.layout, run.cfg, 3));
    auto two = ShardLog::rebuild(run.log, run.layout, run.cfg, 2);
    QVERIFY(two && sameState(**two, run.after[2]));
    // The header's base damaged: nothing comes back.
    QByteArray header = all;
    header[ends[0] / 2] = char(header[ends[0] / 2] ^ 0x01);
    write(header);
    QVERIFY(!ShardLog::rebuild(run.log, run.layout, run.cfg, 0));

    // Spans out of order, off a segment's end, or whose sums do not fit.
    const QString path = dir.filePath(QStringLiteral("fresh.log"));
    auto log = ShardLog::create(path, *run.owner, 6, 6, run.after.back());
    QVERIFY(log);
    // A base written as it is made (a setup's, never held as bytes) makes the same file as its
    // bytes.
    const QString made = dir.filePath(QStringLiteral("made.log"));
    QVERIFY(ShardLog::create(made, run.layout, run.owner->begin(), run.owner->end(), 6, 6,
                             run.owner->rangeState()));
    const auto contents = [](const QString& p) {
        QFile f(p);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QString given = dir.filePath(QStringLiteral("given.log"));
    QVERIFY(ShardLog::create(given, run.layout, run.owner->begin(), run.owner->end(), 6, 6,
                             run.owner->rangeStateBytes()));
    const QByteArray fromBytes = contents(given);
    QVERIFY(!fromBytes.isEmpty() && contents(made) == fromBytes);
    const int64_t e0 = run.owner->segmentEnds()[0];
    const QByteArray present(1, '\1');
    const auto span = [&](int64_t step, int64_t from, int64_t to) {
        ShardLog::Span s{step, from, to, 0.1, {}, {}};
        for (const ShardLayout::Piece& p : run.owner->pieces())
            if (p.at >= from && p.at < to) {
                s.present.append('\1');
                s.values.append(QByteArray(p.values * 4, '\0'));
            }
        return s;
    };
    const qint64 before = QFileInfo(path).size();
    QVERIFY(!(*log)->append(span(7, 0, e0)));     // step 7 before step 6
    QVERIFY(!(*log)->append(span(6, 0, e0 - 1))); // not a segment's end
    ShardLog::Span shortSums = span(6, 0, e0);
    shortSums.values.chop(4);
    QVERIFY(!(*log)->append(shortSums));
    QCOMPARE(QFileInfo(path).size(), before);
    QVERIFY((*log)->append(span(6, 0, e0)).ok());
    QVERIFY(!(*log)->append(span(6, 0, e0))); // the same segment twice
    QCOMPARE((*log)->lastWholeStep(), int64_t(5));
}

// The disk fills while a record is written (here: a file size limit half-way into the record): the
// append fails and says so, and the log ends after its last whole record, so the next append,
// once there is room, follows it and a rebuild takes every step.
void TestShardPlan::aRecordTheDiskCannotHoldLeavesTheLogWhole() {
    QTemporaryDir dir;
    LoggedRun run;
    run.cfg.kind = OptimizerKind::Adam;
    const std::vector<at::Tensor> params = someParams();
    run.layout = ShardLayout::of(params);
    run.owner = std::make_unique<ShardOwner>(ShardOwner::fromParams(
        run.layout, 1500, run.layout.values, params, run.cfg, run.layout.values - 1500));
    QCOMPARE(run.owner->segmentEnds().size(), size_t(1));
    const QString path = dir.filePath(QStringLiteral("range-2.log"));
    auto log = ShardLog::create(path, *run.owner, 0, 0, run.owner->rangeStateBytes());
    QVERIFY(log.ok());
    stepLogged(run, 0, log->get());
    const qint64 one = QFileInfo(path).size();
    const auto g = gradsOf(params, 1);
    for (int w = 0; w < 2; ++w)
        QVERIFY(run.owner->add(run.owner->cut(g[w]), kWeights[w]).ok());
    const int64_t size = run.owner->end() - run.owner->begin();
    const ShardLog::Span next = ShardLog::spanOf(*run.owner, 1, 0, size, lrOf(1));
    // A span waits on a link behind others: it holds its bytes and no room to grow.
    QCOMPARE(next.values.size(), qsizetype(size) * qsizetype(sizeof(float)));
    QCOMPARE(next.values.capacity(), next.values.size());
    rlimit saved{};
    QVERIFY(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    rlimit limited = saved;
    limited.rlim_cur = rlim_t(one + size * 2); // half of the next record
    const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    QVERIFY(setrlimit(RLIMIT_FSIZE, &limited) == 0);
    const Status full = (*log)->append(next);
    QVERIFY(setrlimit(RLIMIT_FSIZE, &saved) == 0);
    std::signal(SIGXFSZ, oldHandler);
    QVERIFY(!full);
    QVERIFY2(full.error().message.contains(QLatin1String("cannot write the shard log")),
             qPrintable(full.error().message));
    QCOMPARE(QFileInfo(path).size(), one);
    QCOMPARE((*log)->lastWholeStep(), int64_t(0));
    QVERIFY((*log)->append(next).ok());
    run.owner->applySpan(0, size, lrOf(1));
    run.after.push_back(run.owner->rangeStateBytes());
    auto back = ShardLog::rebuild(path, run.layout, run.cfg, 1);
    QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
    QVERIFY(sameState(**back, run.after.back()));
}

namespace {

// Three workers' gradients for a step: the third's, on step 1, never arrive whole.
std::vector<std::vector<at::Tensor>> threeWorkersGrads(const std::vector<at::Tensor>& params,
                                                       int step) {
    at::manual_seed(uint64_t(300 + step));
    std::vector<std::vector<at::Tensor>> out(3);
    for (auto& g : out)
        for (const at::Tensor& p : params)
            g.push_back(at::randn(p.sizes()));
    return out;
}

// Worker `w`'s gradient bundle in the dtype `wire`, filled in the backward pass's order; each
// owner's range is handed to `send` as soon as the bundle's front holds it whole.
void streamBundle(const std::vector<at::Tensor>& grads, const ModelLayout& layout, DType wire,
                  ShardRoute& route, const std::function<void(size_t, const QByteArray&)>& send) {
    GradientBundle bundle(layout, wire);
    const QByteArray bytes = bundle.begin();
    route.reset();
    for (size_t k = grads.size(); k-- > 0;) {
        bundle.add(k, grads[k]);
        for (size_t r : route.readyUpTo(bundle.ready())) {
            const auto [at, size] = route.bytesOf(r);
            send(r, bytes.mid(at, size));
        }
    }
    QCOMPARE(route.readyUpTo(bundle.size()).size(), size_t(0)); // every range went out
}

// `bytes` to `owner` in parts of random sizes, in order.
void inParts(OwnerStep& owner, int64_t step, const QString& worker, const QByteArray& bytes,
             QRandomGenerator& random, qint64 upTo = -1) {
    const qint64 end = upTo < 0 ? bytes.size() : upTo;
    for (qint64 at = 0; at < end;) {
        const qint64 n = std::min<qint64>(end - at, 1 + random.bounded(3000));
        const auto got = owner.receive(step, worker, at, bytes.mid(at, n));
        QVERIFY2(got, qPrintable(got ? QString() : got.error().message));
        QCOMPARE(*got, at + n == bytes.size());
        at += n;
    }
}

} // namespace

void TestShardPlan::aStepThroughTheOwnersEqualsTheOneOwnerStep_data() {
    QTest::addColumn<int>("wire");
    QTest::newRow("fp32") << int(WireDtype::Fp32);
    QTest::newRow("bf16") << int(WireDtype::Bf16);
}

// Three workers stream their gradients' ranges to three owners as their backward passes make
// them, in parts; the coordinator closes each step with the workers that count. On the second
// step the third worker goes with its range whole at the first owner, half sent to the second
// and nothing at the third: it counts nowhere. After three steps every replica holds what a
// one-owner run of the same gradients (rounded to the wire's dtype) and weights trained.
void TestShardPlan::aStepThroughTheOwnersEqualsTheOneOwnerStep() {
    QFETCH(int, wire);
    const DType dtype = storageDtype(WireDtype(wire));
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::AdamW;
    cfg.weightDecay = 0.01;
    const std::vector<at::Tensor> params = someParams();
    const ModelLayout modelLayout = testing::namedLayout(params);
    const ShardLayout layout = ShardLayout::of(params);
    const std::vector<std::pair<int64_t, int64_t>> ranges{
        {0, 1000}, {1000, 2900}, {2900, layout.values}};
    std::vector<ShardOwner> owners;
    for (const auto& [begin, end] : ranges)
        owners.push_back(ShardOwner::fromParams(layout, begin, end, params, cfg));
    std::vector<OwnerStep> steps;
    for (ShardOwner& o : owners)
        steps.emplace_back(o, dtype);
    const QString workers[3] = {QStringLiteral("laptop"), QStringLiteral("desktop"),
                                QStringLiteral("cpu box")};
    std::vector<std::vector<at::Tensor>> replicas(3);
    for (auto& replica : replicas)
        for (const at::Tensor& p : params)
            replica.push_back(p.to(scalarTypeOf(dtype)));
    std::vector<at::Tensor> one = clones(params);
    Optimizer oneOpt(cfg, one);
    QRandomGenerator random(11);
    for (int step = 0; step < 3; ++step) {
        const auto grads = threeWorkersGrads(params, step);
        for (OwnerStep& o : steps)
            o.open(step);
        for (int w = 0; w < 3; ++w) {
            ShardRoute route(ranges, dtype);
            std::vector<size_t> order;
            streamBundle(grads[size_t(w)], modelLayout, dtype, route,
                         [&](size_t r, const QByteArray& bytes) {
                             order.push_back(r);
                             if (step == 1 && w == 2 && r > 0) { // it goes
                                 if (r == 1)
                                     inParts(steps[r], step, workers[w], bytes, random,
                                             bytes.size() / 2);
                                 return;
                             }
                             inParts(steps[r], step, workers[w], bytes, random);
                         });
            QCOMPARE(order, (std::vector<size_t>{0, 1, 2})); // the backward pass's order
            if (QTest::currentTestFailed())
                return;
        }
        const std::vector<std::pair<QString, double>> counted =
            step == 1
                ? std::vector<std::pair<QString, double>>{{workers[0], 0.5}, {workers[1], 0.5}}
                : std::vector<std::pair<QString, double>>{
                      {workers[0], 10.0 / 64}, {workers[1], 24.0 / 64}, {workers[2], 30.0 / 64}};
        QCOMPARE(steps[0].wholeWorkers().size(), size_t(3));
        QCOMPARE(steps[1].whole(workers[2]), step != 1);
        // The one-owner run: the same gradients as the wire carries them, the same weights.
        std::vector<at::Tensor> sum(params.size());
        for (const auto& [worker, weight] : counted) {
            const size_t w = size_t(std::find(workers, workers + 3, worker) - workers);
            for (size_t i = 0; i < params.size(); ++i) {
                const at::Tensor g = grads[w][i].to(scalarTypeOf(dtype)).to(at::kFloat);
                if (!sum[i].defined())
                    sum[i] = g.mul(weight);
                else
                    sum[i].add_(g, weight);
            }
        }
        oneOpt.step(sum, lrOf(step));
        std::vector<ReplicaStep> arrivals;
        for (int w = 0; w < 3; ++w) {
            arrivals.emplace_back(layout, ranges, dtype);
            arrivals.back().open(step);
        }
        for (size_t r = 0; r < steps.size(); ++r) {
            const auto update = steps[r].close(step, counted, lrOf(step));
            QVERIFY2(update, qPrintable(update ? QString() : update.error().message));
            for (int w = 0; w < 3; ++w) {
                const Status st =
                    arrivals[size_t(w)].receive(step, r, *update, replicas[size_t(w)]);
                QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
            }
        }
        for (const ReplicaStep& a : arrivals)
            QVERIFY(a.complete());
    }
    compareWithOneOwner(owners, one, oneOpt);
    const auto trained = ShardOwner::gatherMasters(pointers(owners));
    QVERIFY(trained.ok());
    for (const auto& replica : replicas)
        for (size_t i = 0; i < params.size(); ++i)
            QVERIFY(at::equal(replica[i], (*trained)[i].to(scalarTypeOf(dtype))));
}

// Streaming local-SGD through the owners: round r exchanges fragment r mod 3 only, each worker
// sending that fragment's run of its bundle. An owner steps its range's part inside the fragment
// with the outer optimizer, and a range outside it sends nothing but still counts the round. A
// worker lands the new values in tensors of the fragment alone. After six rounds, two of each
// fragment, the owners hold what the one-owner outer optimizer made of the same deltas, its
// momentum too, and each round's landing held the fragment's new values. Each range's log, which
// holds the spans of its part of each round and nothing of a round that missed it, rebuilds the
// range as its owner holds it, its step count too.
void TestShardPlan::aStreamingRoundStepsItsFragmentOnly() {
    const DType dtype = DType::F32;
    const OptimizerConfig cfg = outerStepOptimizer(0.9);
    const std::vector<at::Tensor> params = someParams();
    const ModelLayout modelLayout = testing::namedLayout(params);
    const ShardLayout layout = ShardLayout::of(params);
    const std::vector<ShardWindow> windows = fragmentWindows(layout, 3);
    // The fragments are tensor 0, tensors 1 to 4 and tensor 5; the flat order starts with the
    // last tensor.
    QCOMPARE(windows.size(), size_t(3));
    QCOMPARE(windows[0], (ShardWindow{3547, 5659}));
    QCOMPARE(windows[1], (ShardWindow{2048, 3547}));
    QCOMPARE(windows[2], (ShardWindow{0, 2048}));
    const std::vector<Fragment> fragments = cutFragments(paramNumels(params), 3);
    const std::vector<std::pair<int64_t, int64_t>> ranges{
        {0, 1000}, {1000, 2900}, {2900, layout.values}};
    std::vector<ShardOwner> owners;
    for (const auto& [begin, end] : ranges)
        owners.push_back(ShardOwner::fromParams(layout, begin, end, params, cfg, 300));
    std::vector<OwnerStep> steps;
    QTemporaryDir dir;
    std::vector<std::unique_ptr<ShardLog>> logs;
    for (ShardOwner& o : owners) {
        steps.emplace_back(o, dtype);
        steps.back().setKeepSums(true);
        auto log = ShardLog::create(dir.filePath(QString::number(logs.size())), o, 0, 0,
                                    o.rangeStateBytes());
        QVERIFY(log.ok());
        (*log)->setWindows(windows);
        logs.push_back(std::move(*log));
    }
    const QString workers[2] = {QStringLiteral("laptop"), QStringLiteral("desktop")};
    const std::vector<std::pair<QString, double>> counted{{workers[0], 0.25}, {workers[1], 0.75}};
    std::vector<at::Tensor> one = clones(params);
    Optimizer oneOpt(cfg, one);
    QRandomGenerator random(5);
    for (int step = 0; step < 6; ++step) {
        const ShardWindow& window = windows[size_t(step % 3)];
        const Fragment& fragment = fragments[size_t(step % 3)];
        const auto grads = threeWorkersGrads(params, step);
        for (OwnerStep& o : steps)
            o.open(step, window);
        for (int w = 0; w < 2; ++w) {
            GradientBundle bundle(modelLayout, dtype);
            QByteArray whole = bundle.begin();
            bundle.finish(grads[size_t(w)], {});
            const QByteArray sent = whole.mid(window.begin * 4, (window.end - window.begin) * 4);
            ShardRoute route(ranges, dtype);
            route.setWindow(window);
            for (const ShardRoute::Part& part : route.partsUpTo(sent.size(), 1 << 30)) {
                const auto [at, size] = route.bytesOf(part.range);
                QCOMPARE(part.offset, qint64(0));
                inParts(steps[part.range], step, workers[w], sent.mid(at, size), random);
            }
            QCOMPARE(route.handedOut(), qint64(sent.size()));
        }
        std::vector<at::Tensor> sum(params.size());
        for (size_t i = fragment.firstParam; i < fragment.endParam; ++i)
            sum[i] = grads[0][i].mul(0.25).add_(grads[1][i], 0.75);
        oneOpt.step(sum, lrOf(step));
        // The landing: the fragment's tensors only.
        std::vector<at::Tensor> landing(params.size());
        for (size_t i = fragment.firstParam; i < fragment.endParam; ++i)
            landing[i] = at::zeros_like(params[i]);
        ReplicaStep arrivals(layout, ranges, dtype);
        arrivals.open(step, window);
        for (size_t r = 0; r < steps.size(); ++r) {
            const auto [from, to] = window.within(ranges[r].first, ranges[r].second);
            QVERIFY(steps[r].wholeFor(counted));
            QVERIFY(steps[r].closeWhenHeld(step, counted, lrOf(step)).ok());
            QByteArray update;
            for (const OwnerStep::Weights& w : steps[r].advance()) {
                update.append(w.bytes);
                QVERIFY(w.sum.has_value());
                const Status logged = logs[r]->append(*w.sum);
                QVERIFY2(logged, qPrintable(logged ? QString() : logged.error().message));
            }
            QVERIFY(steps[r].closed());
            QCOMPARE(update.size(), int((to - from) * 4));
            if (update.isEmpty())
                continue;
            const Status st = arrivals.receive(step, r, update, landing);
            QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
        }
        QVERIFY(arrivals.complete());
        QString why;
        for (size_t i = fragment.firstParam; i < fragment.endParam; ++i)
            QVERIFY2(same(landing[i], one[i], &why), qPrintable(QString::number(i) + why));
    }
    for (const ShardOwner& o : owners)
        QCOMPARE(o.stepCount(), oneOpt.stepCount());
    compareWithOneOwner(owners, one, oneOpt);
    for (size_t r = 0; r < owners.size(); ++r) {
        auto rebuilt = ShardLog::rebuild(logs[r]->path(), layout, cfg, 5, windows);
        QVERIFY2(rebuilt, qPrintable(rebuilt ? QString() : rebuilt.error().message));
        QCOMPARE((*rebuilt)->stepCount(), owners[r].stepCount());
        QVERIFY(at::equal((*rebuilt)->masters(), owners[r].masters()));
        QCOMPARE((*rebuilt)->rangeStateBytes(), owners[r].rangeStateBytes());
    }
}

// A range of millions of values, sent whole or in parts, is checked for values that are not
// finite to its last value (in pieces of a million, so that the check holds no flag per value).
void TestShardPlan::aLargeRangeIsCheckedToItsLastValue() {
    const std::vector<at::Tensor> params{at::zeros({2'500'000}), at::zeros({16})};
    const ShardLayout layout = ShardLayout::of(params);
    ShardOwner owner = ShardOwner::fromParams(layout, 0, layout.values, params, {});
    OwnerStep step(owner, DType::BF16);
    step.open(0);
    const qint64 bytes = layout.values * 2;
    QByteArray good(bytes, '\0');
    QCOMPARE(step.receive(0, QStringLiteral("whole"), 0, good).value(), true);
    for (const qint64 value : {qint64(2'200'000), qint64(layout.values - 1)}) {
        QByteArray bad = good;
        const uint16_t infinity = 0x7f80; // bf16's +inf
        memcpy(bad.data() + value * 2, &infinity, sizeof infinity);
        const QString w = QStringLiteral("bad at %1").arg(value);
        const Expected<bool> whole = step.receive(0, w, 0, bad);
        QVERIFY2(!whole && whole.error().message.contains(QLatin1String("not finite")),
                 qPrintable(w));
        // In two parts, the second holding the value.
        QCOMPARE(step.receive(0, w, 0, bad.left(bytes / 2)).value(), false);
        QVERIFY(!step.receive(0, w, bytes / 2, bad.mid(bytes / 2)));
        QVERIFY(!step.whole(w));
    }
    QCOMPARE(step.wholeWorkers(), std::vector<QString>{QStringLiteral("whole")});
    QVERIFY(step.close(0, {{QStringLiteral("whole"), 1.0}}, 0.1).ok());
    QCOMPARE(owner.stepCount(), 1);
}

// An owner takes a worker's range in order, for the open step, once; a range that is not finite
// is dropped; a close that counts a worker whose range is not whole changes nothing. A replica
// takes each range's weights once, for its step. Each refusal says what arrived.
void TestShardPlan::whatAPeerSendsOutOfTurnIsRefused() {
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    ShardOwner owner = ShardOwner::fromParams(layout, 1000, 2900, params, {});
    OwnerStep step(owner, DType::F32);
    const QString w = QStringLiteral("laptop");
    const QByteArray range(1900 * 4, '\0'); // zeros: finite
    const auto refused = [](const Expected<bool>& got, const char* says) {
        QVERIFY2(!got && got.error().message.contains(QLatin1String(says)),
                 qPrintable(got ? QStringLiteral("accepted") : got.error().message));
    };
    refused(step.receive(0, w, 0, range), "before any step began");
    step.open(4);
    refused(step.receive(3, w, 0, range), "for step 4 during step 5");
    refused(step.receive(4, w, 8, range.left(8)), "for bytes 8 to 16 of a range of 7600");
    refused(step.receive(4, w, 0, range + QByteArray(4, '\0')), "bytes 0 to 7604");
    QCOMPARE(step.receive(4, w, 0, range.left(100)).value(), false);
    refused(step.receive(4, w, 0, range.left(100)), "after 100 bytes");
    QCOMPARE(step.receive(4, w, 100, range.mid(100)).value(), true);
    refused(step.receive(4, w, 7600, QByteArray(4, '\0')), "after its whole range");
    QByteArray bad = range;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    memcpy(bad.data() + 400, &nan, sizeof nan);
    const QString other = QStringLiteral("desktop");
    refused(step.receive(4, other, 0, bad), "not finite");
    QVERIFY(!step.whole(other));
    QCOMPARE(step.wholeWorkers(), std::vector<QString>{w});
    const at::Tensor before = owner.masters().clone();
    for (const auto& counted : std::vector<std::vector<std::pair<QString, double>>>{
             {{w, 0.5}, {other, 0.5}}, {{w, 0.5}, {w, 0.5}}, {{w, -1.0}}}) {
        QVERIFY(!step.close(4, counted, 0.1));
        QCOMPARE(owner.stepCount(), 0);
        QVERIFY(at::equal(owner.masters(), before));
    }
    QVERIFY(!step.close(5, {{w, 1.0}}, 0.1));
    const auto update = step.close(4, {{w, 1.0}}, 0.1);
    QVERIFY(update.ok());
    QCOMPARE(owner.stepCount(), 1);
    QVERIFY(!step.close(4, {{w, 1.0}}, 0.1));
    refused(step.receive(4, w, 0, range), "which is closed");

    ReplicaStep replica(layout, {{0, 1000}, {1000, 2900}, {2900, layout.values}}, DType::F32);
    std::vector<at::Tensor> mine = clones(params);
    replica.open(4);
    QVERIFY(!replica.receive(3, 1, *update, mine));
    QVERIFY(!replica.receive(4, 3, *update, mine));
    QVERIFY(!replica.receive(4, 0, *update, mine)); // range 1's bytes are not range 0's size
    for (size_t i = 0; i < params.size(); ++i)
        QVERIFY(at::equal(mine[i], params[i]));
    QVERIFY(replica.receive(4, 1, *update, mine).ok());
    QVERIFY(!replica.receive(4, 1, *update, mine));
    QVERIFY(!replica.complete());

    ShardRoute route({{0, 1000}, {1000, 2900}, {2900, layout.values}}, DType::BF16);
    QCOMPARE(route.bytesOf(1), (std::pair<qint64, qint64>{2000, 3800}));
    QCOMPARE(route.readyUpTo(1999).size(), size_t(0));
    QCOMPARE(route.readyUpTo(5800), (std::vector<size_t>{0, 1}));
    QCOMPARE(route.readyUpTo(5800).size(), size_t(0));
    QCOMPARE(route.readyUpTo(layout.values * 2), std::vector<size_t>{2});

    // In parts of 1000 bytes or more: a range's last part may be less, and no byte goes twice.
    const auto parts = [&](qint64 ready) {
        std::vector<std::tuple<size_t, qint64, qint64>> out;
        for (const ShardRoute::Part& p : route.partsUpTo(ready, 1000))
            out.emplace_back(p.range, p.offset, p.size);
        return out;
    };
    using Cut = std::vector<std::tuple<size_t, qint64, qint64>>;
    route.reset();
    QCOMPARE(parts(800), Cut{});
    QCOMPARE(parts(1200), (Cut{{0, 0, 1200}}));
    QCOMPARE(parts(2100), (Cut{{0, 1200, 800}})); // range 0's end; 100 bytes of 1 wait
    QCOMPARE(parts(3000), (Cut{{1, 0, 1000}}));
    QCOMPARE(parts(3500), Cut{});
    QCOMPARE(parts(9000), (Cut{{1, 1000, 2800}, {2, 0, 3200}}));
    QCOMPARE(parts(layout.values * 2), (Cut{{2, 3200, layout.values * 2 - 9000}}));
    QCOMPARE(parts(layout.values * 2), Cut{});
}

namespace {
// fp32 bytes as a tensor (a view of them).
at::Tensor asFloats(const QByteArray& bytes) {
    return at::from_blob(const_cast<char*>(bytes.constData()), {bytes.size() / 4}, at::kFloat);
}
// A step in segments and one at once: the same arithmetic on each value, but where a vectorised
// kernel's tail falls (the processor's vector width, LibTorch's fused Adam) may round it apart.
constexpr double kSameStep = 1e-6;
} // namespace

// Once the coordinator has said how a step closes, an owner steps its range a segment at a time
// as the counted workers' parts arrive: each segment's weights leave as soon as every worker has
// sent it, before the range is whole, and a replica takes them in order. In segments or at once,
// the step gives the same weights, to fp32 rounding, and counts once.
namespace {
// The values an owner keeps a sum for now.
int64_t summedValues(const ShardOwner& owner) {
    int64_t n = 0;
    for (const at::Tensor& t : owner.sum())
        n += t.defined() ? t.numel() : 0;
    return n;
}
} // namespace

void TestShardPlan::anOwnerStepsEachSegmentAsItsPartsArrive() {
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::Adam;
    const int64_t begin = 1000, end = 2900;
    ShardOwner segmented = ShardOwner::fromParams(layout, begin, end, params, cfg, 300);
    ShardOwner whole = ShardOwner::fromParams(layout, begin, end, params, cfg);
    QCOMPARE(segmented.segmentEnds(),
             (std::vector<int64_t>{300, 600, 900, 1200, 1500, 1800, 1900}));
    QCOMPARE(whole.segmentEnds(), std::vector<int64_t>{1900});
    for (const ShardLayout::Piece& p : segmented.pieces())
        QCOMPARE(p.at / 300, (p.at + p.values - 1) / 300);
    OwnerStep a(segmented, DType::F32), b(whole, DType::F32);
    const QString workers[2] = {QStringLiteral("laptop"), QStringLiteral("desktop")};
    const std::vector<std::pair<QString, double>> counted{{workers[0], kWeights[0]},
                                                          {workers[1], kWeights[1]}};
    std::vector<at::Tensor> replica = clones(params);
    for (int step = 0; step < 3; ++step) {
        const auto g = gradsOf(params, step == 2 ? 3 : step); // every parameter has one
        std::vector<QByteArray> bytes;
        for (int w = 0; w < 2; ++w) {
            const at::Tensor t = at::empty({end - begin});
            layout.copyRange(begin, end, g[size_t(w)], t);
            bytes.emplace_back(static_cast<const char*>(t.data_ptr()), int(t.numel() * 4));
        }
        a.open(step);
        b.open(step);
        QVERIFY(a.closeWhenHeld(step, counted, lrOf(step)).ok());
        QVERIFY(!a.closeWhenHeld(step, counted, lrOf(step)));
        ReplicaStep arrivals(layout, {{0, begin}, {begin, end}, {end, layout.values}}, DType::F32);
        arrivals.open(step);
        // The desktop's range, whole: nothing can be stepped before the laptop's comes.
        QVERIFY(a.receive(step, workers[1], 0, bytes[1]).value());
        QVERIFY(a.advance().empty());
        QByteArray sent;
        int early = 0; // segments out before the laptop's range was whole
        for (qint64 at = 0; at < bytes[0].size();) {
            const qint64 n = std::min<qint64>(bytes[0].size() - at, 1000);
            QCOMPARE(a.receive(step, workers[0], at, bytes[0].mid(at, n)).value(),
                     at + n == bytes[0].size());
            at += n;
            // The sum is made a segment at a time as the step closes: none is kept while the
            // ranges arrive, nor between segments.
            QCOMPARE(summedValues(segmented), int64_t(0));
            for (const OwnerStep::Weights& w : a.advance()) {
                QCOMPARE(summedValues(segmented), int64_t(0));
                QCOMPARE(w.offset, qint64(sent.size()));
                QVERIFY(w.offset + w.bytes.size() <= at);
                early += at < bytes[0].size() ? 1 : 0;
                const Status st = arrivals.receive(step, 1, w.bytes, replica);
                QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
                sent += w.bytes;
            }
        }
        // Parts end at bytes 1000, 2000, ... 7000 and 7600; segments at 1200, 2400, ... 7200
        // and 7600: five leave early, the last two with the last part.
        QCOMPARE(early, 5);
        QVERIFY(a.closed());
        QVERIFY(!arrivals.receive(step, 1, QByteArray(4, '\0'), replica));
        for (int w = 0; w < 2; ++w)
            QVERIFY(b.receive(step, workers[w], 0, bytes[size_t(w)]).value());
        const auto all = b.close(step, counted, lrOf(step));
        QVERIFY(all.ok());
        QCOMPARE(sent.size(), all->size());
        QVERIFY(at::allclose(asFloats(sent), asFloats(*all), kSameStep, kSameStep));
    }
    QCOMPARE(segmented.stepCount(), 3);
    QCOMPARE(whole.stepCount(), 3);
    QVERIFY(at::allclose(segmented.masters(), whole.masters(), kSameStep, kSameStep));
    // The replica holds the range's new weights, and the rest as it was.
    const at::Tensor held = at::empty({layout.values}), before = at::empty({layout.values});
    layout.copyRange(0, layout.values, replica, held);
    layout.copyRange(0, layout.values, params, before);
    QVERIFY(at::equal(held.narrow(0, begin, end - begin), segmented.masters()));
    QVERIFY(at::equal(held.narrow(0, 0, begin), before.narrow(0, 0, begin)));
    QVERIFY(at::equal(held.narrow(0, end, layout.values - end),
                      before.narrow(0, end, layout.values - end)));
}

void TestShardPlan::aRangeAtATimeGathersTheOneOwnerState_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("sgd") << int(OptimizerKind::Sgd);
    QTest::newRow("adam") << int(OptimizerKind::Adam);
    QTest::newRow("rmsprop") << int(OptimizerKind::RmsProp);
    QTest::newRow("adagrad") << int(OptimizerKind::Adagrad);
    QTest::newRow("adamw8bit") << int(OptimizerKind::AdamW8bit);
}

// Four owners of `params`, their ranges cut inside tensors too (where a block of 8-bit AdamW's
// begins, for it), after three sharded steps.
std::vector<ShardOwner> fourOwnersAfterThreeSteps(const std::vector<at::Tensor>& params,
                                                  const OptimizerConfig& cfg) {
    const int64_t values = ShardLayout::of(params).values;
    const std::vector<int64_t> bounds = cfg.kind == OptimizerKind::AdamW8bit
                                            ? std::vector<int64_t>{0, 1024, 2304, 2816, values}
                                            : std::vector<int64_t>{0, 1000, 2245, 2911, values};
    std::vector<ShardOwner> owners = ownersOver(params, bounds, cfg);
    for (int step = 0; step < 3; ++step)
        shardedStep(owners, params, step);
    return owners;
}

// The coordinator gathers a checkpoint's state a range at a time, each range's bytes gone before
// the next range's come: the state and the weights are the owners' together, whatever the order
// the ranges come in, and an optimizer takes the gathered tensors themselves, not a copy. The
// weights alone come the same way, keeping none of the state.
void TestShardPlan::aRangeAtATimeGathersTheOneOwnerState() {
    QFETCH(int, kind);
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind(kind);
    cfg.momentum = 0.9;
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    std::vector<ShardOwner> owners = fourOwnersAfterThreeSteps(params, cfg);
    const auto expected = ShardOwner::gatherState(pointers(owners));
    const auto masters = ShardOwner::gatherMasters(pointers(owners));
    QVERIFY(expected.ok() && masters.ok());

    std::vector<at::Tensor> replica;
    for (const at::Tensor& p : params)
        replica.push_back(at::zeros_like(p));
    GatheredState gathered(layout);
    for (size_t k : {2, 0, 3, 1}) {
        QByteArray bytes = owners[k].rangeStateBytes();
        const Status st = gathered.add(owners[k].begin(), owners[k].end(), 3, bytes, &replica);
        QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
        bytes.fill('\0'); // what was gathered no longer needs them
    }
    auto state = gathered.take();
    QVERIFY2(state, qPrintable(state ? QString() : state.error().message));
    QCOMPARE(state->size(), expected->size());
    for (size_t i = 0; i < state->size(); ++i) {
        QCOMPARE((*state)[i].first, (*expected)[i].first);
        QVERIFY2(at::equal((*state)[i].second, (*expected)[i].second), (*state)[i].first.c_str());
    }
    for (size_t i = 0; i < params.size(); ++i)
        QVERIFY(at::equal(replica[i], (*masters)[i]));

    // The end of a run: the weights alone, no state kept.
    std::vector<at::Tensor> weights;
    for (const at::Tensor& p : params)
        weights.push_back(at::zeros_like(p));
    GatheredState weightsOnly(layout, /*keepState=*/false);
    for (size_t k : {1, 3, 0, 2})
        QVERIFY(
            weightsOnly
                .add(owners[k].begin(), owners[k].end(), 3, owners[k].rangeStateBytes(), &weights)
                .ok());
    for (size_t i = 0; i < params.size(); ++i)
        QVERIFY(at::equal(weights[i], (*masters)[i]));
    auto none = weightsOnly.take();
    QVERIFY(none.ok() && none->empty());

    Optimizer opt(cfg, replica);
    const Status st = opt.restore(3, *state);
    QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
    QCOMPARE(opt.stepCount(), int64_t(3));
    std::map<std::string, const void*> where;
    for (const auto& [name, t] : *state)
        where[name] = t.data_ptr();
    for (const auto& [name, t] : opt.stateTensors())
        if (name.rfind("step.", 0) != 0)
            QVERIFY2(where[name] == t.data_ptr(), name.c_str());

    // A checkpoint's way: each range's bytes in a file, each tensor read from them as the
    // checkpoint's writer reaches it. The checkpoint holds what the owners hold, and the files
    // go with the state.
    QTemporaryDir dir;
    QString checkpoint = dir.filePath(QStringLiteral("state.tandem"));
    {
        SpilledState spilled(layout, dir.path());
        for (size_t k : {1, 3, 0, 2}) {
            const Status added = spilled.add(owners[k].begin(), owners[k].end(), 3,
                                             owners[k].rangeStateBytes(), nullptr);
            QVERIFY2(added, qPrintable(added ? QString() : added.error().message));
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 4);
        auto tensors = spilled.tensors();
        QVERIFY2(tensors, qPrintable(tensors ? QString() : tensors.error().message));
        // A setup cuts its ranges from the files: any run of a tensor's bytes, across the
        // ranges' files, is what the whole tensor holds there, and nothing outside it is read.
        for (const LazyTensor& l : *tensors) {
            if (l.name.startsWith(QLatin1String("step.")))
                continue; // a step count, in memory
            QVERIFY2(l.part, qPrintable(l.name));
            const QByteArray whole = l.bytes();
            const qint64 size = whole.size(), element = dtypeSize(l.dtype);
            QList<qint64> starts{size - element, size};
            for (qint64 at = 0; at < size; at += 5 * element)
                starts << at;
            for (qint64 at : starts)
                for (qint64 n : {qint64(0), element, size - at, (size - at) / 2})
                    QVERIFY2(
                        l.part(at, n) == whole.mid(at, n),
                        qPrintable(
                            QStringLiteral("%1 from %2, %3 bytes").arg(l.name).arg(at).arg(n)));
            QVERIFY(l.part(0, size + element).isEmpty());
            QVERIFY(l.part(-element, element).isEmpty());
        }
        TensorFile f;
        f.lazy = *tensors;
        const Status written = writeCheckpoint(checkpoint, f);
        QVERIFY2(written, qPrintable(written ? QString() : written.error().message));
    }
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden),
             QStringList{QStringLiteral("state.tandem")});
    auto back = readCheckpoint(checkpoint);
    QVERIFY2(back, qPrintable(back ? QString() : back.error().message));
    QCOMPARE(back->tensors.size(), qsizetype(expected->size()));
    for (qsizetype i = 0; i < back->tensors.size(); ++i) {
        const TensorRecord& r = back->tensors[i];
        const auto& [name, t] = (*expected)[size_t(i)];
        QCOMPARE(r.name, QString::fromStdString(name));
        QCOMPARE(r.data, toRecord(name, t).data);
    }
}

// A range's file that cannot be read when the checkpoint's writer reaches it fails the write,
// and says which file.
void TestShardPlan::aSpilledStateThatCannotBeReadFailsItsCheckpoint() {
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    const std::vector<ShardOwner> owners = twoOwnersAfterAStep(params);
    QTemporaryDir dir;
    SpilledState spilled(layout, dir.path());
    for (const ShardOwner& o : owners)
        QVERIFY(spilled.add(o.begin(), o.end(), 1, o.rangeStateBytes(), nullptr).ok());
    auto tensors = spilled.tensors();
    QVERIFY(tensors.ok());
    for (const QFileInfo& f : QDir(dir.path()).entryInfoList(QDir::Files | QDir::Hidden))
        QVERIFY(QFile::resize(f.filePath(), 16));
    TensorFile file;
    file.lazy = *tensors;
    const QString path = dir.filePath(QStringLiteral("state.tandem"));
    QVERIFY(!writeCheckpoint(path, file));
    QVERIFY(!QFile::exists(path));
    QVERIFY2(spilled.failure().contains(QStringLiteral(".shard-state-")),
             qPrintable(spilled.failure()));
}

// A range's state is the same wherever it lies: this machine's own owner's tensors, bytes in
// memory, or the file a link wrote them to. A state in a file is kept there (no copy of it is
// written) and removed once nothing reads it; a damaged one is refused; a log begun from any of
// them rebuilds the same owner.
void TestShardPlan::aRangeIsReadWhereItLies() {
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::AdamW;
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    std::vector<ShardOwner> owners = fourOwnersAfterThreeSteps(params, cfg);
    const auto expected = ShardOwner::gatherState(pointers(owners));
    const auto masters = ShardOwner::gatherMasters(pointers(owners));
    QVERIFY(expected.ok() && masters.ok());

    QTemporaryDir dir;
    const auto fileOf = [&](size_t k) {
        const QString path = dir.filePath(QStringLiteral("arrived-%1").arg(k));
        QFile f(path);
        const QByteArray bytes = owners[k].rangeStateBytes();
        return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size() ? path : QString();
    };
    const auto sourceOf = [&](size_t k) {
        switch (k) {
        case 0:
            return RangeState::ofOwner(owners[k].rangeState());
        case 2:
            return RangeState::ofBytes(owners[k].rangeStateBytes());
        default:
            return RangeState::ofFile(fileOf(k));
        }
    };
    std::vector<at::Tensor> replica;
    for (const at::Tensor& p : params)
        replica.push_back(at::zeros_like(p));
    GatheredState gathered(layout);
    for (size_t k : {3, 0, 2, 1}) {
        const Status st =
            gathered.add(owners[k].begin(), owners[k].end(), 3, sourceOf(k), &replica);
        QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
    }
    // The files a link wrote go with their state.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList());
    auto state = gathered.take();
    QVERIFY(state.ok() && state->size() == expected->size());
    for (size_t i = 0; i < state->size(); ++i)
        QVERIFY2(at::equal((*state)[i].second, (*expected)[i].second), (*state)[i].first.c_str());
    for (size_t i = 0; i < params.size(); ++i)
        QVERIFY(at::equal(replica[i], (*masters)[i]));

    // Spilled: the file ranges stay where they are, the others get a file of their own.
    const QString checkpoint = dir.filePath(QStringLiteral("state.tandem"));
    {
        SpilledState spilled(layout, dir.path());
        for (size_t k : {1, 3, 0, 2})
            QVERIFY(spilled.add(owners[k].begin(), owners[k].end(), 3, sourceOf(k), nullptr).ok());
        QStringList files = QDir(dir.path()).entryList(QDir::Files | QDir::Hidden);
        files.sort();
        QCOMPARE(files, (QStringList{QStringLiteral(".shard-state-0-1000.part"),
                                     QStringLiteral(".shard-state-2245-2911.part"),
                                     QStringLiteral("arrived-1"), QStringLiteral("arrived-3")}));
        // A range refused (given twice, or after other steps) writes nothing, over its file or
        // beside it.
        const QDateTime written =
            QFileInfo(dir.filePath(QStringLiteral(".shard-state-0-1000.part"))).lastModified();
        for (int64_t steps : {3, 2})
            QVERIFY(!spilled.add(owners[0].begin(), owners[0].end(), steps,
                                 RangeState::ofBytes(owners[0].rangeStateBytes()), nullptr));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 4);
        QCOMPARE(QFileInfo(dir.filePath(QStringLiteral(".shard-state-0-1000.part"))).lastModified(),
                 written);
        auto tensors = spilled.tensors();
        QVERIFY(tensors.ok());
        TensorFile f;
        f.lazy = *tensors;
        QVERIFY(writeCheckpoint(checkpoint, f).ok());
    }
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden),
             QStringList{QStringLiteral("state.tandem")});
    auto back = readCheckpoint(checkpoint);
    QVERIFY(back.ok() && back->tensors.size() == qsizetype(expected->size()));
    for (qsizetype i = 0; i < back->tensors.size(); ++i)
        QCOMPARE(back->tensors[i].data,
                 toRecord((*expected)[size_t(i)].first, (*expected)[size_t(i)].second).data);

    // A file cut short or changed is refused before a value of it is used.
    const QString cut = fileOf(1);
    QVERIFY(QFile::resize(cut, QFileInfo(cut).size() - 1));
    GatheredState refused(layout);
    QVERIFY(!refused.add(owners[1].begin(), owners[1].end(), 3, RangeState::ofFile(cut), &replica));
    QVERIFY(!QFile::exists(cut));

    // A log begun from each rebuilds the owner the bytes do.
    for (size_t k : {0, 1, 2}) {
        const QString log = dir.filePath(QStringLiteral("log-%1").arg(k));
        auto made = ShardLog::create(log, layout, owners[k].begin(), owners[k].end(), 3, 3,
                                     *sourceOf(k).open(QStringLiteral("range")));
        QVERIFY2(made, qPrintable(made ? QString() : made.error().message));
        made->reset();
        auto rebuilt = ShardLog::rebuild(log, layout, cfg, 2);
        QVERIFY2(rebuilt, qPrintable(rebuilt ? QString() : rebuilt.error().message));
        QVERIFY((*rebuilt)->rangeStateBytes() == owners[k].rangeStateBytes());
    }
}

// What cannot be one state is refused, saying which range: bytes of another range or step
// count, a range given twice, and a state with a range missing.
void TestShardPlan::aGatheredStateThatDoesNotAddUpIsRefused() {
    const std::vector<at::Tensor> params = someParams();
    const ShardLayout layout = ShardLayout::of(params);
    const std::vector<ShardOwner> owners = twoOwnersAfterAStep(params);
    const QByteArray first = owners[0].rangeStateBytes();
    const QByteArray second = owners[1].rangeStateBytes();
    GatheredState g(layout);
    auto refused = [](const Status& st, const char* says) {
        return !st && st.error().message.contains(QLatin1String(says));
    };
    QVERIFY(refused(g.add(0, 1000, 1, second, nullptr), "is not what was sent"));
    QVERIFY(refused(g.add(0, 1000, 2, first, nullptr), "is not what was sent"));
    QVERIFY(refused(g.add(0, 1000, 1, QByteArray("not a state"), nullptr), "values 0 to 1000"));
    QVERIFY(g.add(0, 1000, 1, first, nullptr).ok());
    QVERIFY(refused(g.add(0, 1000, 1, first, nullptr), "overlaps values 0 to 1000"));
    auto missing = g.take();
    QVERIFY(!missing);
    QVERIFY2(missing.error().message.contains(QStringLiteral("ends at value 1000")),
             qPrintable(missing.error().message));
}

QTEST_GUILESS_MAIN(TestShardPlan)
#include "test_shardplan.moc"
