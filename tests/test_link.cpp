// --mode auto over a throttled link: the coordinator measures each worker's link as it joins,
// chooses sync or streaming local-SGD from it, says why, and measures the link again while the
// run goes on. The link is bench/linkrelay.py, a userspace relay with a fixed rate and delay on
// loopback.

#include "linkrelay.h"
#include "net/identity.h"
#include "proc.h"
#include "testpaths.h"
#include "testrows.h"
#include "testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>

#include <memory>

using namespace tandem;

namespace {

// The longest of these runs takes about four minutes alone where LibTorch 2.6 computes the CNN
// (Debian 13) and twice that beside the other language-model tests: a coordinator may take 25.
constexpr int kRunMs = 25 * 60 * 1000;

// What auto mode weighed, from the line that says what it chose: the log of a run that chose
// otherwise shows how far it was from the edge.
QString choiceFigures(const QString& log) {
    const QRegularExpression re(QStringLiteral("a sync step [^\\n]*"));
    return re.match(log).captured(0);
}

} // namespace

class TestLink : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void autoChoosesStreamingOnASlowLink();
    void autoKeepsSyncWhereStreamingDoesNotFit();
    void autoKeepsSyncWhenComputeDominates();
    void autoTrainsAloneWhenTheRunIsTooShort();
    void autoSendsLaterWorkersHomeUnmeasured();
    void autoGoesOnAloneWhenNoWorkerComes();
    void autoGoesOnWithTheWorkersThatCame();
    void syncLeavesOutAWorkerWhoseLinkIsTooSlowUntilItIsFaster();
    void aShardedRunGivesTheSlowerLinkTheSmallerRange();

private:
    QString home(const char* n) const { return m_tmp.filePath(QLatin1String(n)); }
    QStringList coordinator(const QString& out, const QStringList& extra) const;
    // A worker that reaches the coordinator `c` through a 12 Mbit/s relay with 2 ms of delay
    // (1.2 Mbit/s once slowed down); no worker where `c` does not listen or the relay fails.
    struct SlowWorker {
        std::unique_ptr<LinkRelay> relay;
        std::unique_ptr<TandemProcess> worker;
    };
    SlowWorker workerOverSlowLink(TandemProcess& c) const;

    QTemporaryDir m_tmp;
    QString m_tiny;
};

void TestLink::initTestCase() {
    if (testpaths::python().isEmpty())
        QSKIP("no Python 3 to run the link relay (bench/linkrelay.py)");
    QVERIFY(m_tmp.isValid());
    m_tiny = m_tmp.filePath(QStringLiteral("tiny"));
    testutil::writeIdxDataset(m_tiny, 2000, 500, true);
    const auto [coordId, workerId] = pairHomes(home("coord"), home("w"));
    QVERIFY(isDeviceId(coordId) && isDeviceId(workerId));
}

QStringList TestLink::coordinator(const QString& out, const QStringList& extra) const {
    return QStringList{QStringLiteral("train"),       QStringLiteral("--data=mnist:") + m_tiny,
                       QStringLiteral("--threads=1"), QStringLiteral("--listen=127.0.0.1:0"),
                       QStringLiteral("--home"),      home("coord"),
                       QStringLiteral("--workers=1"), QStringLiteral("--mode=auto"),
                       QStringLiteral("--out=") + out} +
           extra;
}

TestLink::SlowWorker TestLink::workerOverSlowLink(TandemProcess& c) const {
    SlowWorker s;
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    if (port.isEmpty())
        return s;
    s.relay = std::make_unique<LinkRelay>(port, 12, 2, 1.2);
    if (s.relay->port().isEmpty())
        return s;
    s.worker = std::make_unique<TandemProcess>(
        QStringList{QStringLiteral("worker"), QStringLiteral("--connect"),
                    QStringLiteral("127.0.0.1:") + s.relay->port(), QStringLiteral("--home"),
                    home("w"), QStringLiteral("--threads=1")});
    return s;
}

// 12 Mbit/s (1.5 MB/s): a sync step of the MLP would move 1.6 MB, 1.1 s against milliseconds of
// compute. The run streams, the log says why with the measured rate, and when the link drops to
// a tenth, the live probes say so.
void TestLink::autoChoosesStreamingOnASlowLink() {
    const QString out = m_tmp.filePath(QStringLiteral("slow"));
    TandemProcess c(coordinator(out, {QStringLiteral("--model=mlp"), QStringLiteral("--batch=1000"),
                                      QStringLiteral("--epochs=10000")}),
                    false, {QStringLiteral("TANDEM_LINK_PROBE_MS=300")});
    auto slow = workerOverSlowLink(c);
    QVERIFY2(slow.worker, qPrintable(c.err()));
    LinkRelay& relay = *slow.relay;
    TandemProcess& w = *slow.worker;

    const QString rate = c.waitForErr(QStringLiteral("the link to .+ moves ([0-9.]+) MB/s"));
    QVERIFY2(!rate.isEmpty(), qPrintable(c.err()));
    qInfo("handshake probe through a 12 Mbit/s relay: %s MB/s", qPrintable(rate));
    QVERIFY2(rate.toDouble() > 1.0 && rate.toDouble() < 1.7, qPrintable(rate));
    const QString ratio =
        c.waitForErr(QStringLiteral("streaming mode will send 1/(\\d+) of sync's traffic"));
    QVERIFY2(!ratio.isEmpty(), qPrintable(c.err()));
    // 32 inner steps, int4 (about 7 bits in 8 saved): a few hundred times less.
    QVERIFY2(ratio.toInt() > 100, qPrintable(ratio));
    qInfo("%s", qPrintable(choiceFigures(c.err())));
    QVERIFY(!c.waitForErr(QStringLiteral("joined with")).isEmpty());
    QVERIFY(QTest::qWaitFor([&] { return countLines(out + QStringLiteral("/metrics.jsonl")) >= 5; },
                            120000));

    // Only what the log says from here on counts.
    const qsizetype before = c.err().size();
    relay.slowDown();
    QVERIFY(!relay.waitFor(QStringLiteral("relay rate now")).isEmpty());
    const QRegularExpression nowRe(QStringLiteral("the link to .+ now moves ([0-9.]+) kB/s"));
    QString now;
    QVERIFY(QTest::qWaitFor(
        [&] {
            now = nowRe.match(c.err().mid(before)).captured(1);
            return !now.isEmpty() || !c.running();
        },
        180000));
    QVERIFY2(!now.isEmpty(), qPrintable(c.err()));
    qInfo("live probe after the relay dropped to 1.2 Mbit/s: %s kB/s", qPrintable(now));
    QVERIFY2(now.toDouble() > 50 && now.toDouble() < 220, qPrintable(now));

    c.signal(SIGTERM);
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    const QJsonObject s = c.summary();
    QCOMPARE(s.value(QStringLiteral("mode")).toString(), QStringLiteral("local-sgd"));
    const QJsonArray ws = s.value(QStringLiteral("workers")).toArray();
    QCOMPARE(ws.size(), 2);
    for (const QJsonValue& v : ws)
        QVERIFY2(v.toObject().value(QStringLiteral("samples")).toInteger() > 0,
                 qPrintable(c.out()));
    (void)w.finish(60000);
}

// The same slow link, with this machine lending 5 MB: sync's need (the MLP's weights, their
// gradients and Adam's state, about 3 MB) fits, streaming's (its own optimizer, a copy of the
// weights, the outer state and the record of what the worker holds, about 7 MB) does not. Auto
// mode planned this machine's worker for sync before it chose; it keeps sync and says why.
void TestLink::autoKeepsSyncWhereStreamingDoesNotFit() {
    const QString out = m_tmp.filePath(QStringLiteral("tight"));
    TandemProcess c(
        coordinator(out, {QStringLiteral("--model=mlp"), QStringLiteral("--batch=1000"),
                          QStringLiteral("--optimizer=adam"), QStringLiteral("--epochs=10000")}),
        false, {QStringLiteral("TANDEM_MEMORY_LIMIT=5M")});
    auto slow = workerOverSlowLink(c);
    QVERIFY2(slow.worker, qPrintable(c.err()));
    QVERIFY2(!c.waitForErr(QStringLiteral("(Streaming would not fit on this machine), so the run "
                                          "trains in sync: this machine's"))
                  .isEmpty(),
             qPrintable(c.err()));
    QVERIFY2(c.err().contains(QStringLiteral("streaming mode will send")), qPrintable(c.err()));
    qInfo("%s", qPrintable(choiceFigures(c.err())));
    QVERIFY(QTest::qWaitFor([&] { return countLines(out + QStringLiteral("/metrics.jsonl")) >= 3; },
                            120000));
    c.signal(SIGTERM);
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    QCOMPARE(c.summary().value(QStringLiteral("mode")).toString(), QStringLiteral("sync"));
    QVERIFY2(!c.err().contains(QStringLiteral("dropped local")), qPrintable(c.err()));
    (void)slow.worker->finish(60000);
}

// Loopback, and a step of 1,000 samples of the demo network: moving its weights takes a small
// part of computing them, and the run stays in sync. Forty steps repay the worker's start
// (its cold first step and two more, counted three times over) and more.
void TestLink::autoKeepsSyncWhenComputeDominates() {
    // Two minutes of training: the README's test command leaves it to the Debian 13 check.
    TANDEM_LONG_RUN();
    const QString out = m_tmp.filePath(QStringLiteral("fast"));
    TandemProcess c(
        coordinator(out, {QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=1000"),
                          QStringLiteral("--epochs=20"), QStringLiteral("--name=desk")}));
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    TandemProcess w({QStringLiteral("worker"), QStringLiteral("--connect"),
                     QStringLiteral("127.0.0.1:") + port, QStringLiteral("--home"), home("w"),
                     QStringLiteral("--threads=1"), QStringLiteral("--events=-")});
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    QVERIFY2(c.err().contains(QStringLiteral(": training in sync (about")), qPrintable(c.err()));
    QCOMPARE(c.summary().value(QStringLiteral("mode")).toString(), QStringLiteral("sync"));
    QVERIFY(w.finish(60000));
    // The worker's events: whose run it joined, then its steps with its share of each.
    QStringList kinds;
    double share = -1;
    int64_t samples = 0;
    for (const QString& line : w.out().split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QJsonObject e = QJsonDocument::fromJson(line.toUtf8()).object();
        kinds << e.value(QStringLiteral("event")).toString();
        if (kinds.last() == QLatin1String("joined")) {
            QCOMPARE(e.value(QStringLiteral("mode")).toString(), QStringLiteral("sync"));
            QCOMPARE(e.value(QStringLiteral("coordinator")).toString(), QStringLiteral("desk"));
        }
        if (kinds.last() == QLatin1String("progress")) {
            share = e.value(QStringLiteral("share")).toDouble();
            samples = e.value(QStringLiteral("samples")).toInteger();
            QVERIFY(e.value(QStringLiteral("loss")).toDouble() > 0);
        }
    }
    QVERIFY2(kinds.value(0) == QLatin1String("joined") &&
                 kinds.contains(QStringLiteral("progress")),
             qPrintable(w.out()));
    QVERIFY2(share > 0 && share < 1, qPrintable(w.out()));
    const qint64 remote = [&]() -> qint64 {
        for (const QJsonValue& v : c.summary().value(QStringLiteral("workers")).toArray())
            if (v.toObject().value(QStringLiteral("name")).toString() != QLatin1String("local"))
                return v.toObject().value(QStringLiteral("samples")).toInteger();
        return -1;
    }();
    QVERIFY2(samples > 0 && samples <= remote, qPrintable(w.out()));
}

// Eight steps of two seconds: too short to stream, so the run starts on this machine at once;
// when the worker's link is measured, the steps left could not repay its start, and it is sent
// home with the reason while the run goes on alone.
void TestLink::autoTrainsAloneWhenTheRunIsTooShort() {
    const QString out = m_tmp.filePath(QStringLiteral("short"));
    TandemProcess c(
        coordinator(out, {QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=1000"),
                          QStringLiteral("--epochs=5"), QStringLiteral("--max-steps=8"),
                          QStringLiteral("--events=") + out + QStringLiteral(".events")}));
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    // Training begins without waiting for the worker, which only starts now.
    QVERIFY(!c.waitForErr(QStringLiteral("this run of 8 step\\(s\\) starts on this machine"))
                 .isEmpty());
    TandemProcess w({QStringLiteral("worker"), QStringLiteral("--connect"),
                     QStringLiteral("127.0.0.1:") + port, QStringLiteral("--home"), home("w"),
                     QStringLiteral("--threads=1"),
                     QStringLiteral("--events=") + out + QStringLiteral(".worker-events")});
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    QVERIFY2(c.err().contains(QRegularExpression(QStringLiteral(
                 "this run has [0-9]+ step\\(s\\) left, about [0-9.]+ s on this machine alone.*"
                 "training on this machine alone"))),
             qPrintable(c.err()));
    const QJsonObject s = c.summary();
    QCOMPARE(s.value(QStringLiteral("mode")).toString(), QStringLiteral("sync"));
    QCOMPARE(s.value(QStringLiteral("steps")).toInt(), 8);
    QCOMPARE(s.value(QStringLiteral("workers")).toArray().size(), 1);
    QVERIFY(w.finish(60000));
    QCOMPARE(w.exitCode(), 0);
    QVERIFY2(w.err().contains(QStringLiteral("the coordinator ended the run: this run is too "
                                             "short for more machines to pay off")),
             qPrintable(w.err()));
    // The choice is a typed event too (the app shows it under the run's status).
    QFile events(out + QStringLiteral(".events"));
    QVERIFY(events.open(QIODevice::ReadOnly));
    bool chosen = false;
    for (const QByteArray& line : events.readAll().split('\n')) {
        const QJsonObject e = QJsonDocument::fromJson(line).object();
        if (e.value(QStringLiteral("event")).toString() == QLatin1String("mode_chosen"))
            chosen = e.value(QStringLiteral("reason"))
                         .toString()
                         .contains(QStringLiteral("training on this machine alone"));
    }
    QVERIFY(chosen);
    // The dismissed worker never joined: its events file has no "joined".
    QFile workerEvents(out + QStringLiteral(".worker-events"));
    QVERIFY(workerEvents.open(QIODevice::ReadOnly));
    QVERIFY(!workerEvents.readAll().contains("\"joined\""));
}

// Four steps of two seconds: after two, not even a worker as fast as this machine over a
// perfect link could make the two left end sooner, so the run decides to train alone before
// any worker comes, and one that comes later is sent home without its link being measured.
void TestLink::autoSendsLaterWorkersHomeUnmeasured() {
    const QString out = m_tmp.filePath(QStringLiteral("unmeasured"));
    TandemProcess c(
        coordinator(out, {QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=1000"),
                          QStringLiteral("--epochs=5"), QStringLiteral("--max-steps=4")}));
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    QVERIFY2(!c.waitForErr(QStringLiteral("no worker has been measured yet, and none could make "
                                          "this run end sooner even over a perfect link: this "
                                          "run has 2 step\\(s\\) left.*training on this "
                                          "machine alone"))
                  .isEmpty(),
             qPrintable(c.err()));
    // Held still while the worker starts, however long that takes on a loaded machine.
    c.signal(SIGUSR1);
    QVERIFY(!c.waitForErr(QStringLiteral("paused at step")).isEmpty());
    TandemProcess w({QStringLiteral("worker"), QStringLiteral("--connect"),
                     QStringLiteral("127.0.0.1:") + port, QStringLiteral("--home"), home("w"),
                     QStringLiteral("--threads=1")});
    QVERIFY2(w.finish(60000), qPrintable(w.err() + c.err()));
    QCOMPARE(w.exitCode(), 0);
    QVERIFY2(w.err().contains(QStringLiteral("the coordinator ended the run: this run is too "
                                             "short for more machines to pay off")),
             qPrintable(w.err()));
    c.signal(SIGUSR2);
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    QVERIFY2(c.err().contains(QRegularExpression(QStringLiteral(
                 "\\(device [0-9A-F ]+\\) came after the run chose to train alone; sent home"))),
             qPrintable(c.err()));
    QVERIFY2(!c.err().contains(QStringLiteral(") at 127.0.0.1:")), qPrintable(c.err()));
    const QJsonObject s = c.summary();
    QCOMPARE(s.value(QStringLiteral("steps")).toInt(), 4);
    QCOMPARE(s.value(QStringLiteral("workers")).toArray().size(), 1);
}

// A run of known length waits for its worker no longer than a third of its time alone: a
// worker that late could not repay its start. The run goes on alone and says why.
void TestLink::autoGoesOnAloneWhenNoWorkerComes() {
    const QString out = m_tmp.filePath(QStringLiteral("nobody"));
    TandemProcess c(coordinator(out, {QStringLiteral("--model=mlp"), QStringLiteral("--batch=50"),
                                      QStringLiteral("--epochs=40")}));
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    QVERIFY2(c.err().contains(QRegularExpression(
                 QStringLiteral("no worker had connected after [0-9.]+ s, a third of this run's "
                                "time on this machine alone: training on this machine alone"))),
             qPrintable(c.err()));
    const QJsonObject s = c.summary();
    QCOMPARE(s.value(QStringLiteral("steps")).toInt(), 40 * 40);
    QCOMPARE(s.value(QStringLiteral("workers")).toArray().size(), 1);
}

// Two workers asked for, one comes: once the patience is spent the run goes on with the one
// that came (or alone, if it came too late), and never waits for the other.
void TestLink::autoGoesOnWithTheWorkersThatCame() {
    const QString out = m_tmp.filePath(QStringLiteral("one-of-two"));
    TandemProcess c(
        coordinator(out, {QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=64"),
                          QStringLiteral("--epochs=100"), QStringLiteral("--max-steps=200"),
                          QStringLiteral("--workers=2")}));
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    // A short reconnect window: on a loaded machine the worker's process can take longer to
    // start than the whole run, and it then knocks on a closed port for that long.
    TandemProcess w({QStringLiteral("worker"), QStringLiteral("--connect"),
                     QStringLiteral("127.0.0.1:") + port, QStringLiteral("--home"), home("w"),
                     QStringLiteral("--threads=1"), QStringLiteral("--reconnect=10")});
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    const QJsonObject s = c.summary();
    // --max-steps counts batches: in streaming, 200 of them are 25 rounds of 8 (32 local steps
    // in 4 fragments).
    const bool streamed = c.err().contains(QStringLiteral("streaming mode will send"));
    QCOMPARE(s.value(QStringLiteral("mode")).toString(),
             streamed ? QStringLiteral("local-sgd") : QStringLiteral("sync"));
    if (streamed)
        QVERIFY2(c.err().contains(QStringLiteral(
                     "the 200 step(s) asked for are 25 round(s) of 8 batches in streaming")),
                 qPrintable(c.err()));
    QCOMPARE(s.value(QStringLiteral("steps")).toInt(), streamed ? 25 : 200);
    QVERIFY2(s.value(QStringLiteral("samples")).toInteger() <= 200 * 64, qPrintable(c.out()));
    const bool measured = c.err().contains(QStringLiteral(") at 127.0.0.1:"));
    const bool alone = c.err().contains(QStringLiteral("training on this machine alone"));
    // A worker measured in time trains; one measured too late was sent home.
    QCOMPARE(s.value(QStringLiteral("workers")).toArray().size(), measured && !alone ? 2 : 1);
    QVERIFY2(w.finish(60000), qPrintable(w.err()));
    if (w.exitCode() != 0) {
        // Its connection did not get through before the run ended: the coordinator never saw
        // it, and it gave up once its window was spent, saying so.
        QVERIFY2(!measured, qPrintable(w.err() + c.err()));
        QVERIFY2(w.err().contains(QStringLiteral("cannot reach the coordinator")),
                 qPrintable(w.err()));
    } else {
        QVERIFY2(w.err().contains(QStringLiteral("the coordinator ended the run")),
                 qPrintable(w.err()));
    }
}

// Sync over 1 Mbit/s: a step of mnist-cnn moves its 4.8 MB of weights there and as many
// gradients back, about 77 s, more than eight steps of a batch of 500 even where a loaded
// machine takes 4 s for one (a step is well under a second here alone). The worker is left
// out before it computes anything, with the link's figures as the reason, and no slice of a
// step is spent re-measuring it; when the link turns a hundred times faster, the live probes
// see it and it takes part again.
void TestLink::syncLeavesOutAWorkerWhoseLinkIsTooSlowUntilItIsFaster() {
    const QString out = m_tmp.filePath(QStringLiteral("slow-sync"));
    TandemProcess c({QStringLiteral("train"), QStringLiteral("--data=mnist:") + m_tiny,
                     QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=500"),
                     QStringLiteral("--epochs=1000"), QStringLiteral("--threads=1"),
                     QStringLiteral("--listen=127.0.0.1:0"), QStringLiteral("--home"),
                     home("coord"), QStringLiteral("--workers=1"), QStringLiteral("--mode=sync"),
                     QStringLiteral("--out=") + out},
                    false, {QStringLiteral("TANDEM_LINK_PROBE_MS=300")});
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    LinkRelay relay(port, 1, 2, 400);
    const QString relayPort = relay.port();
    QVERIFY(!relayPort.isEmpty());
    TandemProcess w({QStringLiteral("worker"), QStringLiteral("--connect"),
                     QStringLiteral("127.0.0.1:") + relayPort, QStringLiteral("--home"), home("w"),
                     QStringLiteral("--threads=1")});
    const QString ms = c.waitForErr(
        QStringLiteral("leaving .+ out: it would slow the run: moving the weights there and the "
                       "gradients back takes (\\d+) ms a step over its link"),
        240000);
    QVERIFY2(!ms.isEmpty(), qPrintable(c.err()));
    QVERIFY2(ms.toInt() > 10000, qPrintable(ms));
    QVERIFY2(c.err().contains(QStringLiteral("its link is measured again while it is idle")),
             qPrintable(c.err()));

    relay.slowDown(); // to 400 Mbit/s
    QVERIFY(!relay.waitFor(QStringLiteral("relay rate now")).isEmpty());
    QVERIFY2(
        !c.waitForErr(QStringLiteral("(takes part again: its link now moves)"), 240000).isEmpty(),
        qPrintable(c.err()));
    // Its entry slices, then its shares: a few steps with it.
    const int stepsThen = countLines(out + QStringLiteral("/metrics.jsonl"));
    QVERIFY(QTest::qWaitFor(
        [&] { return countLines(out + QStringLiteral("/metrics.jsonl")) >= stepsThen + 6; },
        240000));
    c.signal(SIGTERM);
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    const QJsonArray ws = c.summary().value(QStringLiteral("workers")).toArray();
    QCOMPARE(ws.size(), 2);
    for (const QJsonValue& v : ws)
        if (v.toObject().value(QStringLiteral("name")).toString() != QLatin1String("local")) {
            QVERIFY2(v.toObject().value(QStringLiteral("samples")).toInteger() > 0,
                     qPrintable(c.out()));
            QCOMPARE(v.toObject().value(QStringLiteral("status")).toString(),
                     QStringLiteral("active"));
        }
    (void)w.finish(60000);
}

// A sharded run sizes each machine's range by its link where the handshakes timed every
// worker's: the worker behind a quarter of the other's rate holds the smaller range, and this
// machine, whose link carried both probes, as large a one as the faster worker.
void TestLink::aShardedRunGivesTheSlowerLinkTheSmallerRange() {
    pairHomes(home("coord"), home("w2"));
    const QString out = m_tmp.filePath(QStringLiteral("shard-links"));
    TandemProcess c({QStringLiteral("train"), QStringLiteral("--data=mnist:") + m_tiny,
                     QStringLiteral("--model=mlp"), QStringLiteral("--batch=50"),
                     QStringLiteral("--max-steps=6"), QStringLiteral("--threads=1"),
                     QStringLiteral("--listen=127.0.0.1:0"), QStringLiteral("--home"),
                     home("coord"), QStringLiteral("--workers=2"), QStringLiteral("--mode=sync"),
                     QStringLiteral("--shard"), QStringLiteral("--out=") + out});
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    LinkRelay slow(port, 24, 2), fast(port, 96, 2);
    const QString slowPort = slow.port(), fastPort = fast.port();
    QVERIFY(!slowPort.isEmpty() && !fastPort.isEmpty());
    const auto worker = [&](const QString& relayPort, const char* h, const char* name) {
        return QStringList{QStringLiteral("worker"),
                           QStringLiteral("--connect"),
                           QStringLiteral("127.0.0.1:") + relayPort,
                           QStringLiteral("--home"),
                           home(h),
                           QStringLiteral("--threads=1"),
                           QStringLiteral("--name"),
                           QLatin1String(name)};
    };
    TandemProcess ws(worker(slowPort, "w", "slow")), wf(worker(fastPort, "w2", "fast"));
    QVERIFY(c.finish(kRunMs));
    QVERIFY2(c.exitCode() == 0, qPrintable(c.err()));
    QVERIFY2(c.err().contains(QRegularExpression(
                 QStringLiteral("sharded the optimizer across 3 machines in [0-9.]+ s \\(this "
                                "machine: values 0 to [0-9]+;.* slow \\(device [0-9A-F ]+\\): "
                                "values .+\\), each range sized by its machine's link and "
                                "memory"))),
             qPrintable(c.err()));
    QHash<QString, double> held; // by machine: its range's values
    for (const QJsonValue& v : c.summary().value(QStringLiteral("shards")).toArray()) {
        const QJsonObject o = v.toObject();
        const QString m = o.value(QStringLiteral("machine")).toString();
        held.insert(m.startsWith(QLatin1String("slow"))   ? QStringLiteral("slow")
                    : m.startsWith(QLatin1String("fast")) ? QStringLiteral("fast")
                                                          : QStringLiteral("this"),
                    double(o.value(QStringLiteral("end")).toInteger() -
                           o.value(QStringLiteral("begin")).toInteger()));
    }
    QCOMPARE(held.size(), 3);
    const QString said = QStringLiteral("ranges: this machine %1, fast %2, slow %3")
                             .arg(held[QStringLiteral("this")])
                             .arg(held[QStringLiteral("fast")])
                             .arg(held[QStringLiteral("slow")]);
    qInfo("%s", qPrintable(said));
    QVERIFY2(held[QStringLiteral("slow")] < 0.6 * held[QStringLiteral("fast")], qPrintable(said));
    QVERIFY2(held[QStringLiteral("this")] >= 0.95 * held[QStringLiteral("fast")], qPrintable(said));
    QVERIFY(ws.finish() && wf.finish());
}

QTEST_GUILESS_MAIN(TestLink)
#include "test_link.moc"
