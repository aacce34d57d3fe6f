// Discovery across a real (virtual) LAN: two network namespaces joined by a veth pair, each
// running `tandem peers` with the default announcements (broadcast and multicast, which stay
// inside the two namespaces). Needs root for ip netns; skips, saying so, otherwise.

#include "testpaths.h"
#include "testutil.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

namespace {

bool sh(const QStringList& args, QString* out = nullptr) {
    QProcess p;
    p.start(args.first(), args.mid(1));
    if (!p.waitForFinished(60000))
        return false;
    if (out) // stdout when it worked, stderr's reason when not
        *out = QString::fromUtf8(p.exitCode() == 0 ? p.readAllStandardOutput()
                                                   : p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

} // namespace

class TestLan : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void nodesInTwoNamespacesFindEachOther();
    void pairAcrossTheLinkThenTrain();
    void cleanupTestCase();

private:
    QString m_ip;
    QString m_a, m_b;
    bool m_made = false;
};

void TestLan::initTestCase() {
    if (geteuid() != 0)
        QSKIP("needs root to create network namespaces (ip netns); run the suite as root to "
              "include it");
    m_ip = QStandardPaths::findExecutable(QStringLiteral("ip"));
    if (m_ip.isEmpty())
        QSKIP("the ip command (iproute2) is not installed");
    const QString tag = QString::number(getpid() % 100000);
    m_a = QStringLiteral("tdmt-a") + tag;
    m_b = QStringLiteral("tdmt-b") + tag;
    const QString va = QStringLiteral("tva") + tag, vb = QStringLiteral("tvb") + tag;
    QString out;
    if (!sh({m_ip, QStringLiteral("netns"), QStringLiteral("add"), m_a}, &out))
        QSKIP(
            qPrintable(QStringLiteral("cannot create a network namespace here: ") + out.trimmed()));
    m_made = true;
    QVERIFY(sh({m_ip, QStringLiteral("netns"), QStringLiteral("add"), m_b}));
    QVERIFY(sh({m_ip, QStringLiteral("link"), QStringLiteral("add"), va, QStringLiteral("type"),
                QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"), vb}));
    QVERIFY(sh(
        {m_ip, QStringLiteral("link"), QStringLiteral("set"), va, QStringLiteral("netns"), m_a}));
    QVERIFY(sh(
        {m_ip, QStringLiteral("link"), QStringLiteral("set"), vb, QStringLiteral("netns"), m_b}));
    QVERIFY(sh({m_ip, QStringLiteral("-n"), m_a, QStringLiteral("addr"), QStringLiteral("add"),
                QStringLiteral("10.232.0.1/24"), QStringLiteral("dev"), va}));
    QVERIFY(sh({m_ip, QStringLiteral("-n"), m_b, QStringLiteral("addr"), QStringLiteral("add"),
                QStringLiteral("10.232.0.2/24"), QStringLiteral("dev"), vb}));
    for (const QString& ns : {m_a, m_b}) {
        QVERIFY(sh({m_ip, QStringLiteral("-n"), ns, QStringLiteral("link"), QStringLiteral("set"),
                    QStringLiteral("lo"), QStringLiteral("up")}));
    }
    QVERIFY(sh({m_ip, QStringLiteral("-n"), m_a, QStringLiteral("link"), QStringLiteral("set"), va,
                QStringLiteral("up")}));
    QVERIFY(sh({m_ip, QStringLiteral("-n"), m_b, QStringLiteral("link"), QStringLiteral("set"), vb,
                QStringLiteral("up")}));
    // As on a real LAN, the nodes start on a link that is up: a veth pair's carrier comes up a
    // moment after both ends are set up, and its IPv6 link-local addresses stay tentative until
    // duplicate address detection ends. Announcements sent before then fail or are dropped.
    auto ready = [&](const QString& ns, const QString& dev) {
        QString link, tentative;
        return sh({m_ip, QStringLiteral("-n"), ns, QStringLiteral("-o"), QStringLiteral("link"),
                   QStringLiteral("show"), QStringLiteral("dev"), dev},
                  &link) &&
               link.contains(QLatin1String("state UP")) &&
               sh({m_ip, QStringLiteral("-n"), ns, QStringLiteral("-6"), QStringLiteral("addr"),
                   QStringLiteral("show"), QStringLiteral("dev"), dev, QStringLiteral("tentative")},
                  &tentative) &&
               tentative.trimmed().isEmpty();
    };
    QTRY_VERIFY_WITH_TIMEOUT(ready(m_a, va) && ready(m_b, vb), 30000);
}

void TestLan::nodesInTwoNamespacesFindEachOther() {
    QTemporaryDir tmp;
    QString idA, idB;
    QVERIFY(sh({testpaths::binary(), QStringLiteral("identity"), QStringLiteral("--home"),
                tmp.filePath(QStringLiteral("a"))},
               &idA));
    QVERIFY(sh({testpaths::binary(), QStringLiteral("identity"), QStringLiteral("--home"),
                tmp.filePath(QStringLiteral("b"))},
               &idB));
    idA = idA.trimmed();
    idB = idB.trimmed();
    auto peers = [&](const QString& ns, const QString& home) {
        auto* p = new QProcess(this);
        p->start(m_ip,
                 {QStringLiteral("netns"), QStringLiteral("exec"), ns, testpaths::binary(),
                  QStringLiteral("peers"), QStringLiteral("--json"), QStringLiteral("--wait=10"),
                  QStringLiteral("--expect=1"), QStringLiteral("--home"), home});
        return p;
    };
    QElapsedTimer t;
    t.start();
    QProcess* a = peers(m_a, tmp.filePath(QStringLiteral("a")));
    QProcess* b = peers(m_b, tmp.filePath(QStringLiteral("b")));
    QVERIFY(a->waitForFinished(60000));
    QVERIFY(b->waitForFinished(60000));
    const qint64 ms = t.elapsed();
    const QJsonArray seenByA = QJsonDocument::fromJson(a->readAllStandardOutput()).array();
    const QJsonArray seenByB = QJsonDocument::fromJson(b->readAllStandardOutput()).array();
    QVERIFY2(seenByA.size() == 1 &&
                 seenByA[0].toObject().value(QStringLiteral("device_id")).toString() == idB,
             a->readAllStandardError().constData());
    QVERIFY2(seenByB.size() == 1 &&
                 seenByB[0].toObject().value(QStringLiteral("device_id")).toString() == idA,
             b->readAllStandardError().constData());
    // Whichever announcement arrived first: IPv4 broadcast or multicast, or IPv6 multicast.
    const QString addr = seenByA[0].toObject().value(QStringLiteral("address")).toString();
    QVERIFY2(addr == QLatin1String("10.232.0.2") || addr.startsWith(QLatin1String("fe80::")),
             qPrintable(addr));
    QVERIFY2(ms < 10000, qPrintable(QString::number(ms)));
    qInfo("the two namespaces found each other in %lld ms", ms);
}

void TestLan::pairAcrossTheLinkThenTrain() {
    // The whole first-use path on two "machines": the desk runs `tandem serve`; the laptop
    // finds it by device ID, both confirm the code, and the laptop's run invites the desk,
    // which joins as a worker. No address or trust was typed by hand.
    QTemporaryDir tmp;
    const QString desk = tmp.filePath(QStringLiteral("desk")),
                  laptop = tmp.filePath(QStringLiteral("laptop"));
    QString deskId;
    QVERIFY(sh({testpaths::binary(), QStringLiteral("identity"), QStringLiteral("--home"), desk},
               &deskId));
    deskId = deskId.trimmed();
    testutil::writeIdxDataset(tmp.filePath(QStringLiteral("data")), 1000, 200, true);

    QProcess serve;
    serve.start(m_ip, {QStringLiteral("netns"), QStringLiteral("exec"), m_b, testpaths::binary(),
                       QStringLiteral("serve"), QStringLiteral("--home"), desk,
                       QStringLiteral("--name=desk")});
    QVERIFY(serve.waitForStarted(30000));
    QProcess pair;
    pair.start(m_ip, {QStringLiteral("netns"), QStringLiteral("exec"), m_a, testpaths::binary(),
                      QStringLiteral("pair"), deskId, QStringLiteral("--home"), laptop,
                      QStringLiteral("--name=laptop"), QStringLiteral("--wait=15")});
    QByteArray serveOut, pairOut;
    auto code = [](const QByteArray& out) {
        const auto m =
            QRegularExpression(QStringLiteral("CODE (\\d{6})")).match(QString::fromUtf8(out));
        return m.hasMatch() ? m.captured(1) : QString();
    };
    QVERIFY(QTest::qWaitFor(
        [&] {
            serveOut += serve.readAllStandardOutput();
            pairOut += pair.readAllStandardOutput();
            return !code(serveOut).isEmpty() && !code(pairOut).isEmpty();
        },
        60000));
    QCOMPARE(code(pairOut), code(serveOut));
    serve.write("y\n");
    pair.write("y\n");
    QVERIFY(serve.waitForBytesWritten(10000));
    QVERIFY(pair.waitForBytesWritten(10000));
    QVERIFY(QTest::qWaitFor([&] { return pair.state() == QProcess::NotRunning; }, 60000));
    QVERIFY2(pair.exitCode() == 0, pair.readAllStandardError().constData());

    QProcess train;
    train.start(m_ip, {QStringLiteral("netns"), QStringLiteral("exec"), m_a, testpaths::binary(),
                       QStringLiteral("train"), QStringLiteral("--mode=sync"),
                       QStringLiteral("--model=mlp"),
                       QStringLiteral("--data=mnist:") + tmp.filePath(QStringLiteral("data")),
                       QStringLiteral("--epochs=1"), QStringLiteral("--batch=20"),
                       QStringLiteral("--threads=1"), QStringLiteral("--listen=0.0.0.0:0"),
                       QStringLiteral("--workers=1"), QStringLiteral("--no-local-worker"),
                       QStringLiteral("--invite=10.232.0.2"), QStringLiteral("--home"), laptop,
                       QStringLiteral("--out=") + tmp.filePath(QStringLiteral("run"))});
    QVERIFY(QTest::qWaitFor([&] { return train.state() == QProcess::NotRunning; }, 240000));
    const QByteArray err = train.readAllStandardError();
    QVERIFY2(train.exitCode() == 0, err.constData());
    const QJsonObject summary =
        QJsonDocument::fromJson(train.readAllStandardOutput().trimmed().split('\n').last())
            .object();
    QVERIFY2(summary.value(QStringLiteral("test_accuracy")).toDouble() > 0.5, err.constData());
    const QJsonArray workers = summary.value(QStringLiteral("workers")).toArray();
    QCOMPARE(workers.size(), 1);
    // The worker is named by its machine and device ID; its address is the link's detail.
    QVERIFY(workers[0]
                .toObject()
                .value(QStringLiteral("name"))
                .toString()
                .contains(QStringLiteral(" (device ")));
    QVERIFY2(err.contains(" at 10.232.0.2:"), err.constData());
    serve.kill();
    serve.waitForFinished(10000);
}

void TestLan::cleanupTestCase() {
    if (!m_made)
        return;
    sh({m_ip, QStringLiteral("netns"), QStringLiteral("del"), m_a});
    sh({m_ip, QStringLiteral("netns"), QStringLiteral("del"), m_b});
}

QTEST_GUILESS_MAIN(TestLan)
#include "test_lan.moc"
