// The engine's parts without processes or sockets: the worker pool's slots, each step policy
// driven against fake workers, the recorder's files and the run plan's rules.

#include "engine/coordinator/hub.h"
#include "engine/coordinator/remoteworker.h"
#include "engine/coordinator/sessionhost.h"
#include "engine/coordinator/steppolicy.h"
#include "engine/coordinator/workerpool.h"
#include "engine/modes/rounds.h"
#include "engine/modes/sync.h"
#include "engine/record/recorder.h"
#include "engine/runhistory.h"
#include "engine/runplan.h"
#include "engine/step/batch.h"
#include "engine/step/replica.h"
#include "engine/wire/workwire.h"
#include "engine/worker/admission.h"
#include "engine/worker/events.h"
#include "model/scriptmodel.h"
#include "net/connection.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <deque>
#include <map>

using namespace tandem;

namespace {

// A worker whose result is the request's sample count and a gradient of `value` everywhere,
// or a failure; it records what it was asked.
class FakeLink final : public WorkerLink {
public:
    FakeLink(QString name, float value)
        : m_name(std::move(name))
        , m_value(value) {}
    QString name() const override { return m_name; }
    DeviceInfo device() const override {
        DeviceInfo d;
        d.name = QStringLiteral("fake");
        return d;
    }
    void submit(WorkRequest r) override {
        requests.push_back(r);
        submittedNs = arrivalClockNs();
        notifyReady();
    }
    bool ready() const override { return true; }
    Expected<WorkResult> wait() override {
        const WorkRequest& r = requests.at(answered++); // in the order asked
        if (failNext) {
            failNext = false;
            return makeError(ErrorCode::Runtime, QStringLiteral("%1 went away").arg(m_name));
        }
        WorkResult out;
        out.step = r.step;
        out.samples = int64_t(r.indices.size());
        out.lossSum = double(out.samples) * m_value;
        out.correct = out.counted = out.samples;
        out.grads = {at::full({3}, m_value)};
        out.computeMs = msPerSample > 0 ? msPerSample * double(out.samples) : 1;
        if (delayMs > 0) {
            QThread::msleep(ulong(delayMs));
            out.arrivedNs = arrivalClockNs();
        } else if (arriveAtOnce) {
            out.arrivedNs = submittedNs + 1'000'000;
        }
        return out;
    }

    std::vector<WorkRequest> requests;
    size_t answered = 0;
    double msPerSample = 0; // its compute time, when not 1 ms a request
    bool failNext = false;
    int delayMs = 0;           // its result arrives this long after the policy waits for it
    bool arriveAtOnce = false; // its result is stamped as arrived 1 ms after the request
    int64_t submittedNs = 0;

private:
    QString m_name;
    float m_value;
};

class Recording : public RunObserver {
public:
    void onMessage(const QString& m) override { messages << m; }
    void onEvent(const RunEvent& e) override { events.push_back(e); }
    QStringList messages;
    std::vector<RunEvent> events;
};

// What a policy works on: one parameter of three zeros, plain SGD, a sampler over `samples`.
struct Bench {
    RunConfig cfg;
    ModelTensors master;
    std::unique_ptr<Optimizer> optimizer;
    EpochSampler sampler;
    Recording obs;
    WorkerPool pool{obs};
    int64_t step = 0;
    std::vector<StepOutcome> outcomes;
    std::unique_ptr<StepContext> ctx;

    Bench(int64_t samples, int batch, OptimizerConfig oc = sgd())
        : sampler(samples, 1) {
        cfg.batch = batch;
        master.paramNames = {"w"};
        master.params = {at::zeros({3})};
        optimizer = std::make_unique<Optimizer>(oc, master.params);
        ctx.reset(new StepContext{
            cfg,
            master,
            *optimizer,
            sampler,
            pool,
            DType::F32,
            step,
            100,
            0,
            [] { return Gate::Go; },
            [this](const StepOutcome& o) {
                ++step;
                outcomes.push_back(o);
                return success();
            },
            [] { return Status(makeError(ErrorCode::Runtime, QStringLiteral("no worker left"))); },
            {},
            nullptr,
            {}});
    }
    static OptimizerConfig sgd() {
        OptimizerConfig o;
        o.kind = OptimizerKind::Sgd;
        o.momentum = 0;
        return o;
    }
    std::shared_ptr<FakeLink> add(const char* name, float value) {
        auto l = std::make_shared<FakeLink>(QLatin1String(name), value);
        pool.add(l);
        return l;
    }
};

// A hub that sends nothing: what a RemoteWorker needs of one to be driven by hand.
class QuietHost final : public SessionHost {
public:
    HubConfig cfg;
    const HubConfig& config() const override { return cfg; }
    void addMessage(const QString&) override {}
    QString workerName(const QString& n, const QString&, const HubSession*) const override {
        return n;
    }
    QByteArray datasetContainer() override { return {}; }
    void joined(std::shared_ptr<RemoteWorker>) override {}
    void probed(const QString&, const QString&, const LinkProbe&) override {}
    void sessionGone(HubSession*) override {}
    void postAssign(HubSession*, WorkRequest) override {}
    QObject* networkObject() override { return nullptr; }
};

// A remote worker in `pool` with no connection behind it: for the pool's decisions alone.
void addRemote(WorkerPool& pool, const HubConfig& hc, const QString& name) {
    DeviceInfo dev;
    dev.name = QStringLiteral("cpu");
    auto remote = std::make_shared<RemoteWorker>(nullptr, nullptr, name, QString(), dev, 0, &hc);
    RemoteWorker* r = remote.get();
    pool.add(std::move(remote), r);
}

// What a checkpoint of an mlp run set up as `cfg` holds at `step`: the model, fresh Adam state
// and the run state.
struct SavedRun {
    torch::jit::Module module;
    std::unique_ptr<Optimizer> optimizer;
    RunState state;

    SavedRun(const RunConfig& cfg, int64_t step)
        : module(*buildZooModel(QStringLiteral("mlp"), 1)) {
        const ModelTensors t = modelTensors(module);
        optimizer = std::make_unique<Optimizer>(OptimizerConfig{}, t.params);
        state.config = cfg;
        state.schemaHash = QString::fromLatin1(schemaHash(t));
        state.step = step;
    }
};

} // namespace

class TestParts : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void runDescriptionNumbersKeepTheirRange() {
        // Seconds that do not fit in an int once made milliseconds used to wrap to 704 ms.
        auto r = RunConfig::fromJson(QJsonObject{{QStringLiteral("worker_timeout"), 4294968}});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.contains(QStringLiteral("worker_timeout")) &&
                     r.error().message.contains(QStringLiteral("between 1 and 86400")) &&
                     r.error().message.contains(QStringLiteral("4294968")),
                 qPrintable(r.error().message));
        // 2^32 + 1 epochs used to be reported as -2147483648.
        r = RunConfig::fromJson(QJsonObject{{QStringLiteral("epochs"), 4294967297.0}});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.contains(QStringLiteral("4294967297")),
                 qPrintable(r.error().message));
        r = RunConfig::fromJson(QJsonObject{{QStringLiteral("batch"), 2.5}});
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.contains(QStringLiteral("whole number")));
        r = RunConfig::fromJson(QJsonObject{{QStringLiteral("lr"), 0}});
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.contains(QStringLiteral("above 0")));
        r = RunConfig::fromJson(QJsonObject{{QStringLiteral("seed"), -1}});
        QVERIFY(!r.ok());
        // The limits hold at their edges, and validate() applies the same table.
        r = RunConfig::fromJson(QJsonObject{{QStringLiteral("worker_timeout"), 86400},
                                            {QStringLiteral("epochs"), 100000}});
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
        QCOMPARE(r->workerTimeoutS, 86400);
        RunConfig c;
        c.joinTimeoutS = -5;
        QVERIFY(!c.validate().ok());
        // Every field of the table exists in the description written by toJson.
        const QJsonObject written = RunConfig().toJson();
        for (const RunField& f : runFields())
            QVERIFY2(written.contains(QLatin1String(f.key)), f.key);
    }
    void aShardedRunSaysWhatItNeeds() {
        // "shard" travels in the run description; a sharded run is a sync run with workers and
        // every weight trained, over any wire, and each refusal says what to change.
        const QJsonObject sharded{{QStringLiteral("shard"), true},
                                  {QStringLiteral("mode"), QStringLiteral("sync")},
                                  {QStringLiteral("listen"), QStringLiteral("127.0.0.1:0")},
                                  {QStringLiteral("workers"), 2}};
        auto r = RunConfig::fromJson(sharded);
        QVERIFY2(r.ok() && r->shard, qPrintable(r.ok() ? QString() : r.error().message));
        QVERIFY(RunConfig::fromJson(r->toJson())->shard);
        // The coordinator logs the ranges' steps unless told not to ("shard_log": false).
        QVERIFY(r->shardLog);
        QJsonObject unlogged = sharded;
        unlogged.insert(QStringLiteral("shard_log"), false);
        QVERIFY(!RunConfig::fromJson(RunConfig::fromJson(unlogged)->toJson())->shardLog);
        QJsonObject wrongType = sharded;
        wrongType.insert(QStringLiteral("shard"), 1);
        QVERIFY(!RunConfig::fromJson(wrongType).ok());
        wrongType = sharded;
        wrongType.insert(QStringLiteral("shard_log"), QStringLiteral("yes"));
        QVERIFY(!RunConfig::fromJson(wrongType).ok());
        RunConfig c;
        c.model = QStringLiteral("mlp");
        c.data = QStringLiteral("fashion-mnist");
        c.shard = true;
        const auto refusal = [&] { return c.validate().error().message; };
        QVERIFY(refusal().contains(QStringLiteral("--mode sync or local-sgd")));
        c.mode = TrainMode::Sync;
        QVERIFY(refusal().contains(QStringLiteral("--workers N")));
        c.listen = QStringLiteral("127.0.0.1:0");
        c.workers = 2;
        QVERIFY(c.validate().ok());
        // Local-SGD's outer state shards as sync's optimizer does; its streamed fragments do not.
        c.mode = TrainMode::LocalSgd;
        QVERIFY(c.validate().ok());
        c.fragments = 2; // streaming shards its outer state too
        QVERIFY(c.validate().ok());
        c.fragments = 1;
        c.mode = TrainMode::Sync;
        for (const WireDtype wire : {WireDtype::Bf16, WireDtype::Fp16}) {
            c.wire = wire;
            QVERIFY(c.validate().ok());
        }
        c.model = QStringLiteral("hf:/models/qwen");
        c.lora = QStringLiteral("r=8");
        QVERIFY2(refusal().contains(QStringLiteral("leave out --shard")), qPrintable(refusal()));
    }
    void workerRefusesSettingsItCannotRead() {
        // A worker computes with the run's settings or not at all: defaults in their place
        // would train another run than the one the coordinator shows.
        RunConfig c;
        c.optimizer = OptimizerKind::AdamW;
        c.loss = LossKind::Mse;
        c.precision = Precision::Bf16;
        auto ok = replicaOptions(workerSettings(c));
        QVERIFY2(ok.ok(), qPrintable(ok ? QString() : ok.error().message));
        QCOMPARE(ok->loss, LossKind::Mse);
        QCOMPARE(ok->precision, Precision::Bf16);
        QCOMPARE(ok->innerOptimizer.kind, OptimizerKind::AdamW);
        QCOMPARE(ok->innerOptimizer.weightDecay, 0.01); // AdamW's default, as the run applies it
        // Values outside the run description's limits are refused, naming the setting.
        wire::WorkerSettings bad = workerSettings(c);
        bad.momentum = 7;
        auto outside = replicaOptions(bad);
        QVERIFY(!outside.ok());
        QCOMPARE(outside.error().code, ErrorCode::Incompatible);
        QVERIFY2(outside.error().message.contains(QLatin1String("momentum")),
                 qPrintable(outside.error().message));
        // The loss is the coordinator's to resolve; a worker never picks one itself.
        wire::WorkerSettings unresolved = workerSettings(c);
        unresolved.loss = LossKind::Auto;
        QVERIFY(!replicaOptions(unresolved).ok());
    }

    // A worker a sharded run sent away waits when it comes back: it is not taken in, nor
    // counted as one waiting, until its wait is up; each time it is held back again the wait
    // doubles, up to 32 times the first. Other workers that come are taken in at once, and so is
    // one held back when the run has no worker left to wait for it.
    void aWorkerSentAwayWaitsBeforeItIsTakenIn() {
        Recording obs;
        WorkerPool pool(obs);
        QuietHost host;
        DeviceInfo dev;
        dev.name = QStringLiteral("cpu");
        const auto comes = [&](const char* name, const char* device) {
            pool.hubSink()(HubEvent::joined(std::make_shared<RemoteWorker>(
                &host, nullptr, QLatin1String(name), QLatin1String(device), dev, 0, &host.cfg)));
        };
        QCOMPARE(pool.holdBack(QStringLiteral("D1"), 2000), 2000);
        comes("w1", "D1");
        QVERIFY(!pool.anyJoined());
        pool.admitJoined();
        QCOMPARE(pool.size(), size_t(0));
        QVERIFY2(
            obs.messages.filter(QStringLiteral("w1 came back; it is taken in again in")).size() ==
                1,
            qPrintable(obs.messages.join(QLatin1Char('\n'))));
        comes("w2", "D2"); // never sent away
        QVERIFY(pool.anyJoined());
        pool.admitJoined();
        QCOMPARE(pool.size(), size_t(1));
        QCOMPARE(pool.at(0).stats.name, QStringLiteral("w2"));
        QVERIFY(QTest::qWaitFor([&] { return pool.anyJoined(); }, 10000));
        pool.admitJoined();
        QCOMPARE(pool.size(), size_t(2));
        QCOMPARE(pool.at(1).stats.name, QStringLiteral("w1"));
        // Each time again, twice as long, up to 32 times.
        for (qint64 expected : {4000, 8000, 16000, 32000, 64000, 64000})
            QCOMPARE(pool.holdBack(QStringLiteral("D1"), 2000), expected);
        comes("w1", "D1");
        QVERIFY(!pool.anyJoined());
        pool.admitJoined(/*evenHeld=*/true);
        QCOMPARE(pool.size(), size_t(3));
    }

    // Streaming plans a round before the rounds in flight are back. A worker that would end
    // every round late is left out of them as in sync, and said to be; its re-measurement's
    // slice is awaited across the rounds planned meanwhile, which do not judge it on what was
    // known before; and once it shows the worker would help, it takes part again.
    void poolLeavesOutOfStreamingRounds() {
        Recording obs;
        WorkerPool pool(obs);
        pool.add(std::make_shared<FakeLink>(QStringLiteral("fast"), 1));
        pool.add(std::make_shared<FakeLink>(QStringLiteral("slow"), 1));
        WorkResult r;
        r.samples = 32;
        r.computeMs = 10;
        for (int i = 0; i < ThroughputBalancer::kMinToJudge; ++i) {
            pool.record(0, r, 10, true);
            pool.record(1, r, 5000, true);
        }
        std::vector<int64_t> counts = pool.roundShares(pool.live(), 64, 4, 3);
        QCOMPARE(counts, (std::vector<int64_t>{64, 0}));
        QCOMPARE(pool.at(1).slot, WorkerSlot::LeftOut);
        QCOMPARE(obs.events.size(), size_t(1));
        QCOMPARE(obs.events[0].kind, RunEvent::Kind::WorkerLeftOut);
        QVERIFY2(obs.events[0].reason.contains(QStringLiteral("would slow the run")),
                 qPrintable(obs.events[0].reason));
        QVERIFY(obs.messages.last().startsWith(QStringLiteral("leaving slow out")));
        QCOMPARE(pool.roundShares(pool.live(), 64, 4, 4), (std::vector<int64_t>{64, 0}));
        QCOMPARE(obs.events.size(), size_t(1));
        // Its re-measurement: a small slice, and the next round, planned before that slice is
        // back, leaves it waiting for it rather than out again with a longer wait.
        const int64_t probeRound = 3 + WorkerPool::kProbeEvery;
        counts = pool.roundShares(pool.live(), 64, 4, probeRound);
        QCOMPARE(counts, (std::vector<int64_t>{56, 8}));
        QCOMPARE(pool.at(1).slot, WorkerSlot::Probing);
        counts = pool.roundShares(pool.live(), 64, 4, probeRound + 1);
        QCOMPARE(counts, (std::vector<int64_t>{64, 0}));
        QCOMPARE(pool.at(1).slot, WorkerSlot::Probing);
        QCOMPARE(pool.at(1).probeEvery, WorkerPool::kProbeEvery);
        // The slice comes back as fast as the other's: it takes part again, and says so.
        r.samples = 8;
        r.computeMs = 2.5;
        pool.record(1, r, 2.5, true);
        counts = pool.roundShares(pool.live(), 64, 4, probeRound + 2);
        QVERIFY2(counts[1] > 16, qPrintable(QString::number(counts[1])));
        QCOMPARE(pool.at(1).slot, WorkerSlot::Active);
        QCOMPARE(obs.events.back().kind, RunEvent::Kind::WorkerBack);
        QCOMPARE(obs.messages.last(), QStringLiteral("slow takes part again"));
    }

    void poolLeavesOutProbesAndDrops() {
        Recording obs;
        WorkerPool pool(obs);
        pool.add(std::make_shared<FakeLink>(QStringLiteral("fast"), 1));
        pool.add(std::make_shared<FakeLink>(QStringLiteral("slow"), 1));
        // Unmeasured workers share equally.
        auto counts = pool.shares(pool.live(), 64, 1, 0, true);
        QCOMPARE(counts, (std::vector<int64_t>{32, 32}));
        // The slow one's communication costs far more than a step's compute: left out, once.
        WorkResult r;
        r.samples = 32;
        r.computeMs = 10;
        for (int i = 0; i < ThroughputBalancer::kMinToJudge; ++i) {
            pool.record(0, r, 10, true);
            pool.record(1, r, 5000, true);
        }
        counts = pool.shares(pool.live(), 64, 1, 3, true);
        QCOMPARE(counts, (std::vector<int64_t>{64, 0}));
        QCOMPARE(pool.at(1).slot, WorkerSlot::LeftOut);
        QCOMPARE(obs.events.size(), size_t(1));
        QCOMPARE(obs.events[0].kind, RunEvent::Kind::WorkerLeftOut);
        QCOMPARE(obs.events[0].worker, QStringLiteral("slow"));
        QVERIFY2(obs.events[0].reason.contains(QStringLiteral("would slow the run")) &&
                     obs.events[0].reason.contains(QStringLiteral("4990 ms moving the weights")),
                 qPrintable(obs.events[0].reason));
        // Later rounds of a step decide nothing.
        pool.shares(pool.live(), 8, 1, 4, false);
        QCOMPARE(obs.events.size(), size_t(1));
        // After kProbeEvery steps it is measured again with a small slice.
        counts = pool.shares(pool.live(), 64, 1, 3 + WorkerPool::kProbeEvery, true);
        QCOMPARE(counts[1], int64_t(8));
        QCOMPARE(counts[0] + counts[1], int64_t(64));
        QCOMPARE(pool.at(1).slot, WorkerSlot::Probing);
        // The probe was fast: it takes part again, and says so.
        for (int i = 0; i < ThroughputBalancer::kWindow; ++i)
            pool.record(1, r, 10, true);
        counts = pool.shares(pool.live(), 64, 1, 4 + WorkerPool::kProbeEvery, true);
        QVERIFY(counts[1] > 0);
        QCOMPARE(pool.at(1).slot, WorkerSlot::Active);
        QCOMPARE(obs.events.back().kind, RunEvent::Kind::WorkerBack);
        // A failure drops it for good, with the reason.
        pool.drop(0, makeError(ErrorCode::Runtime, QStringLiteral("lid closed")),
                  QStringLiteral("its samples go to the others"), 60);
        QCOMPARE(pool.live(), (std::vector<size_t>{1}));
        QCOMPARE(obs.events.back().kind, RunEvent::Kind::WorkerDropped);
        QCOMPARE(obs.events.back().reason, QStringLiteral("lid closed"));
        QVERIFY(obs.messages.last().startsWith(QStringLiteral("dropped fast: lid closed")));
        const QList<WorkerSummary> s = pool.summaries();
        QCOMPARE(s[0].status, WorkerSummary::Status::Dropped);
        QCOMPARE(s[1].status, WorkerSummary::Status::Active);
    }

    // The balancer's model can be wrong in ways its measurements never show: a device whose
    // CPU quota runs out partway through a step reports a compute time that looks worth a
    // share, yet every step it takes part in ends late. In sync the pool also judges a remote
    // worker by the run's own steps, with it against without it. Here a "laptop" reports
    // 3 ms a sample beside this machine's 1 ms, so the model gives it a quarter of each step;
    // each step also has `serial` ms of the coordinator's own (the optimizer's step), and
    // each the laptop takes part in stalls `stall` ms more.
    // - A 40 ms stall: after kJudgeSteps steps with it, and as many timed without it, it is
    //   left out on the steps' own figures; timed again 50 steps later, then 100 and 200, and
    //   left out again each time; the run costs at most 4 % more than this machine alone.
    // - A 10 ms stall: its steps (78 ms) are not clearly shorter than the model's 64 ms for this
    //   machine's compute alone, so kJudgeSteps steps are timed without it (84 ms): it stays.
    // - Neither: its steps (48 ms) are shorter than 64 ms, and no step goes without it.
    void poolJudgesAWorkerByTheRunsSteps() {
        // Through the end of its third return's timing (step 399 on, see below).
        constexpr int64_t n = 64, steps = 399 + WorkerPool::kJudgeSteps;
        struct Case {
            double stall, serial;
            const char* what;
        };
        for (const Case& c : {Case{40, 20, "slows"}, Case{10, 20, "trial"}, Case{0, 0, "helps"}}) {
            const auto ms = [&](const std::vector<int64_t>& k) {
                return c.serial +
                       std::max(1.0 * double(k[0]), k[1] > 0 ? 3.0 * double(k[1]) + c.stall : 0.0);
            };
            Recording obs;
            WorkerPool pool(obs);
            pool.add(std::make_shared<FakeLink>(QStringLiteral("local"), 1));
            HubConfig hc;
            addRemote(pool, hc, QStringLiteral("laptop"));
            double together = 0, alone = 0;
            std::vector<int64_t> in; // the steps the laptop took part in past its entry
            for (int64_t step = 0; step < steps; ++step) {
                const std::vector<int64_t> counts = pool.shares(pool.live(), n, 1, step, true);
                QCOMPARE(counts[0] + counts[1], n);
                for (size_t i = 0; i < 2; ++i)
                    if (counts[i] > 0) {
                        WorkResult r;
                        r.samples = counts[i];
                        r.computeMs = (i == 0 ? 1.0 : 3.0) * double(counts[i]);
                        pool.record(i, r, r.computeMs, true);
                    }
                const double took = ms(counts);
                together += took;
                alone += ms({n, 0});
                pool.stepTook(counts, n, took, step);
                if (step > 2 && counts[1] > 0)
                    in.push_back(step);
            }
            QStringList l;
            for (int64_t s : in)
                l << QString::number(s);
            const QString what = QStringLiteral("%1: %2 ms together, %3 alone; the laptop took "
                                                "part in steps %4")
                                     .arg(QLatin1String(c.what))
                                     .arg(together)
                                     .arg(alone)
                                     .arg(l.join(QLatin1Char(' ')));
            const QStringList timing =
                obs.messages.filter(QStringLiteral("timing %1 steps").arg(WorkerPool::kJudgeSteps));
            if (c.stall >= 40) {
                // In for kJudgeSteps past its entry (steps 0 to 2), out for a trial of as many,
                // judged on its first step back and left out; timed again 50, 100 and 200
                // steps after each verdict, for kJudgeSteps each time.
                const int64_t k = WorkerPool::kJudgeSteps, back1 = 3 + 2 * k + 50,
                              back2 = back1 + k - 1 + 100, back3 = back2 + k - 1 + 200;
                std::vector<int64_t> expected;
                for (const int64_t from : {int64_t(3), back1, back2, back3})
                    for (int64_t j = 0; j < k; ++j)
                        expected.push_back(from + j);
                expected.insert(expected.begin() + k, 3 + 2 * k);
                QVERIFY2(in == expected, qPrintable(what));
                QVERIFY2(together <= 1.04 * alone, qPrintable(what));
                QCOMPARE(pool.at(1).slot, WorkerSlot::LeftOut);
                QVERIFY2(obs.events.size() == 7, qPrintable(obs.messages.join(QLatin1Char('\n'))));
                const RunEvent& out = obs.events[0];
                QCOMPARE(out.kind, RunEvent::Kind::WorkerLeftOut);
                QCOMPARE(out.step, 3 + 2 * k);
                QVERIFY2(out.reason.startsWith(QStringLiteral("it slowed the run: steps took")),
                         qPrintable(out.reason));
                QVERIFY2(out.withMs > out.stepMs && qAbs(out.stepMs - ms({n, 0})) < 1,
                         qPrintable(QStringLiteral("%1 %2").arg(out.withMs).arg(out.stepMs)));
                QVERIFY2(obs.messages
                                 .filter(QStringLiteral("leaving laptop out: it slowed the "
                                                        "run"))
                                 .size() == 4,
                         qPrintable(obs.messages.join(QLatin1Char('\n'))));
                for (size_t k = 1; k < obs.events.size(); ++k)
                    QCOMPARE(obs.events[k].kind,
                             k % 2 ? RunEvent::Kind::WorkerBack : RunEvent::Kind::WorkerLeftOut);
                QCOMPARE(obs.events[3].step - obs.events[2].step, 2 * WorkerPool::kProbeEvery);
                const QList<WorkerSummary> s = pool.summaries();
                QCOMPARE(s[1].status, WorkerSummary::Status::LeftOut);
                QVERIFY(s[1].reason.startsWith(QStringLiteral("it slowed the run")));
            } else {
                // Every step but the trial's, if any: one in 400 steps.
                const int64_t trial = c.stall > 0 ? WorkerPool::kJudgeSteps : 0;
                QVERIFY2(in.size() == size_t(steps - 3 - trial), qPrintable(what));
                QVERIFY2(timing.size() == (trial > 0 ? 1 : 0), qPrintable(what));
                QVERIFY2(together <= (c.stall > 0 ? 0.95 : 0.8) * alone, qPrintable(what));
                QCOMPARE(pool.at(1).slot, WorkerSlot::Active);
                QVERIFY(obs.events.empty()); // never left out
            }
        }
    }

    // A run of a fixed-cost "GPU" (this machine's own worker: 8 ms a step plus 0.03 ms a
    // sample) and a remote per-sample "CPU" (13 ms moving the weights, then 10 ms plus 0.46 ms a
    // sample) through the pool's shares and measurements, step by step. At 256 samples a step
    // the CPU cannot help (23 ms before its first sample against the GPU's 15.7 ms alone): it
    // enters on three small slices, is left out, and is measured again ever more rarely, so the
    // run costs at most 3 % more than the GPU alone. At 4,096 it can help: it keeps a share
    // that ends with the GPU's, within 2 % of the best split, 5 % shorter than the GPU's alone.
    void poolEntersAWorkerOnSlicesAndLeavesItOutWhenItCannotHelp() {
        struct Timing {
            double linkMs, fixedMs, perSampleMs;
            double ms(int64_t b) const { return linkMs + fixedMs + perSampleMs * double(b); }
        };
        const Timing gpu{0, 8, 0.03}, cpu{13, 10, 0.46};
        for (const int64_t batch : {int64_t(256), int64_t(4096)}) {
            Recording obs;
            WorkerPool pool(obs);
            pool.add(std::make_shared<FakeLink>(QStringLiteral("gpu"), 1));
            HubConfig hc;
            addRemote(pool, hc, QStringLiteral("cpu"));
            const int64_t steps = 400;
            double together = 0, lastSteps = 0;
            std::vector<int64_t> cpuSteps;
            for (int64_t step = 0; step < steps; ++step) {
                const std::vector<int64_t> counts = pool.shares(pool.live(), batch, 1, step, true);
                QCOMPARE(counts[0] + counts[1], batch);
                double longest = 0;
                for (size_t i = 0; i < 2; ++i) {
                    if (counts[i] == 0)
                        continue;
                    const Timing& t = i == 0 ? gpu : cpu;
                    WorkResult res;
                    res.samples = counts[i];
                    res.computeMs = t.fixedMs + t.perSampleMs * double(counts[i]);
                    // A fresh worker's first step loads and allocates: three times as long.
                    const double ms = t.ms(counts[i]) * (pool.at(i).served == 0 ? 3 : 1);
                    pool.at(i).served++;
                    pool.record(i, res, ms, true);
                    longest = std::max(longest, ms);
                }
                together += longest;
                if (step >= steps - 100)
                    lastSteps += longest;
                if (counts[1] > 0)
                    cpuSteps.push_back(step);
            }
            const double alone = double(steps + 2) * gpu.ms(batch); // its first step thrice
            const QString what = QStringLiteral("batch %1: %2 ms together, %3 ms the GPU alone; "
                                                "the CPU took part in %4 steps: %5")
                                     .arg(batch)
                                     .arg(together)
                                     .arg(alone)
                                     .arg(cpuSteps.size())
                                     .arg([&] {
                                         QStringList l;
                                         for (size_t k = 0; k < cpuSteps.size() && k < 12; ++k)
                                             l << QString::number(cpuSteps[k]);
                                         return l.join(QLatin1Char(' '));
                                     }());
            if (batch == 256) {
                // Three entry slices, left out at step 3, then re-measured 50, 100 and 200
                // steps apart.
                QVERIFY2(cpuSteps == (std::vector<int64_t>{0, 1, 2, 53, 153, 353}),
                         qPrintable(what));
                QVERIFY2(together <= 1.03 * alone, qPrintable(what));
                QCOMPARE(pool.at(1).slot, WorkerSlot::LeftOut);
                QVERIFY(obs.events.front().reason.contains(QStringLiteral("would slow the run")));
            } else {
                // Past its entry it takes part in every step, and the step ends sooner.
                QCOMPARE(int64_t(cpuSteps.size()), steps);
                // The share at which both end together, and that step's time.
                const double best = (gpu.ms(batch) - cpu.linkMs - cpu.fixedMs) /
                                    (gpu.perSampleMs + cpu.perSampleMs);
                const double bestMs = cpu.ms(int64_t(best));
                QVERIFY2(lastSteps / 100 <= 1.02 * bestMs,
                         qPrintable(what + QStringLiteral(": the last 100 steps took %1 ms each, "
                                                          "the best split %2 ms")
                                               .arg(lastSteps / 100)
                                               .arg(bestMs)));
                QVERIFY2(bestMs < 0.96 * gpu.ms(batch), qPrintable(what));
            }
        }
    }

    // A remote worker's sync result is unpacked and checked as it arrives, off the training
    // thread; a result with a NaN, an infinity or bytes that do not fit the model is refused
    // with its reason, and the worker is failed rather than the node.
    void remoteResultsAreCheckedAsTheyArrive() {
        QuietHost host;
        host.cfg.mode = TrainMode::Sync;
        host.cfg.wire = DType::F32;
        const std::vector<at::Tensor> params{at::zeros({3}), at::zeros({2, 2})};
        host.cfg.layout = ModelLayout::of({"a", "b"}, params, {}, {});
        struct Case {
            const char* name;
            float poison; // written into the second tensor's last value
            bool truncate;
            const char* error; // empty: accepted
        };
        const Case cases[] = {{"finite", 0.5f, false, ""},
                              {"nan", std::nanf(""), false, "not finite"},
                              {"infinite", INFINITY, false, "not finite"},
                              {"short", 0.5f, true, "malformed gradients"}};
        for (const Case& c : cases) {
            DeviceInfo dev;
            dev.name = QStringLiteral("cpu");
            RemoteWorker w(&host, nullptr, QStringLiteral("w"), QString(), dev, 0, &host.cfg);
            WorkRequest req;
            req.step = 4;
            req.weightsVersion = 4;
            req.indices = {1, 2};
            w.submit(req);
            std::vector<at::Tensor> grads{at::full({3}, 0.25f), at::full({2, 2}, 0.5f)};
            grads[1].view({-1})[3] = c.poison;
            QByteArray bytes = packBundle(grads, {}, DType::F32, nullptr, BundleOrder::Backward);
            if (c.truncate)
                bytes.chop(4);
            wire::Result r;
            r.step = 4;
            r.weightsVersion = 4;
            r.samples = 2;
            r.counted = 2;
            r.lossSum = 1.0;
            QCOMPARE(w.deliver(r, bytes), RemoteWorker::Delivery::Kept);
            const Expected<WorkResult> out = w.wait();
            if (!*c.error) {
                QVERIFY2(out, c.name);
                QCOMPARE(out->grads.size(), size_t(2));
                QVERIFY(at::equal(out->grads[1], grads[1]));
                QVERIFY(w.alive());
            } else {
                QVERIFY2(!out, c.name);
                QVERIFY2(out.error().message.contains(QLatin1String(c.error)),
                         qPrintable(out.error().message));
                QVERIFY(!w.alive());
            }
        }
    }

    // A worker whose link, by its handshake's probe, cannot move the weights and the gradients
    // within the step the others take without it is left out before it computes anything:
    // it waits out the first step (nothing is measured yet to judge it against), and is then
    // left out with its link's figures, never having cost a step. A fast link enters as usual.
    void poolLeavesOutAWorkerWhoseLinkIsTooSlow() {
        for (const double bytesPerSecond : {1.25e6, 1.25e9}) {
            Recording obs;
            WorkerPool pool(obs);
            pool.setHasHub(true);
            pool.setStepBytes(4'800'000); // mnist-cnn's weights in fp32
            pool.add(std::make_shared<FakeLink>(QStringLiteral("local"), 1));
            HubConfig hc;
            addRemote(pool, hc, QStringLiteral("laptop"));
            LinkProbe link;
            link.bytesPerSecond = bytesPerSecond; // 10 Mbit/s, then 10 Gbit/s
            link.rttMs = 30;
            pool.hubSink()(HubEvent::probed(QStringLiteral("laptop"), link));
            std::vector<int64_t> counts = pool.shares(pool.live(), 128, 1, 0, true);
            QCOMPARE(counts, (std::vector<int64_t>{128, 0})); // waits a step
            QVERIFY(obs.events.empty());
            WorkResult res;
            res.samples = 128;
            res.computeMs = 40;
            pool.record(0, res, 40, true);
            counts = pool.shares(pool.live(), 128, 1, 1, true);
            if (bytesPerSecond < 1e7) {
                QCOMPARE(counts, (std::vector<int64_t>{128, 0}));
                QCOMPARE(pool.at(1).slot, WorkerSlot::LeftOut);
                QCOMPARE(obs.events.size(), size_t(1));
                QCOMPARE(obs.events[0].kind, RunEvent::Kind::WorkerLeftOut);
                QVERIFY2(obs.events[0].reason.contains(QStringLiteral(
                             "moving the weights there and the gradients back takes 7710 ms a "
                             "step over its link (1.3 MB/s")),
                         qPrintable(obs.events[0].reason));
                QVERIFY(qAbs(obs.events[0].costMs - 7710) < 1);
                // It stays out, with no slice to re-measure it (that would move the model over
                // the slow link): its link's live probes judge it, and a faster one lets it in.
                counts = pool.shares(pool.live(), 128, 1, 2, true);
                QCOMPARE(counts[1], int64_t(0));
                counts = pool.shares(pool.live(), 128, 1, 1 + WorkerPool::kProbeEvery, true);
                QCOMPARE(counts[1], int64_t(0));
                QCOMPARE(pool.at(1).slot, WorkerSlot::LeftOut);
                link.bytesPerSecond = 1.25e9;
                pool.hubSink()(HubEvent::relinked(QStringLiteral("laptop"), link));
                counts = pool.shares(pool.live(), 128, 1, 2 + WorkerPool::kProbeEvery, true);
                QCOMPARE(pool.at(1).slot, WorkerSlot::Active);
                QCOMPARE(obs.events.back().kind, RunEvent::Kind::WorkerBack);
                counts = pool.shares(pool.live(), 128, 1, 3 + WorkerPool::kProbeEvery, true);
                QCOMPARE(counts, (std::vector<int64_t>{120, 8})); // on its entry slices
            } else {
                QCOMPARE(counts, (std::vector<int64_t>{120, 8})); // its first entry slice
                QVERIFY(obs.events.empty());
            }
        }
    }

    void poolAdmitsWorkersTheHubHandsOver() {
        Recording obs;
        WorkerPool pool(obs);
        QCOMPARE(pool.waitForJoined(1, 0, {}), 0); // no hub: nothing to wait for
        pool.setHasHub(true);
        auto sink = pool.hubSink();
        HubConfig hc;
        DeviceInfo dev;
        dev.name = QStringLiteral("cuda:0");
        sink(HubEvent::note(QStringLiteral("worker gpu joined")));
        sink(HubEvent::joined(std::make_shared<RemoteWorker>(
            nullptr, nullptr, QStringLiteral("gpu"), QString(), dev, 16, &hc)));
        QCOMPARE(pool.waitForJoined(1, 10000, {}), 1);
        QCOMPARE(pool.size(), size_t(0)); // not before the step boundary
        pool.admitJoined();
        QCOMPARE(pool.size(), size_t(1));
        QCOMPARE(pool.at(0).stats.device, QStringLiteral("cuda:0"));
        QCOMPARE(pool.at(0).cap(4), int64_t(64)); // --max-batch is per forward pass
        QCOMPARE(obs.messages, QStringList{QStringLiteral("worker gpu joined")});
        QCOMPARE(obs.events.back().kind, RunEvent::Kind::WorkerJoined);
    }

    // Two workers' gradients combine weighted by their shares: the mean over the batch.
    void syncCombinesByShare() {
        Bench b(8, 4);
        auto one = b.add("one", 1);
        auto two = b.add("two", 3);
        auto policy = makeSyncPolicy();
        auto end = policy->runEpoch(*b.ctx);
        QVERIFY(end);
        QCOMPARE(*end, EpochEnd::Complete);
        QCOMPARE(b.outcomes.size(), size_t(2));
        // Equal shares of 2: the mean gradient is 2, and SGD at lr 1e-3 moved w twice by it.
        QCOMPARE(one->requests.size(), size_t(2));
        QCOMPARE(one->requests[0].indices.size(), size_t(2));
        QVERIFY(!one->requests[0].local);
        const float w = b.master.params[0][0].item<float>();
        QVERIFY2(std::abs(w - float(-2 * 2 * b.cfg.lr)) < 1e-7, qPrintable(QString::number(w)));
        QCOMPARE(b.outcomes[0].samples, int64_t(4));
        QCOMPARE(b.outcomes[0].workers.size(), 2);
        QCOMPARE(b.outcomes[0].lossSum, 2 * 1.0 + 2 * 3.0);
        // Every sample of the epoch went to exactly one worker.
        QSet<int64_t> seen;
        for (auto* l : {one.get(), two.get()})
            for (const WorkRequest& r : l->requests)
                for (int64_t i : r.indices) {
                    QVERIFY(!seen.contains(i));
                    seen.insert(i);
                }
        QCOMPARE(seen.size(), 8);
    }

    // Results are collected in turn. A fast worker's result that arrived while a slow one's
    // was awaited is timed to its arrival: the wait is the fast worker's idle time, not its
    // overhead, and the balancer moves samples to it rather than to the slow one.
    void syncTimesAResultToItsArrival() {
        Bench b(64 * 8, 64);
        auto slow = b.add("slow", 1);
        slow->delayMs = 150;
        auto fast = b.add("fast", 1);
        fast->arriveAtOnce = true;
        auto policy = makeSyncPolicy();
        auto end = policy->runEpoch(*b.ctx);
        QVERIFY(end);
        QCOMPARE(b.outcomes.size(), size_t(8));
        int waited = 0;
        for (const StepOutcome& o : b.outcomes) {
            QCOMPARE(o.workers.size(), 2);
            QCOMPARE(o.workers[1].name, QStringLiteral("fast"));
            if (o.workers[0].samples == 0)
                continue; // the slow one left out: nobody waited
            ++waited;
            // Before this was fixed, the fast worker's wait counted as its round trip: 0 ms.
            QVERIFY2(o.workers[1].waitMs >= 100, qPrintable(QString::number(o.workers[1].waitMs)));
        }
        QVERIFY(waited >= 3); // a worker is judged after 3 measurements
        // Both compute at the same speed; once judged, the slow one's 150 ms of overhead gives
        // the fast one the larger share (equal when both were charged the 150 ms).
        const StepOutcome& last = b.outcomes.back();
        QVERIFY2(last.workers[1].samples > last.workers[0].samples,
                 qPrintable(QStringLiteral("%1 against %2")
                                .arg(last.workers[1].samples)
                                .arg(last.workers[0].samples)));
    }

    // A worker that fails mid-step: its samples go to the other, none lost, none twice.
    void syncHandsAFailedShareToTheOthers() {
        Bench b(4, 4);
        auto one = b.add("one", 1);
        auto two = b.add("two", 1);
        two->failNext = true;
        auto end = makeSyncPolicy()->runEpoch(*b.ctx);
        QVERIFY(end);
        QCOMPARE(b.outcomes.size(), size_t(1));
        QCOMPARE(b.outcomes[0].samples, int64_t(4));
        QCOMPARE(one->requests.size(), size_t(2)); // its share, then the failed one's
        QCOMPARE(one->requests[0].indices.size() + one->requests[1].indices.size(), size_t(4));
        QCOMPARE(b.obs.events.back().kind, RunEvent::Kind::WorkerDropped);
        QVERIFY(b.obs.messages.last().contains(QStringLiteral("go to the others")));
    }

    void syncStopsAtTheGate() {
        Bench b(8, 4);
        b.add("one", 1);
        b.ctx->gate = [] { return Gate::Stop; };
        auto end = makeSyncPolicy()->runEpoch(*b.ctx);
        QVERIFY(end);
        QCOMPARE(*end, EpochEnd::Stopped);
        QVERIFY(b.outcomes.empty());
    }

    // Local-SGD: rounds of H inner steps, the deltas applied by the outer Nesterov optimizer.
    void localSgdAsksForRoundsOfInnerSteps() {
        auto policy = makeLocalSgdPolicy();
        RunConfig cfg;
        cfg.localSteps = 4;
        cfg.batch = 2;
        QCOMPARE(policy->samplesPerStep(cfg), int64_t(8));
        const OptimizerConfig outer = policy->serverOptimizer(cfg, OptimizerConfig{});
        QCOMPARE(outer.kind, OptimizerKind::Sgd);
        QVERIFY(outer.nesterov);
        QCOMPARE(outer.momentum, cfg.outerMomentum);

        Bench b(16, 2, outer);
        b.cfg.localSteps = 4;
        b.cfg.outerLr = 0.5;
        auto one = b.add("one", 1);
        auto end = policy->runEpoch(*b.ctx);
        QVERIFY(end);
        QCOMPARE(b.outcomes.size(), size_t(2));
        QCOMPARE(one->requests[0].indices.size(), size_t(8));
        QVERIFY(one->requests[0].local);
        QCOMPARE(one->requests[0].local->innerSteps, 4);
        QCOMPARE(one->requests[0].local->innerLr, b.cfg.lr);
        // The first outer step: momentum buffer = delta, Nesterov step = lr * (1 + 0.9) * delta.
        const float w0 = -0.5f * 1.9f;
        const float w = b.master.params[0][0].item<float>();
        QVERIFY(std::abs(w - (w0 + -0.5f * (0.9f * 1.9f + 1.0f))) < 1e-5);
    }

    // k workers sharing a round each take 1/k of the steps one machine would over the same
    // samples: their inner learning rate is the run's times (sum n)^2 / sum n^2, unless the
    // run keeps it as given; the log says which, once, when the number of workers changes.
    void localSgdScalesTheInnerLrWithTheWorkers() {
        RunConfig cfg;
        QCOMPARE(innerLrScale(cfg, {8, 8}), 2.0);
        QCOMPARE(innerLrScale(cfg, {8}), 1.0);
        QCOMPARE(innerLrScale(cfg, {8, 0}), 1.0);
        QCOMPARE(innerLrScale(cfg, {4, 4, 4, 4}), 4.0);
        QVERIFY(std::abs(innerLrScale(cfg, {77, 23}) - 1.5485) < 1e-3);
        cfg.innerLrScaling = LrScaling::None;
        QCOMPARE(innerLrScale(cfg, {8, 8}), 1.0);

        for (const bool streaming : {false, true}) {
            for (const LrScaling scaling : {LrScaling::Workers, LrScaling::None}) {
                const QString what = QStringLiteral("%1, %2").arg(
                    streaming ? QStringLiteral("streaming") : QStringLiteral("local-sgd"),
                    nameOf(scaling));
                Bench b(64, 2, outerOptimizer(cfg));
                b.cfg.mode = TrainMode::LocalSgd;
                b.cfg.localSteps = 4;
                b.cfg.fragments = streaming ? 2 : 1;
                b.cfg.innerLrScaling = scaling;
                auto one = b.add("one", 1);
                auto two = b.add("two", 1);
                auto policy = streaming ? makeStreamingPolicy() : makeLocalSgdPolicy();
                QVERIFY2(policy->runEpoch(*b.ctx), qPrintable(what));
                // Each round's split, by the round's weights version.
                std::map<int64_t, std::vector<int64_t>> split;
                for (const auto& link : {one, two})
                    for (const WorkRequest& r : link->requests)
                        split[r.weightsVersion].push_back(int64_t(r.indices.size()));
                QVERIFY2(split.size() >= 4, qPrintable(what));
                int shared = 0;
                for (const auto& link : {one, two}) {
                    for (const WorkRequest& r : link->requests) {
                        const std::vector<int64_t>& n = split[r.weightsVersion];
                        double sum = 0, squares = 0;
                        for (const int64_t x : n) {
                            sum += double(x);
                            squares += double(x) * double(x);
                        }
                        const double want =
                            scaling == LrScaling::None ? b.cfg.lr : b.cfg.lr * sum * sum / squares;
                        QVERIFY2(std::abs(r.local->innerLr - want) < 1e-12,
                                 qPrintable(QStringLiteral("%1: %2 against %3")
                                                .arg(what)
                                                .arg(r.local->innerLr)
                                                .arg(want)));
                        shared += n.size() == 2 && n[0] == n[1] ? 1 : 0;
                    }
                }
                QVERIFY2(shared > 0, qPrintable(what)); // an even split happened: 2x, or 1x
                const QStringList said = b.obs.messages.filter(
                    QStringLiteral("2 worker(s) share each round; their inner learning rate is"));
                QVERIFY2(said.size() == 1, qPrintable(b.obs.messages.join(QLatin1Char('\n'))));
                QVERIFY2(said[0].contains(scaling == LrScaling::None
                                              ? QStringLiteral("is 0.001 as given")
                                              : QStringLiteral("is 0.002, the run's 0.001 times")),
                         qPrintable(said[0]));
            }
        }
    }

    // Streaming hands every worker two rounds before any result is in. A worker not timed yet
    // takes one batch of a round while the timed ones share the rest by speed; until one is
    // timed a round is a batch each, and the step says how many samples it left for later.
    void streamingTimesANewWorkerOnOneBatch() {
        Bench b(160, 4, outerOptimizer(RunConfig{}));
        b.cfg.mode = TrainMode::LocalSgd;
        b.cfg.localSteps = 8;
        b.cfg.fragments = 2; // rounds of 4 steps of 4: 16 samples
        auto fast = b.add("fast", 1);
        auto slow = b.add("slow", 1);
        fast->msPerSample = 1;
        slow->msPerSample = 3;
        std::shared_ptr<FakeLink> late;
        b.ctx->gate = [&] {
            if (b.step == 4 && !late) {
                late = b.add("late", 1);
                late->msPerSample = 1;
            }
            return Gate::Go;
        };
        QVERIFY(makeStreamingPolicy()->runEpoch(*b.ctx));
        const auto sizes = [](const std::shared_ptr<FakeLink>& l) {
            std::vector<size_t> n;
            for (const WorkRequest& r : l->requests)
                n.push_back(r.indices.size());
            return n;
        };
        // Rounds 1 and 2 go out together, one batch each; round 3 is split 3:1 by speed.
        QCOMPARE(sizes(fast).at(0), size_t(4));
        QCOMPARE(sizes(fast).at(1), size_t(4));
        QCOMPARE(sizes(slow).at(0), size_t(4));
        QCOMPARE(sizes(slow).at(1), size_t(4));
        QCOMPARE(sizes(fast).at(2), size_t(12));
        QCOMPARE(sizes(slow).at(2), size_t(4));
        QCOMPARE(b.outcomes.at(0).samples, int64_t(8));
        QCOMPARE(b.outcomes.at(0).shortBy, int64_t(8));
        QCOMPARE(b.outcomes.at(1).shortBy, int64_t(8));
        QCOMPARE(b.outcomes.at(2).samples, int64_t(16));
        QCOMPARE(b.outcomes.at(2).shortBy, int64_t(0));
        // The late worker's first two rounds are one batch each; the round stays whole.
        QVERIFY(late);
        QVERIFY(late->requests.size() >= 3);
        for (int r = 0; r < 2; ++r) {
            const int64_t version = late->requests[size_t(r)].weightsVersion;
            QCOMPARE(late->requests[size_t(r)].indices.size(), size_t(4));
            size_t round = 0;
            for (const auto& l : {fast, slow, late})
                for (const WorkRequest& q : l->requests)
                    round += q.weightsVersion == version ? q.indices.size() : 0;
            QCOMPARE(round, size_t(16));
        }
        QVERIFY(late->requests[2].indices.size() > slow->requests.back().indices.size());
        // Every sample once, in ten full rounds and two short ones.
        int64_t samples = 0;
        for (const StepOutcome& o : b.outcomes)
            samples += o.samples;
        QCOMPARE(samples, int64_t(160));
        QCOMPARE(b.outcomes.size(), size_t(11));
    }

    // With no outer momentum the outer step is plain SGD (LibTorch refuses Nesterov without
    // momentum); at an outer learning rate of 1 each round moves the weights by exactly the
    // worker's delta, as a sweep's one-device trials need.
    void localSgdWithoutOuterMomentumTakesTheDelta() {
        auto policy = makeLocalSgdPolicy();
        RunConfig cfg;
        cfg.outerMomentum = 0;
        const OptimizerConfig outer = policy->serverOptimizer(cfg, OptimizerConfig{});
        QVERIFY(!outer.nesterov);
        Bench b(16, 2, outer);
        b.cfg.localSteps = 4;
        b.cfg.outerLr = 1;
        b.cfg.outerMomentum = 0;
        b.add("one", 1);
        QVERIFY(policy->runEpoch(*b.ctx));
        QCOMPARE(b.outcomes.size(), size_t(2));
        QVERIFY(std::abs(b.master.params[0][0].item<float>() - -2.0f) < 1e-6f);
    }

    // Async: each result is a step of its own; one staler than the bound is dropped.
    void asyncAppliesEachResult() {
        Bench b(12, 4);
        auto one = b.add("one", 1);
        auto two = b.add("two", 1);
        auto end = makeAsyncPolicy()->runEpoch(*b.ctx);
        QVERIFY(end);
        QCOMPARE(*end, EpochEnd::Complete);
        QCOMPARE(b.outcomes.size(), size_t(3));
        for (const StepOutcome& o : b.outcomes) {
            QCOMPARE(o.samples, int64_t(4));
            QCOMPARE(o.workers.size(), 1);
        }
        QCOMPARE(one->requests.size() + two->requests.size(), size_t(3));
        // A local worker reads a snapshot of its own, not the weights the optimizer moves.
        QVERIFY(one->requests[0].params != &b.master.params);

        Bench s(12, 4);
        s.cfg.staleness = 0;
        s.add("one", 1);
        s.add("two", 1);
        QVERIFY(makeAsyncPolicy()->runEpoch(*s.ctx));
        QVERIFY(s.ctx->staleDropped > 0);
        QCOMPARE(int64_t(s.outcomes.size()) + s.ctx->staleDropped, int64_t(3));
    }

    void aStepKeepsEachMachinesShard() {
        // A sharded run's step says what each machine holds and what its links carried; a
        // reopened run reads it back, and a step of any other run says nothing of shards.
        StepMetrics sm;
        WorkerStepStats w;
        w.name = QStringLiteral("w1 (device 1F65 EBAE)");
        w.samples = 32;
        sm.workers << w;
        QVERIFY(!sm.toJson()
                     .value(QStringLiteral("workers"))
                     .toArray()
                     .at(0)
                     .toObject()
                     .contains(QStringLiteral("shard")));
        sm.workers[0].shard = 2;
        sm.workers[0].shards = 3;
        sm.workers[0].shardBytes = 1'234'567;
        sm.workers[0].linkBytes = 543'210.5;
        const WorkerStepStats back = StepMetrics::fromJson(sm.toJson()).workers.value(0);
        QCOMPARE(back.name, w.name);
        QCOMPARE(back.samples, int64_t(32));
        QCOMPARE(back.shard, 2);
        QCOMPARE(back.shards, 3);
        QCOMPARE(back.shardBytes, int64_t(1'234'567));
        QCOMPARE(back.linkBytes, 543'210.5);
    }

    void recorderWritesTheRunFolder() {
        QTemporaryDir dir;
        RunConfig cfg;
        cfg.outDir = dir.filePath(QStringLiteral("run"));
        cfg.model = QStringLiteral("mlp");
        Recorder rec(cfg);
        QVERIFY(rec.open(false, -1));
        StepMetrics sm;
        sm.step = 1;
        sm.loss = 2.5;
        QVERIFY(rec.step(sm).isEmpty());
        EpochMetrics em;
        em.test.evaluated = true;
        em.test.loss = 3.1;
        em.test.perplexity = 22.2;
        rec.epoch(em);
        RunSummary sum;
        sum.steps = 1;
        rec.summary(sum);
        QFile f(dir.filePath(QStringLiteral("run/metrics.jsonl")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        QCOMPARE(QJsonDocument::fromJson(lines[0]).object().value(QStringLiteral("type")),
                 QStringLiteral("step"));
        QCOMPARE(QJsonDocument::fromJson(lines[2]).object().value(QStringLiteral("type")),
                 QStringLiteral("summary"));
        // The epoch's figures: those its task defines as numbers, the others null.
        const QJsonObject epoch = QJsonDocument::fromJson(lines[1]).object();
        QCOMPARE(epoch.value(QStringLiteral("test_perplexity")).toDouble(), 22.2);
        QVERIFY(epoch.value(QStringLiteral("test_accuracy")).isNull());
        QVERIFY(epoch.value(QStringLiteral("test_r2")).isNull());

        SavedRun run(cfg, 7);
        QVERIFY(rec.checkpoint(run.module, *run.optimizer, run.state));
        QCOMPARE(rec.savedStep(), int64_t(7));
        auto loaded = loadRunCheckpoint(rec.checkpointPath());
        QVERIFY2(loaded, loaded ? "" : qPrintable(loaded.error().message));
        QCOMPARE(loaded->state.step, int64_t(7));
        QVERIFY(rec.exportModel(run.module));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("run/model.pt"))));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("run/model.safetensors"))));

        // A resumed run appends to the log.
        Recorder again(cfg);
        QVERIFY(again.open(true, 7));
        again.step(sm);
        f.close();
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll().trimmed().split('\n').size(), 4);
    }

    void runPlanNamesFoldersAndResumes() {
        QTemporaryDir dir;
        const QDateTime when(QDate(2026, 3, 4), QTime(5, 6, 7));
        const QString a = RunPlan::newRunFolder(dir.path(), QStringLiteral("/x/my.model.pt"), when);
        QCOMPARE(a, dir.filePath(QStringLiteral("20260304-050607-my.model")));
        QVERIFY(QDir().mkpath(a));
        const QString b = RunPlan::newRunFolder(dir.path(), QStringLiteral("/x/my.model.pt"), when);
        QCOMPARE(b, a + QStringLiteral("~2"));
        QVERIFY(QDir().mkpath(b));
        QCOMPARE(RunPlan::newRunFolder(dir.path(), QStringLiteral("/x/my.model.pt"), when),
                 a + QStringLiteral("~3"));

        // Resuming: the run as it was set up, going on in the checkpoint's folder, without the
        // step limit of the run that stopped.
        RunConfig cfg;
        cfg.model = QStringLiteral("mlp");
        cfg.outDir = QStringLiteral("/somewhere/else");
        cfg.maxSteps = 5;
        cfg.invites = {QStringLiteral("gpu-box")};
        cfg.device = QStringLiteral("cpu");
        SavedRun run(cfg, 0);
        const QString ckpt = QDir(a).filePath(QStringLiteral("checkpoint.tandem"));
        QVERIFY(writeRunCheckpoint(ckpt, run.module, *run.optimizer, run.state));
        auto resumed = RunPlan::resumeConfig(ckpt);
        QVERIFY(resumed);
        QCOMPARE(resumed->outDir, QFileInfo(a).absoluteFilePath());
        QCOMPARE(resumed->maxSteps, int64_t(0));
        QCOMPARE(resumed->invites, cfg.invites); // the app invites the same machines again
        RunPlan::forgetMachines(*resumed);       // the command line asks the new invocation
        QVERIFY(resumed->invites.isEmpty());
        QVERIFY(resumed->device.isEmpty());
        QVERIFY(RunPlan::fixedOnResume().contains(QStringLiteral("seed")));
        QVERIFY(!RunPlan::resumeConfig(dir.filePath(QStringLiteral("none.tandem"))));
    }

    void enumsReadAndWriteTheirNames() {
        QCOMPARE(nameOf(TrainMode::LocalSgd), QStringLiteral("local-sgd"));
        QVERIFY(parse<TrainMode>(QStringLiteral("async")) == TrainMode::Async);
        QVERIFY(!parse<WireDtype>(QStringLiteral("int3")));
        QCOMPARE(choices<Schedule>(), QStringLiteral("constant or cosine"));
        OptimizerKind k = OptimizerKind::Adam;
        const Status st = parseInto(QStringLiteral("lion"), k, "optimizer");
        QVERIFY(!st);
        QCOMPARE(
            st.error().message,
            QStringLiteral(
                "unknown optimizer \"lion\"; use sgd, adam, adamw, rmsprop, adagrad or adamw8bit"));
        QCOMPARE(k, OptimizerKind::Adam);
        QCOMPARE(nameOf(PeerRole::Worker), QStringLiteral("worker"));
        // A run description carries the inner learning rate's scaling both ways, and an unknown
        // one is refused with what is allowed.
        RunConfig c;
        QCOMPARE(c.innerLrScaling, LrScaling::Workers);
        c.innerLrScaling = LrScaling::None;
        auto back = RunConfig::fromJson(c.toJson());
        QVERIFY(back);
        QCOMPARE(back->innerLrScaling, LrScaling::None);
        QJsonObject o = c.toJson();
        o.insert(QStringLiteral("inner_lr_scaling"), QStringLiteral("sqrt"));
        auto refused = RunConfig::fromJson(o);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(QStringLiteral("use workers or none")),
                 qPrintable(refused.error().message));
    }

    void aLendingMachinesSpeedLeavesThePauseOut() {
        // A worker's steps of 10 samples computed in 100 ms: 100 samples/s, before a pause of
        // 1.5 s and after it (counting the pause in, the speed after Resume read about 7).
        QList<QJsonObject> events;
        WorkerEvents ev([&](const QJsonObject& e) { events << e; });
        wire::Result r;
        r.samples = 10;
        r.lossSum = 20;
        r.computeMs = 100;
        auto lastSpeed = [&] {
            return events.last().value(QStringLiteral("samples_per_s")).toDouble();
        };
        ev.stepSent(r, 0.5);
        QCOMPARE(lastSpeed(), 100.0);
        ev.paused(true);
        QTest::qWait(1500);
        ev.paused(false);
        QCOMPARE(events.last().value(QStringLiteral("event")).toString(),
                 QStringLiteral("resumed"));
        r.step = 1;
        ev.stepSent(r, 0.5);
        QCOMPARE(events.last().value(QStringLiteral("event")).toString(),
                 QStringLiteral("progress"));
        QCOMPARE(lastSpeed(), 100.0);
        QCOMPARE(events.last().value(QStringLiteral("loss")).toDouble(), 2.0);
        QCOMPARE(events.last().value(QStringLiteral("samples")).toInteger(), qint64(20));
    }

    // The lending machine's History: the worker records the run it joined, in its home, with
    // its part (samples, their loss, its share), and how it ended; a run ID that is no plain
    // name (a hostile coordinator's) cannot place the record outside the home's lent/ folder.
    void aLentRunIsRecordedInTheLendersHistory() {
        QTemporaryDir home;
        WorkerEvents ev({});
        ev.recordIn(home.path(), QStringLiteral("cuda:1"));
        ev.coordinatorName(QStringLiteral("alpha"));
        ev.joined(QStringLiteral("run-20261128-1"), TrainMode::Sync, QStringLiteral("CPU"),
                  QStringLiteral("chat:/data/chat.jsonl,context=48"));
        const QString folder = home.filePath(QStringLiteral("lent/run-20261128-1-cuda-1"));
        QCOMPARE(ev.recordFolder(), folder);
        QCOMPARE(RunHistory::listed(home.path()), QStringList{folder});
        QJsonObject r = RunHistory::read(folder);
        QCOMPARE(r.value(QStringLiteral("status")).toString(), QStringLiteral("running"));
        QCOMPARE(r.value(QStringLiteral("lent"))
                     .toObject()
                     .value(QStringLiteral("coordinator"))
                     .toString(),
                 QStringLiteral("alpha"));
        wire::Result res;
        res.samples = 10;
        res.lossSum = 20;
        res.computeMs = 100;
        ev.stepSent(res, 0.4);
        res.step = 1;
        res.lossSum = 10;
        ev.stepSent(res, 0.4);
        ev.ended({});
        r = RunHistory::read(folder);
        QCOMPARE(r.value(QStringLiteral("status")).toString(), QStringLiteral("lent"));
        QVERIFY(r.contains(QStringLiteral("ended")));
        const QJsonObject part = r.value(QStringLiteral("part")).toObject();
        QCOMPARE(part.value(QStringLiteral("samples")).toInteger(), qint64(20));
        QCOMPARE(part.value(QStringLiteral("steps")).toInteger(), qint64(2));
        QCOMPARE(part.value(QStringLiteral("loss")).toDouble(), 1.5);
        QCOMPARE(part.value(QStringLiteral("share")).toDouble(), 0.4);
        QVERIFY(part.value(QStringLiteral("samples_per_s")).toDouble() > 0);
        QCOMPARE(r.value(QStringLiteral("config")).toObject().value(QStringLiteral("data")),
                 QJsonValue(QStringLiteral("chat:/data/chat.jsonl,context=48")));

        // A failure is recorded as one, with its reason.
        WorkerEvents bad({});
        bad.recordIn(home.path(), QStringLiteral("cpu"));
        bad.joined(QStringLiteral("../../outside"), TrainMode::Sync, QStringLiteral("CPU"));
        QVERIFY2(QFileInfo(bad.recordFolder()).absolutePath() ==
                     QFileInfo(home.filePath(QStringLiteral("lent/x"))).absolutePath(),
                 qPrintable(bad.recordFolder()));
        bad.ended(QStringLiteral("cannot reach the coordinator"));
        r = RunHistory::read(bad.recordFolder());
        QCOMPARE(r.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(r.value(QStringLiteral("error")).toString(),
                 QStringLiteral("cannot reach the coordinator"));
        QCOMPARE(RunHistory::listed(home.path()).size(), 2);
        // Without a home, nothing is written.
        WorkerEvents none({});
        none.joined(QStringLiteral("run-2"), TrainMode::Sync, QStringLiteral("CPU"));
        QVERIFY(none.recordFolder().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestParts)
#include "test_parts.moc"
