// Sweeps: the description, the draws, the asha rule, and whole sweeps across two nodes.

#include "proc.h"
#include "sweep/scheduler.h"
#include "sweep/sweepconfig.h"
#include "testrows.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QUdpSocket>

using namespace tandem;

namespace {

QJsonObject parseJson(const char* text) {
    return QJsonDocument::fromJson(QByteArray(text)).object();
}

SweepConfig sweep(const char* text) {
    auto c = SweepConfig::fromJson(parseJson(text));
    if (!c)
        qFatal("%s", qPrintable(c.error().message));
    return *c;
}

const char* kSpace = R"({"model": "mlp", "data": "fashion-mnist", "epochs": 9,
    "sweep": {"space": {"lr": {"log_uniform": [0.0001, 0.1]},
                        "batch": {"choice": [32, 64, 128]},
                        "optimizer": {"choice": ["adam", "sgd"]},
                        "weight_decay": {"uniform": [0, 0.1]},
                        "warmup_steps": {"int": [0, 100]}},
              "trials": 40, "seed": 11, "scheduler": "%1"}})";

SweepConfig withScheduler(const QString& kind) {
    return sweep(QString::fromLatin1(kSpace).arg(kind).toUtf8().constData());
}

// Runs a scheduler to the end with one device and a scripted metric per trial; returns the
// records.
QList<TrialRecord> play(const SweepConfig& c, const std::function<double(int, int)>& metric) {
    TrialScheduler s(c);
    QList<TrialRecord> trials;
    for (int guard = 0; guard < 10000; ++guard) {
        auto job = s.next(trials, true);
        if (!job) {
            if (s.finish(trials))
                break;
            continue;
        }
        s.report(trials, job->trial, metric(job->trial, job->rung));
    }
    return trials;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Kills a process's children outright (a node's worker), then the process.
void killTree(TandemProcess& p) {
    for (const QFileInfo& d : QDir(QStringLiteral("/proc")).entryInfoList(QDir::Dirs)) {
        const QByteArray stat = readAll(d.filePath() + QStringLiteral("/stat"));
        const QList<QByteArray> f = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
        if (f.size() > 1 && f[1].toLongLong() == p.pid())
            ::kill(pid_t(d.fileName().toLongLong()), SIGKILL);
    }
    p.kill9();
}

QList<QJsonObject> records(const QString& sweepDir) {
    QList<QJsonObject> out;
    for (const QByteArray& l : readAll(sweepDir + QStringLiteral("/sweep.jsonl")).split('\n'))
        if (!l.trimmed().isEmpty())
            out << QJsonDocument::fromJson(l).object();
    return out;
}

QString freeUdpPort() {
    QUdpSocket probe;
    probe.bind(QHostAddress::LocalHost, 0);
    return QString::number(probe.localPort());
}

// `tandem serve` for `home` on loopback only, announcing by loopback broadcast.
QStringList serveArgs(const QString& home) {
    return {QStringLiteral("serve"),
            QStringLiteral("--home"),
            home,
            QStringLiteral("--listen=127.0.0.1:0"),
            QStringLiteral("--announce-to=127.255.255.255"),
            QStringLiteral("--discovery-port=") + freeUdpPort()};
}

// Where a served node listens, HOST:PORT; empty if it did not start.
QString nodeAddress(TandemProcess& serve) {
    const QString port = serve.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    return port.isEmpty() ? QString() : QStringLiteral("127.0.0.1:") + port;
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void drawsAreDeterministicForASeed();
    void gridCoversEveryCombination();
    void ashaPromotesTheBestThird();
    void slowDevicesStartNewTrials();
    void badSweepFilesNameTheField();
    void sweepAcrossTwoNodes();
    void resumeAfterKillRerunsNoFinishedTrial();
    void trialOfANodeThatLeavesResumesElsewhere();
    void damagedRecordsAreRefusedOnResume();
    void busyNodeDeclinesAndTheTrialIsRequeued();
    void trialStoppedFromOutsideResumes();

private:
    QString home(const char* n) const { return m_tmp.filePath(QLatin1String(n)); }
    QString writeSweep(const char* name, const QString& text) const {
        const QString path = m_tmp.filePath(QLatin1String(name));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0)
            return {};
        return path;
    }
    QTemporaryDir m_tmp;
    QString m_tiny;
};

void TestSweep::initTestCase() {
    QVERIFY(m_tmp.isValid());
    m_tiny = m_tmp.filePath(QStringLiteral("tiny"));
    testutil::writeIdxDataset(m_tiny, 600, 200, true);
}

void TestSweep::drawsAreDeterministicForASeed() {
    for (const char* kind : {"random", "asha"}) {
        const SweepConfig a = withScheduler(QLatin1String(kind));
        const SweepConfig b = withScheduler(QLatin1String(kind));
        QSet<QString> distinct;
        for (int i = 39; i >= 0; --i) { // drawn in another order than a sweep draws them
            const QJsonObject p = a.trialParams(i);
            QCOMPARE(p, b.trialParams(i));
            QCOMPARE(p.size(), 5);
            const double lr = p.value(QStringLiteral("lr")).toDouble();
            QVERIFY(lr >= 0.0001 && lr <= 0.1);
            QVERIFY(QJsonArray({32, 64, 128}).contains(p.value(QStringLiteral("batch"))));
            const double warm = p.value(QStringLiteral("warmup_steps")).toDouble();
            QVERIFY(warm >= 0 && warm <= 100 && warm == std::floor(warm));
            QVERIFY(a.trialRun(p).ok());
            distinct << QString::fromUtf8(QJsonDocument(p).toJson(QJsonDocument::Compact));
        }
        QCOMPARE(distinct.size(), 40);
        // The log-uniform draw covers its decades: about a third of 40 below 0.001.
        int low = 0;
        for (int i = 0; i < 40; ++i)
            low += a.trialParams(i).value(QStringLiteral("lr")).toDouble() < 0.001;
        QVERIFY2(low >= 5 && low <= 22, qPrintable(QString::number(low)));
        // Another seed draws other trials.
        SweepConfig other = a;
        other.seed = 12;
        QVERIFY(other.trialParams(0) != a.trialParams(0));
    }
    // The draw is pinned: seed 11 gives these values on every platform and build (the
    // generator and the seed sequence are the C++ standard's; only exp and log may differ in
    // the last digit).
    const QJsonObject first = withScheduler(QStringLiteral("random")).trialParams(0);
    QCOMPARE(first.value(QStringLiteral("batch")).toInt(), 32);
    QCOMPARE(first.value(QStringLiteral("optimizer")).toString(), QStringLiteral("sgd"));
    QCOMPARE(first.value(QStringLiteral("warmup_steps")).toInt(), 72);
    QVERIFY(std::abs(first.value(QStringLiteral("lr")).toDouble() - 0.000151379535832598) < 1e-15);
    QVERIFY(std::abs(first.value(QStringLiteral("weight_decay")).toDouble() - 0.0515144761008741) <
            1e-15);
}

void TestSweep::gridCoversEveryCombination() {
    const SweepConfig g = sweep(R"({"model": "mlp", "data": "fashion-mnist",
        "sweep": {"space": {"lr": {"log_uniform": [0.0001, 0.01]},
                            "optimizer": {"choice": ["adam", "sgd"]},
                            "warmup_steps": {"int": [0, 1]}},
                  "scheduler": {"kind": "grid", "grid_points": 3}}})");
    // 3 learning rates, 2 optimizers, and an int axis of two whole numbers.
    QCOMPARE(g.trialCount(), 12);
    QSet<QString> seen;
    for (int i = 0; i < g.trialCount(); ++i) {
        const QJsonObject p = g.trialParams(i);
        QCOMPARE(p, g.trialParams(i));
        seen << QString::fromUtf8(QJsonDocument(p).toJson(QJsonDocument::Compact));
    }
    QCOMPARE(seen.size(), 12);
    QVERIFY(seen.contains(QStringLiteral(R"({"lr":0.001,"optimizer":"sgd","warmup_steps":1})")) ||
            seen.contains(QStringLiteral(
                R"({"lr":0.0010000000000000002,"optimizer":"sgd","warmup_steps":1})")));
    const QList<TrialRecord> done = play(g, [](int t, int) { return double(t); });
    QCOMPARE(done.size(), 12);
    for (const TrialRecord& t : done)
        QCOMPARE(t.status, TrialRecord::Status::Done);
}

void TestSweep::ashaPromotesTheBestThird() {
    // Nine trials, rungs of 1, 3 and 9 epochs, reduction 3; trial t scores (9 - t)/10 at every
    // rung (higher is better), so the earlier trials are the better ones.
    const SweepConfig c = sweep(R"({"model": "mlp", "data": "fashion-mnist", "epochs": 9,
        "sweep": {"space": {"lr": {"log_uniform": [0.0001, 0.01]}}, "trials": 9,
                  "scheduler": {"kind": "asha", "reduction": 3}}})");
    QCOMPARE(c.rungs, (QList<int>{1, 3, 9}));
    TrialScheduler s(c);
    QList<TrialRecord> trials;
    QStringList order;
    for (int guard = 0; guard < 100; ++guard) {
        auto job = s.next(trials, true);
        if (!job) {
            QVERIFY(s.finish(trials));
            break;
        }
        order << QStringLiteral("%1@%2").arg(job->trial).arg(job->rung);
        s.report(trials, job->trial, (9 - job->trial) / 10.0);
    }
    // With one device, jobs run one at a time. Three results at rung 0 let the best third
    // (trial 0) through; six let trial 1 through, nine trial 2; three results at rung 1 let
    // trial 0 through to the last rung. Promotions go first, the highest rung first.
    QCOMPARE(order.join(QLatin1Char(' ')),
             QStringLiteral("0@0 1@0 2@0 0@1 3@0 4@0 5@0 1@1 6@0 7@0 8@0 2@1 0@2"));
    QStringList status;
    for (const TrialRecord& t : trials)
        status << TrialRecord::statusName(t.status);
    QCOMPARE(status.count(QStringLiteral("done")), 1);
    QCOMPARE(status.count(QStringLiteral("stopped early")), 8);
    QCOMPARE(s.best(trials), 0);
    // The rule itself: with 5 results at a rung and reduction 3, only the best passes; with
    // 6, the best two.
    QList<TrialRecord> rung0;
    for (int i = 0; i < 6; ++i) {
        TrialRecord t;
        t.id = i;
        t.metrics = {double((i * 5) % 6)}; // 0 5 4 3 2 1
        t.status = TrialRecord::Status::Waiting;
        rung0 << t;
    }
    QList<TrialRecord> five = rung0.mid(0, 5);
    int passing = 0;
    for (const TrialRecord& t : five)
        passing += s.promotable(five, t, 0);
    QCOMPARE(passing, 1);
    passing = 0;
    for (const TrialRecord& t : rung0)
        passing += s.promotable(rung0, t, 0);
    QCOMPARE(passing, 2);
    // Lower is better for a loss.
    SweepConfig loss = c;
    loss.maximize = false;
    TrialScheduler ls(loss);
    QVERIFY(ls.promotable(five,
                          five[std::min_element(five.begin(), five.end(),
                                                [](const auto& a, const auto& b) {
                                                    return a.metrics[0] < b.metrics[0];
                                                }) -
                               five.begin()],
                          0));
}

void TestSweep::slowDevicesStartNewTrials() {
    // After three results a promotion is due. A slow device is given a new trial instead; the
    // next fast one takes the promotion.
    const SweepConfig c = sweep(R"({"model": "mlp", "data": "fashion-mnist", "epochs": 9,
        "sweep": {"space": {"lr": {"log_uniform": [0.0001, 0.01]}}, "trials": 9,
                  "scheduler": {"kind": "asha", "reduction": 3}}})");
    TrialScheduler s(c);
    QList<TrialRecord> trials;
    for (int i = 0; i < 3; ++i) {
        auto j = s.next(trials, true);
        QVERIFY(j && j->rung == 0);
        s.report(trials, j->trial, 0.1 * i);
    }
    auto slow = s.next(trials, false);
    QVERIFY(slow);
    QCOMPARE(slow->rung, 0);
    QCOMPARE(slow->trial, 3);
    auto fast = s.next(trials, true);
    QVERIFY(fast);
    QCOMPARE(fast->rung, 1);
    QCOMPARE(fast->trial, 2);
    // A requeued trial goes first, to the rung it was on.
    trials[3].status = TrialRecord::Status::Pending;
    auto again = s.next(trials, false);
    QVERIFY(again);
    QCOMPARE(again->trial, 3);
    QCOMPARE(again->rung, 0);
}

void TestSweep::badSweepFilesNameTheField() {
    const QList<std::pair<const char*, const char*>> cases = {
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {}, "trials": 4}})",
         "sweep.space is empty"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [0, 0.1]}},
             "trials": 4}})",
         "sweep.space.lr must be above 0"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [-1, 0.1]}},
             "trials": 4}})",
         "sweep.space.lr"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"log_uniform": [0, 1]}},
             "trials": 4}})",
         "sweep.space.lr: a log-uniform range must start above 0"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"log_uniform": [0.1, 1]}},
             "trials": 0}})",
         "sweep.trials must be a whole number from 1"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"log_uniform": [0.1, 1]}},
             "trials": 4, "trails": 3}})",
         "sweep: unknown field \"trails\""},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lrate": {"uniform": [0.1, 1]}},
             "trials": 4}})",
         "sweep.space.lrate: \"lrate\" is not a field of the run description"},
        {R"({"model": "mlp", "data": "d", "colour": 1, "sweep": {"space": {"lr": {"uniform":
             [0.1, 1]}}, "trials": 4}})",
         "unknown key \"colour\""},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"optimizer": {"choice":
             ["adam", "lion"]}}, "trials": 4}})",
         "sweep.space.optimizer"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"batch": {"uniform": [8, 64]}},
             "trials": 4}})",
         "sweep.space.batch: batch is a whole number"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"workers": {"int": [1, 2]}},
             "trials": 4}})",
         "sweep.space.workers"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [0.1, 1]}},
             "trials": 4, "scheduler": {"kind": "asha", "rungs": [3, 1]}}})",
         "sweep.scheduler.rungs"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [0.1, 1]}},
             "trials": 4, "scheduler": {"kind": "asha", "unit": "steps"}}})",
         "sweep.scheduler.unit: rungs are counted in epochs"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [0.1, 1]}},
             "trials": 4, "scheduler": {"kind": "asha", "unit": 5}}})",
         "sweep.scheduler.unit"},
        {R"({"model": "mlp", "data": "d"})", "no \"sweep\" object"},
        {R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [0.1, 1]}},
             "trials": 4, "metric": "bleu"}})",
         "is not test_accuracy, test_loss, test_perplexity, test_r2 or test_mae"},
    };
    // Each figure of a task ranks its own way: perplexity and MAE lower, R² higher.
    for (const auto& [metric, maximize] :
         {std::pair{"test_perplexity", false}, {"test_mae", false}, {"test_r2", true}}) {
        const QByteArray text = R"({"model": "mlp", "data": "d", "sweep": {"space":
            {"lr": {"uniform": [0.1, 1]}}, "trials": 4, "metric": ")" +
                                QByteArray(metric) + "\"}}";
        auto c = SweepConfig::fromJson(QJsonDocument::fromJson(text).object());
        QVERIFY2(c, metric);
        QCOMPARE(c->maximize, maximize);
    }
    for (const auto& [text, expected] : cases) {
        auto c = SweepConfig::fromJson(parseJson(text));
        QVERIFY2(!c, text);
        QVERIFY2(c.error().message.contains(QLatin1String(expected)),
                 qPrintable(c.error().message + QStringLiteral(" / expected: ") +
                            QLatin1String(expected)));
    }
    // The command line refuses it the same way, with the file named, and starts nothing.
    const QString path =
        writeSweep("bad.json", QStringLiteral(R"({"model": "mlp", "data": "d", "sweep": {"space":
            {"lr": {"uniform": [0, 0.1]}}, "trials": 4}})"));
    TandemProcess p({QStringLiteral("sweep"), QStringLiteral("--config"), path,
                     QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("bad-out"))});
    QVERIFY(p.finish());
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(p.err().contains(path) && p.err().contains(QStringLiteral("sweep.space.lr")),
             qPrintable(p.err()));
    QVERIFY(!QFileInfo::exists(m_tmp.filePath(QStringLiteral("bad-out"))));
}

void TestSweep::sweepAcrossTwoNodes() {
    // This machine and a served node on loopback, paired. A grid of two learning rates (one
    // far too small to learn anything in an epoch) by two batches: four trials, each device
    // runs some, and the sweep picks a trial with the useful learning rate.
    const QString desk = home("desk"), lap = home("lap");
    const auto [lapId, deskId] = pairHomes(lap, desk);
    QVERIFY(!lapId.isEmpty() && !deskId.isEmpty());
    TandemProcess serve(serveArgs(desk), true);
    const QString node = nodeAddress(serve);
    QVERIFY2(!node.isEmpty(), qPrintable(serve.err()));
    const QString path =
        writeSweep("two.json",
                   QStringLiteral(R"({"model": "mlp", "data": "mnist:%1", "threads": 1, "epochs": 2,
            "local_steps": 4,
            "sweep": {"space": {"lr": {"choice": [0.000001, 0.003]},
                                "batch": {"choice": [20, 40]}},
                      "scheduler": "grid", "metric": "test_accuracy"}})")
                       .arg(m_tiny));
    const QString out = m_tmp.filePath(QStringLiteral("two"));
    TandemProcess s({QStringLiteral("sweep"), QStringLiteral("--config"), path,
                     QStringLiteral("--out"), out, QStringLiteral("--devices=cpu"),
                     QStringLiteral("--invite"), node, QStringLiteral("--home"), lap});
    QVERIFY(s.finish(600000));
    QVERIFY2(s.exitCode() == 0, qPrintable(s.err()));
    const QJsonObject sum = s.summary();
    QVERIFY2(sum.value(QStringLiteral("complete")).toBool(), qPrintable(s.err()));
    QCOMPARE(sum.value(QStringLiteral("trials")).toInt(), 4);
    QCOMPARE(sum.value(QStringLiteral("finished")).toInt(), 4);
    const QJsonObject best = sum.value(QStringLiteral("best")).toObject();
    QCOMPARE(best.value(QStringLiteral("params")).toObject().value(QStringLiteral("lr")).toDouble(),
             0.003);
    QVERIFY(best.value(QStringLiteral("test_accuracy")).toDouble() > 0.5);
    // Both devices ran trials.
    QSet<QString> devices;
    for (const QByteArray& l : readAll(out + QStringLiteral("/sweep.jsonl")).split('\n'))
        if (!l.trimmed().isEmpty())
            devices
                << QJsonDocument::fromJson(l).object().value(QStringLiteral("device")).toString();
    QCOMPARE(devices.size(), 2);
    QVERIFY2(s.err().contains(QStringLiteral("best so far")), qPrintable(s.err()));
    // The best trial's folder is a run folder: it exports like any run.
    const QString exported = m_tmp.filePath(QStringLiteral("best.safetensors"));
    TandemProcess e({QStringLiteral("export"), QStringLiteral("--checkpoint"),
                     best.value(QStringLiteral("checkpoint")).toString(),
                     QStringLiteral("--format=safetensors"), QStringLiteral("--out"), exported});
    QVERIFY(e.finish());
    QVERIFY2(e.exitCode() == 0, qPrintable(e.err()));
    QVERIFY(QFileInfo(exported).size() > 1000);
}

void TestSweep::resumeAfterKillRerunsNoFinishedTrial() {
    // A sweep of four trials on this machine is killed outright once two have finished. The
    // resumed sweep keeps those two (their records and their folders untouched) and runs the
    // rest.
    const QString path =
        writeSweep("resume.json",
                   QStringLiteral(R"({"model": "mlp", "data": "mnist:%1", "threads": 1, "epochs": 2,
            "local_steps": 4,
            "sweep": {"space": {"lr": {"log_uniform": [0.001, 0.01]}}, "trials": 4,
                      "seed": 5, "scheduler": "random"}})")
                       .arg(m_tiny));
    const QString out = m_tmp.filePath(QStringLiteral("resume"));
    QList<QJsonObject> kept;
    {
        TandemProcess s({QStringLiteral("sweep"), QStringLiteral("--config"), path,
                         QStringLiteral("--out"), out, QStringLiteral("--devices=cpu")});
        QVERIFY(!s.waitForErr(QStringLiteral("(trial 1 .*best so far)"), 300000).isEmpty());
        // A second sweep in the same folder is refused while this one runs.
        TandemProcess twice({QStringLiteral("sweep"), QStringLiteral("--resume"), out});
        QVERIFY(twice.finish());
        QCOMPARE(twice.exitCode(), 2);
        QVERIFY2(twice.err().contains(QStringLiteral("another sweep is running")),
                 qPrintable(twice.err()));
        s.kill9();
        QVERIFY(s.finish());
    }
    QMap<int, qint64> logSizes;
    for (const QByteArray& l : readAll(out + QStringLiteral("/sweep.jsonl")).split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(l).object();
        if (o.value(QStringLiteral("status")).toString() == QLatin1String("done")) {
            kept << o;
            const int id = o.value(QStringLiteral("trial")).toInt();
            logSizes[id] = QFileInfo(QStringLiteral("%1/trials/%2/trial.log")
                                         .arg(out)
                                         .arg(id, 3, 10, QLatin1Char('0')))
                               .size();
        }
    }
    QVERIFY2(kept.size() >= 2, qPrintable(QString::number(kept.size())));
    TandemProcess r({QStringLiteral("sweep"), QStringLiteral("--resume"), out,
                     QStringLiteral("--devices=cpu")});
    QVERIFY(r.finish(600000));
    QVERIFY2(r.exitCode() == 0, qPrintable(r.err()));
    QCOMPARE(r.summary().value(QStringLiteral("finished")).toInt(), 4);
    QList<QJsonObject> after;
    for (const QByteArray& l : readAll(out + QStringLiteral("/sweep.jsonl")).split('\n'))
        if (!l.trimmed().isEmpty())
            after << QJsonDocument::fromJson(l).object();
    QCOMPARE(after.size(), 4);
    for (const QJsonObject& k : kept) {
        const int id = k.value(QStringLiteral("trial")).toInt();
        QCOMPARE(after[id], k);
        QCOMPARE(
            QFileInfo(
                QStringLiteral("%1/trials/%2/trial.log").arg(out).arg(id, 3, 10, QLatin1Char('0')))
                .size(),
            logSizes[id]);
    }
}

void TestSweep::trialOfANodeThatLeavesResumesElsewhere() {
    TANDEM_LONG_RUN();
    // Two trials, one on this machine and one on a served node. The node and its worker are
    // killed outright mid-trial: that trial goes back to the queue and resumes from its last
    // checkpoint on this machine, and the sweep finishes both.
    const QString desk = home("gone-desk"), lap = home("gone-lap");
    pairHomes(lap, desk);
    TandemProcess serve(serveArgs(desk), true);
    const QString node = nodeAddress(serve);
    QVERIFY2(!node.isEmpty(), qPrintable(serve.err()));
    const QString path = writeSweep(
        "gone.json",
        QStringLiteral(R"({"model": "mlp", "data": "mnist:%1", "threads": 1, "epochs": 30,
            "local_steps": 2, "batch": 10, "checkpoint_every": 10,
            "sweep": {"space": {"lr": {"log_uniform": [0.001, 0.01]}}, "trials": 2,
                      "seed": 9}})")
            .arg(m_tiny));
    const QString out = m_tmp.filePath(QStringLiteral("gone"));
    TandemProcess s({QStringLiteral("sweep"), QStringLiteral("--config"), path,
                     QStringLiteral("--out"), out, QStringLiteral("--devices=cpu"),
                     QStringLiteral("--invite"), node, QStringLiteral("--home"), lap});
    // Wait until the node's trial has trained a while (its checkpoint is on this machine).
    int remoteTrial = -1;
    QVERIFY(QTest::qWaitFor(
        [&] {
            for (const QJsonObject& r : records(out))
                if (r.value(QStringLiteral("device")).toString() == node &&
                    r.value(QStringLiteral("status")).toString() == QLatin1String("running"))
                    remoteTrial = r.value(QStringLiteral("trial")).toInt();
            return remoteTrial >= 0 &&
                   QFileInfo::exists(QStringLiteral("%1/trials/%2/checkpoint.tandem")
                                         .arg(out)
                                         .arg(remoteTrial, 3, 10, QLatin1Char('0')));
        },
        300000));
    killTree(serve);
    QVERIFY(s.finish(600000));
    QVERIFY2(s.exitCode() == 0, qPrintable(s.err()));
    QVERIFY2(s.err().contains(QStringLiteral("left mid-trial; it goes back to the queue")),
             qPrintable(s.err()));
    const QJsonObject sum = s.summary();
    QCOMPARE(sum.value(QStringLiteral("finished")).toInt(), 2);
    const QJsonObject moved = records(out).at(remoteTrial);
    QCOMPARE(moved.value(QStringLiteral("status")).toString(), QStringLiteral("done"));
    QCOMPARE(moved.value(QStringLiteral("device")).toString(), QStringLiteral("cpu"));
    QCOMPARE(moved.value(QStringLiteral("requeues")).toInt(), 1);
    const QString log = QString::fromUtf8(readAll(QStringLiteral("%1/trials/%2/trial.log")
                                                      .arg(out)
                                                      .arg(remoteTrial, 3, 10, QLatin1Char('0'))));
    QVERIFY2(log.contains(QStringLiteral("resuming at step")), qPrintable(log));
}

void TestSweep::damagedRecordsAreRefusedOnResume() {
    // A sweep folder whose records were damaged (by hand, or a disk): --resume names the line
    // and starts nothing, rather than guessing which trials finished.
    const QString dir = m_tmp.filePath(QStringLiteral("damaged"));
    QDir().mkpath(dir);
    const SweepConfig c = sweep(R"({"model": "mlp", "data": "fashion-mnist", "epochs": 3,
        "sweep": {"space": {"lr": {"log_uniform": [0.001, 0.01]}}, "trials": 4,
                  "scheduler": {"kind": "asha", "rungs": [1, 3]}}})");
    QFile desc(dir + QStringLiteral("/sweep.json"));
    QVERIFY(desc.open(QIODevice::WriteOnly));
    desc.write(QJsonDocument(c.toJson()).toJson());
    desc.close();
    const QList<QByteArray> bad = {
        R"({"trial": 0, "params": {"lr": 0.002}, "status": "done", "metrics": [0.5, 0.6, 0.7]})",
        R"({"trial": 0, "params": {"lr": 0.002}, "status": "done", "rung": 7})",
        R"({"trial": 3, "params": {"lr": 0.002}, "status": "done"})",
        R"({"trial": 0, "params": {"lr": 0.002}, "status": "sleeping"})",
        "not json at all",
    };
    for (const QByteArray& line : bad) {
        QFile rec(dir + QStringLiteral("/sweep.jsonl"));
        QVERIFY(rec.open(QIODevice::WriteOnly | QIODevice::Truncate));
        rec.write(line + "\n");
        rec.close();
        TandemProcess p({QStringLiteral("sweep"), QStringLiteral("--resume"), dir});
        QVERIFY(p.finish());
        QVERIFY2(p.exitCode() == 2, qPrintable(p.err()));
        QVERIFY2(p.err().contains(QStringLiteral("line 1")), qPrintable(p.err()));
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/trials/000")));
    }
}

void TestSweep::busyNodeDeclinesAndTheTrialIsRequeued() {
    TANDEM_LONG_RUN();
    // The only device is a node already training in someone else's run: it declines each
    // invitation, the sweep says so and asks again later, and after the fourth refusal the
    // trial is marked failed with the node's reason. Nothing waits for a join timeout.
    const QString node = home("busy-node"), other = home("busy-other"), me = home("busy-me");
    pairHomes(other, node);
    pairHomes(me, node);
    TandemProcess serve(serveArgs(node), true);
    const QString at = nodeAddress(serve);
    QVERIFY2(!at.isEmpty(), qPrintable(serve.err()));
    TandemProcess run({QStringLiteral("train"), QStringLiteral("--mode=sync"),
                       QStringLiteral("--model=mlp"), QStringLiteral("--data=mnist:") + m_tiny,
                       QStringLiteral("--threads=1"), QStringLiteral("--epochs=1000"),
                       QStringLiteral("--listen=127.0.0.1:0"), QStringLiteral("--workers=1"),
                       QStringLiteral("--no-local-worker"), QStringLiteral("--invite"), at,
                       QStringLiteral("--home"), other,
                       QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("busy-run"))});
    QVERIFY2(!run.waitForErr(QStringLiteral("( joined with )")).isEmpty(), qPrintable(run.err()));
    const QString path =
        writeSweep("busy.json", QStringLiteral(R"({"model": "mlp", "data": "mnist:%1", "threads": 1,
            "sweep": {"space": {"lr": {"log_uniform": [0.001, 0.01]}}, "trials": 1}})")
                                    .arg(m_tiny));
    TandemProcess s({QStringLiteral("sweep"), QStringLiteral("--config"), path,
                     QStringLiteral("--out"), m_tmp.filePath(QStringLiteral("busy")),
                     QStringLiteral("--devices=none"), QStringLiteral("--invite"), at,
                     QStringLiteral("--retry-after=1"), QStringLiteral("--home"), me});
    QVERIFY(s.finish(300000));
    QVERIFY2(s.exitCode() == 0, qPrintable(s.err()));
    QVERIFY2(s.err().contains(QStringLiteral("declined: this machine is already training")),
             qPrintable(s.err()));
    const QJsonObject sum = s.summary();
    QCOMPARE(sum.value(QStringLiteral("failed")).toInt(), 1);
    const QJsonObject rec = records(m_tmp.filePath(QStringLiteral("busy"))).at(0);
    QCOMPARE(rec.value(QStringLiteral("requeues")).toInt(), 4);
    QVERIFY2(rec.value(QStringLiteral("error")).toString().contains(QStringLiteral("declined")),
             qPrintable(rec.value(QStringLiteral("error")).toString()));
    run.kill9();
}

void TestSweep::trialStoppedFromOutsideResumes() {
    // A trial process stopped by a signal that did not reach the sweep (Ctrl+C reaches a
    // terminal's whole process group first; or someone stops the process) saves a checkpoint
    // and exits: the sweep takes it for an interruption, not a failure, and resumes it.
    const QString path = writeSweep(
        "outside.json",
        QStringLiteral(R"({"model": "mlp", "data": "mnist:%1", "threads": 1, "epochs": 40,
            "local_steps": 2, "batch": 10, "checkpoint_every": 10,
            "sweep": {"space": {"lr": {"log_uniform": [0.001, 0.01]}}, "trials": 1}})")
            .arg(m_tiny));
    const QString out = m_tmp.filePath(QStringLiteral("outside"));
    TandemProcess s({QStringLiteral("sweep"), QStringLiteral("--config"), path,
                     QStringLiteral("--out"), out, QStringLiteral("--devices=cpu")});
    const QString pidFile = out + QStringLiteral("/trials/000/trial.pid");
    const QString checkpoint = out + QStringLiteral("/trials/000/checkpoint.tandem");
    QVERIFY(QTest::qWaitFor(
        [&] { return QFileInfo::exists(pidFile) && QFileInfo::exists(checkpoint); }, 300000));
    ::kill(pid_t(readAll(pidFile).trimmed().toLongLong()), SIGINT);
    QVERIFY(s.finish(600000));
    QVERIFY2(s.exitCode() == 0, qPrintable(s.err()));
    QVERIFY2(s.err().contains(QStringLiteral("trial 0: its process was stopped; it goes back")),
             qPrintable(s.err()));
    QCOMPARE(s.summary().value(QStringLiteral("finished")).toInt(), 1);
    const QJsonObject rec = records(out).at(0);
    QCOMPARE(rec.value(QStringLiteral("requeues")).toInt(), 1);
    QVERIFY(readAll(out + QStringLiteral("/trials/000/trial.log")).contains("resuming at step"));
}

QTEST_GUILESS_MAIN(TestSweep)
#include "test_sweep.moc"
