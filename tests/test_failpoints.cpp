// Every failpoint fires where it says, and what it leaves behind is what a user can recover
// from: a crash while a checkpoint is written keeps the newest whole checkpoint, a worker that
// dies mid-frame or mid-upload is dropped without harm, a freeze is a freeze, a dataset cut in
// transfer is refused and not cached, a failed pairing or trust-store write changes nothing.
// The failpoints exist only in builds configured with -DTANDEM_FAILPOINTS=ON.

#include "common/failpoint.h"
#include "common/files.h"
#include "net/connection.h"
#include "net/identity.h"
#include "net/pairing.h"
#include "net/server.h"
#include "net/truststore.h"
#include "proc.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace tandem;

namespace {

class Yes : public PairingPrompt {
public:
    void ask(const PairingQuestion&, std::function<void(bool)> answer) override {
        QTimer::singleShot(0, [answer] { answer(true); });
    }
};

QString crashed(const QString& point) {
    return QStringLiteral("failpoint %1: crash").arg(point);
}

} // namespace

class TestFailpoints : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void badSettingsAreRefused();
    void checkpointWriteFails();
    void crashWhileCheckpointing_data();
    void crashWhileCheckpointing();
    void workerCrashes_data();
    void workerCrashes();
    void stallAndStop();
    void datasetCutInTransfer();
    void pairingAndTrustStore();
    void atomicWriteFails();

private:
    QString path(const QString& n) const { return m_tmp.filePath(n); }
    QStringList localRun(const QString& out) const;
    TandemProcess* coordinator(const QString& out, const QStringList& extra = {});
    QString waitPort(TandemProcess& c);
    TandemProcess* worker(const QString& home, const QString& port, const QStringList& env = {});

    QTemporaryDir m_tmp;
    QString m_tiny;
    QString m_coordId;
    std::vector<std::unique_ptr<TandemProcess>> m_procs;
};

void TestFailpoints::initTestCase() {
    if (!TANDEM_FAILPOINTS_BUILD)
        QSKIP("this build has no failpoints (configure with -DTANDEM_FAILPOINTS=ON)");
    // The in-process points, read once, before any is reached; the processes this test starts
    // get their own.
    qputenv("TANDEM_FAILPOINTS",
            "pairing.exchange=fail@1;truststore.write=fail@1;file.write=fail@1");
    QVERIFY(!failpoint::configError());
    qunsetenv("TANDEM_FAILPOINTS");
    QVERIFY(m_tmp.isValid());
    m_tiny = path(QStringLiteral("tiny"));
    testutil::writeIdxDataset(m_tiny, 1000, 200, false);
    m_coordId = tandemOutput(
        {QStringLiteral("identity"), QStringLiteral("--home"), path(QStringLiteral("coord"))});
    QVERIFY(isDeviceId(m_coordId));
    for (const char* w : {"w1", "w2"})
        QVERIFY(isDeviceId(trustEachOtherByCommand(path(QStringLiteral("coord")), m_coordId,
                                                   path(QLatin1String(w)))));
}

QStringList TestFailpoints::localRun(const QString& out) const {
    return {QStringLiteral("train"),
            QStringLiteral("--model=mlp"),
            QStringLiteral("--data=mnist:") + m_tiny,
            QStringLiteral("--threads=1"),
            QStringLiteral("--batch=50"),
            QStringLiteral("--epochs=1"),
            QStringLiteral("--seed=3"),
            QStringLiteral("--mode=sync"),
            QStringLiteral("--checkpoint-every=5"),
            QStringLiteral("--out=") + out};
}

TandemProcess* TestFailpoints::coordinator(const QString& out, const QStringList& extra) {
    m_procs.push_back(std::make_unique<TandemProcess>(
        localRun(out) +
        QStringList{QStringLiteral("--listen=127.0.0.1:0"), QStringLiteral("--home"),
                    path(QStringLiteral("coord")), QStringLiteral("--worker-timeout=20")} +
        extra));
    return m_procs.back().get();
}

QString TestFailpoints::waitPort(TandemProcess& c) {
    return c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
}

TandemProcess* TestFailpoints::worker(const QString& home, const QString& port,
                                      const QStringList& env) {
    m_procs.push_back(std::make_unique<TandemProcess>(
        QStringList{QStringLiteral("worker"), QStringLiteral("--connect"),
                    QStringLiteral("127.0.0.1:") + port, QStringLiteral("--home"), path(home),
                    QStringLiteral("--threads=1")},
        false, env));
    return m_procs.back().get();
}

void TestFailpoints::badSettingsAreRefused() {
    TandemProcess typo(
        {QStringLiteral("identity"), QStringLiteral("--home"), path(QStringLiteral("x"))}, false,
        {QStringLiteral("TANDEM_FAILPOINTS=checkpoint.rnme=crash")});
    QVERIFY(typo.finish());
    QCOMPARE(typo.exitCode(), 2);
    QVERIFY2(typo.err().contains(QLatin1String("no failpoint named \"checkpoint.rnme\"")),
             qPrintable(typo.err()));
    TandemProcess action(
        {QStringLiteral("identity"), QStringLiteral("--home"), path(QStringLiteral("x"))}, false,
        {QStringLiteral("TANDEM_FAILPOINTS=frame.send=explode@0")});
    QVERIFY(action.finish());
    QCOMPARE(action.exitCode(), 2);
    QVERIFY(!QFileInfo::exists(path(QStringLiteral("x"))));
}

void TestFailpoints::checkpointWriteFails() {
    // The second checkpoint cannot be written: the run stops and says which one is kept, and
    // that one resumes.
    const QString out = path(QStringLiteral("write-fails"));
    TandemProcess a(localRun(out), false,
                    {QStringLiteral("TANDEM_FAILPOINTS=checkpoint.write=fail@2")});
    QVERIFY(a.finish());
    QVERIFY(a.exitCode() != 0);
    QVERIFY2(a.err().contains(QLatin1String("failpoint checkpoint.write: fail")) &&
                 a.err().contains(QLatin1String("The checkpoint of step 5 in")),
             qPrintable(a.err()));
    TandemProcess b({QStringLiteral("train"), QStringLiteral("--resume"),
                     out + QStringLiteral("/checkpoint.tandem"), QStringLiteral("--threads=1")});
    QVERIFY(b.finish());
    QVERIFY2(b.exitCode() == 0 && b.err().contains(QLatin1String("resuming at step 5")),
             qPrintable(b.err()));
}

void TestFailpoints::crashWhileCheckpointing_data() {
    QTest::addColumn<QString>("point");
    QTest::addColumn<QString>("resumesAt");
    // Checkpoints at steps 5, 10, 15...; each point fires at its second pass.
    QTest::newRow("before writing") << QStringLiteral("checkpoint.write") << QStringLiteral("5");
    QTest::newRow("before renaming") << QStringLiteral("checkpoint.rename") << QStringLiteral("5");
    QTest::newRow("after renaming") << QStringLiteral("checkpoint.renamed") << QStringLiteral("10");
    // Step 7's update is made but not counted: the checkpoint of step 5 is the newest.
    QTest::newRow("after a step") << QStringLiteral("trainer.step") << QStringLiteral("5");
}

void TestFailpoints::crashWhileCheckpointing() {
    QFETCH(QString, point);
    QFETCH(QString, resumesAt);
    const QString out = path(QStringLiteral("crash-") + point);
    const QString ledger = out + QStringLiteral(".ledger");
    const int hit = point == QLatin1String("trainer.step") ? 7 : 2;
    TandemProcess a(localRun(out), false,
                    {QStringLiteral("TANDEM_FAILPOINTS=%1=crash@%2").arg(point).arg(hit),
                     QStringLiteral("TANDEM_SAMPLE_LEDGER=") + ledger});
    QVERIFY(a.finish());
    QCOMPARE(a.exitCode(), -1); // killed
    QVERIFY2(a.err().contains(crashed(point)), qPrintable(a.err()));
    // Nothing half-written is left next to the checkpoint (and the run's history record).
    QCOMPARE(QDir(out).entryList(QDir::Files),
             (QStringList{QStringLiteral("checkpoint.tandem"), QStringLiteral("metrics.jsonl"),
                          QStringLiteral("record.json")}));
    TandemProcess b({QStringLiteral("train"), QStringLiteral("--resume"),
                     out + QStringLiteral("/checkpoint.tandem"), QStringLiteral("--threads=1")},
                    false, {QStringLiteral("TANDEM_SAMPLE_LEDGER=") + ledger});
    QVERIFY(b.finish());
    QVERIFY2(b.exitCode() == 0 && b.err().contains(QStringLiteral("resuming at step ") + resumesAt),
             qPrintable(b.err()));
    // The ledger: this process went on from the checkpoint's step; every sample of the epoch
    // once.
    const SampleLedger l = readSampleLedger(ledger);
    QCOMPARE(l.froms, (QList<qint64>{0, resumesAt.toLongLong()}));
    QCOMPARE(l.steps.size(), 20);
    QCOMPARE(l.counts(), (std::pair<qint64, qint64>{1000, 1000}));
}

void TestFailpoints::workerCrashes_data() {
    QTest::addColumn<QString>("point");
    QTest::addColumn<int>("hit");
    // A worker passes frame.send five times in its handshake and then once a step, and
    // worker.upload three times a step: both fire in the second step, while the balancer still
    // gives every worker a share (it judges a worker only after kMinToJudge steps, and on a
    // loaded machine may leave this one out from then on).
    QTest::newRow("mid-frame") << QStringLiteral("frame.send") << 7;
    QTest::newRow("mid-upload") << QStringLiteral("worker.upload") << 6;
}

void TestFailpoints::workerCrashes() {
    // A remote worker dies with part of a frame or of its result sent: the coordinator drops
    // it and its own worker trains every sample.
    QFETCH(QString, point);
    QFETCH(int, hit);
    const QString out = path(QStringLiteral("worker-") + point);
    TandemProcess* c = coordinator(out, {QStringLiteral("--workers=1")});
    const QString port = waitPort(*c);
    QVERIFY(!port.isEmpty());
    TandemProcess* w =
        worker(QStringLiteral("w1"), port,
               {QStringLiteral("TANDEM_FAILPOINTS=%1=crash@%2").arg(point).arg(hit)});
    QVERIFY(w->finish());
    QCOMPARE(w->exitCode(), -1);
    QVERIFY2(w->err().contains(crashed(point)), qPrintable(w->err()));
    QVERIFY(c->finish());
    QVERIFY2(c->exitCode() == 0, qPrintable(c->err()));
    QCOMPARE(c->summary().value(QStringLiteral("samples")).toInteger(), 1000);
}

void TestFailpoints::stallAndStop() {
    // A stall delays and a stop freezes; neither changes what is trained.
    const QString out = path(QStringLiteral("stop"));
    TandemProcess a(
        localRun(out), false,
        {QStringLiteral("TANDEM_FAILPOINTS=trainer.step=stop@3;checkpoint.write=stall:20")});
    QVERIFY(!a.waitForErr(QStringLiteral("failpoint trainer.step: stop")).isEmpty());
    QFile stat(QStringLiteral("/proc/%1/stat").arg(a.pid()));
    if (stat.open(QIODevice::ReadOnly)) { // Linux: the state field after the name is T
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                stat.seek(0);
                const QByteArray s = stat.readAll();
                return s.mid(s.lastIndexOf(')') + 2, 1) == "T";
            }(),
            20000);
    }
    a.signal(SIGCONT);
    QVERIFY(a.finish());
    QVERIFY2(a.exitCode() == 0, qPrintable(a.err()));
    // Steps 5, 10, 15 and 20, and the run's end.
    QCOMPARE(a.err().count(QLatin1String("failpoint checkpoint.write: stall")), 5);
    QCOMPARE(a.summary().value(QStringLiteral("steps")).toInt(), 20);
}

void TestFailpoints::datasetCutInTransfer() {
    // The dataset arrives cut short: the worker refuses it, caches nothing and says why; the
    // next worker receives it whole.
    const QString data = path(QStringLiteral("private"));
    testutil::writeIdxDataset(data, 300, 100, false);
    const QString out = path(QStringLiteral("transfer"));
    m_procs.push_back(std::make_unique<TandemProcess>(QStringList{
        QStringLiteral("train"), QStringLiteral("--mode=sync"), QStringLiteral("--model=mlp"),
        QStringLiteral("--data=mnist:") + data, QStringLiteral("--threads=1"),
        QStringLiteral("--listen=127.0.0.1:0"), QStringLiteral("--workers=1"),
        QStringLiteral("--no-local-worker"), QStringLiteral("--batch=30"),
        QStringLiteral("--epochs=1"), QStringLiteral("--home"), path(QStringLiteral("coord")),
        QStringLiteral("--out=") + out}));
    TandemProcess* c = m_procs.back().get();
    const QString port = waitPort(*c);
    QVERIFY(!port.isEmpty());
    QVERIFY(QDir(data).removeRecursively());
    TandemProcess* cut = worker(QStringLiteral("w1"), port,
                                {QStringLiteral("TANDEM_FAILPOINTS=dataset.transfer=fail")});
    QVERIFY(cut->finish());
    QVERIFY(cut->exitCode() != 0);
    QVERIFY2(cut->err().contains(QLatin1String("failpoint dataset.transfer: fail")) &&
                 cut->err().contains(QLatin1String("the dataset from the coordinator")),
             qPrintable(cut->err()));
    QVERIFY(QDir(path(QStringLiteral("w1/cache/datasets")))
                .entryList({QStringLiteral("*.tandem")})
                .isEmpty());
    TandemProcess* whole = worker(QStringLiteral("w1"), port);
    QVERIFY(c->finish());
    QVERIFY2(c->exitCode() == 0, qPrintable(c->err()));
    QVERIFY(whole->finish());
    QVERIFY2(whole->exitCode() == 0,
             qPrintable(whole->err() + QStringLiteral("\n--- the coordinator:\n") + c->err()));
}

void TestFailpoints::pairingAndTrustStore() {
    // In this process: the first pairing request fails at the responder, and the first trust
    // store write fails. Neither leaves a trace; the next attempts succeed.
    const Identity a = Identity::loadOrCreate(path(QStringLiteral("pa"))).value();
    const Identity b = Identity::loadOrCreate(path(QStringLiteral("pb"))).value();
    Server server(b);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    auto pair = [&](bool expectPaired) {
        QSignalSpy accepted(&server, &Server::connectionSecured);
        Connection* client =
            Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), a, &server);
        QSignalSpy secured(client, &Connection::secured);
        QVERIFY(accepted.wait(20000));
        if (client->state() != Connection::State::Secured)
            QVERIFY(secured.wait(20000));
        auto* serverSide = accepted.first().first().value<Connection*>();
        Yes yesA, yesB;
        PairingSession initiator(PairingSession::Role::Initiator, client, a.deviceId(),
                                 QStringLiteral("laptop"), path(QStringLiteral("pa")), &yesA);
        PairingSession responder(PairingSession::Role::Responder, serverSide, b.deviceId(),
                                 QStringLiteral("desktop"), path(QStringLiteral("pb")), &yesB);
        QSignalSpy doneA(&initiator, &PairingSession::finished);
        QSignalSpy doneB(&responder, &PairingSession::finished);
        QString why;
        connect(&responder, &PairingSession::finished, this,
                [&why](bool, const QString& message) { why = message; });
        responder.start();
        initiator.start();
        QTRY_VERIFY_WITH_TIMEOUT(!doneA.isEmpty() && !doneB.isEmpty(), 20000);
        QCOMPARE(responder.state() == PairState::Paired, expectPaired);
        if (!expectPaired)
            QVERIFY2(why.contains(QLatin1String("failpoint pairing.exchange")), qPrintable(why));
        client->deleteLater();
    };
    pair(false);
    QVERIFY(!TrustStore(path(QStringLiteral("pa"))).contains(b.deviceId()));
    QVERIFY(!TrustStore(path(QStringLiteral("pb"))).contains(a.deviceId()));

    TrustStore store(path(QStringLiteral("ts")));
    const QString id1(64, QLatin1Char('a')), id2(64, QLatin1Char('b'));
    const Status failed = store.add(id1, QStringLiteral("one"));
    QVERIFY(!failed);
    QVERIFY2(failed.error().message.contains(store.path()), qPrintable(failed.error().message));
    QVERIFY(!QFileInfo::exists(store.path()));
    QVERIFY(store.add(id1, QStringLiteral("one")).ok());
    QVERIFY(store.contains(id1));

    // A process killed while it writes the trust store leaves the old one whole.
    const QByteArray before = readRegularFile(store.path(), 1 << 20).value();
    TandemProcess killed({QStringLiteral("trust"), QStringLiteral("add"), id2,
                          QStringLiteral("--home"), path(QStringLiteral("ts"))},
                         false, {QStringLiteral("TANDEM_FAILPOINTS=truststore.write=crash")});
    QVERIFY(killed.finish());
    QCOMPARE(killed.exitCode(), -1);
    QCOMPARE(readRegularFile(store.path(), 1 << 20).value(), before);
    QVERIFY(store.contains(id1) && !store.contains(id2));
    pair(true);
}

void TestFailpoints::atomicWriteFails() {
    // The first whole-file write of this process fails before its rename: no file appears,
    // and the error names it. The next one writes it.
    const QString file = path(QStringLiteral("atomic.json"));
    const Status first = writeFileAtomically(file, "new");
    QVERIFY(!first);
    QVERIFY2(first.error().message.contains(file), qPrintable(first.error().message));
    QVERIFY(!QFileInfo::exists(file));
    QVERIFY(writeFileAtomically(file, "new").ok());
    QCOMPARE(readRegularFile(file, 100).value(), QByteArray("new"));
}

QTEST_GUILESS_MAIN(TestFailpoints)
#include "test_failpoints.moc"
