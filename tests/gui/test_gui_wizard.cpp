// The setup wizard against a real `tandem serve` on loopback: navigation, pairing confirmed
// and rejected from either side, and pairing started by the other machine.

#include "guitest.h"
#include "net/truststore.h"
#include "proc.h"
#include "testpaths.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/setupwizard.h"

#include <QAbstractButton>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;
using namespace tandem::ui;

class TestGuiWizard : public QObject {
    Q_OBJECT

    // This machine's window and a served peer, both on loopback, in homes of their own.
    struct Scene {
        QTemporaryDir here, there;
        std::unique_ptr<TandemProcess> peer;
        std::unique_ptr<MainWindow> window;
    };

    // Starts the peer and the window, and walks the wizard to the Pair page.
    void openAtPairPage(Scene& s, bool firstStart) {
        const quint16 port = freeUdpPort();
        s.peer = std::make_unique<TandemProcess>(
            serveArgs(s.there.path(), port, QStringLiteral("gpu-desktop")), true);
        QVERIFY(
            !s.peer->waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)")).isEmpty());
        WindowContext ctx = loopbackContext(s.here.path(), port);
        ctx.settings.wizardDone = !firstStart;
        s.window = std::make_unique<MainWindow>(ctx);
        s.window->show();
        reachPairPage(*s.window, *s.peer);
    }

    // The code's digits, without the grouping space and the direction marks around it.
    static QString digits(const QString& s) {
        QString d;
        for (QChar c : s)
            if (c.isDigit())
                d += c;
        return d;
    }

    template <typename T> static T* child(QObject* parent, const char* name) {
        return parent->findChild<T*>(QLatin1String(name));
    }

    // Opens the wizard, names this machine, finds the served peer and starts pairing with
    // it, until the wizard shows the code the peer printed.
    void reachPairPage(MainWindow& w, TandemProcess& peer) {
        w.showWizard();
        SetupWizard* wiz = w.wizard();
        QVERIFY(wiz);
        QCOMPARE(wiz->currentId(), int(SetupWizard::ThisMachine));
        QTRY_VERIFY_WITH_TIMEOUT(w.node()->isRunning(), 20000);
        QVERIFY(child<QLabel>(wiz, "deviceIdLabel")->text().contains(w.node()->deviceId()));
        QVERIFY(child<QLabel>(wiz, "devicesLabel")->text().contains(QStringLiteral("CPU")));
        auto* name = child<QLineEdit>(wiz, "nameEdit");
        name->clear();
        QVERIFY(!wiz->button(QWizard::NextButton)->isEnabled()); // a name is required
        QTest::keyClicks(name, QStringLiteral("macbook"));
        QVERIFY(wiz->button(QWizard::NextButton)->isEnabled());
        wiz->next();
        QCOMPARE(wiz->currentId(), int(SetupWizard::FindPeer));

        auto* table = child<QTableView>(wiz, "peerTable");
        QVERIFY(child<QLabel>(wiz, "firewallHint")->text().contains(QStringLiteral("47300")));
        int row = -1;
        QVERIFY(QTest::qWaitFor(
            [&] {
                for (int r = 0; r < table->model()->rowCount(); ++r)
                    if (table->model()->index(r, PeerModel::Machine).data().toString() ==
                        QLatin1String("gpu-desktop"))
                        row = r;
                return row >= 0;
            },
            30000));
        // Once a machine is listed, the advice for when none is goes.
        QTRY_VERIFY(child<QLabel>(wiz, "firewallHint")->isHidden());
        QVERIFY(table->model()
                    ->index(row, PeerModel::Status)
                    .data()
                    .toString()
                    .contains(QStringLiteral("not paired")));
        table->selectRow(row);
        QCOMPARE(wiz->chosenName(), QStringLiteral("gpu-desktop"));
        wiz->next();
        QCOMPARE(wiz->currentId(), int(SetupWizard::Pair));
        QVERIFY(!wiz->button(QWizard::NextButton)->isEnabled());
        const QString peerCode = peer.waitForOut(QStringLiteral("CODE (\\d{6})"));
        QVERIFY(!peerCode.isEmpty());
        auto* codeLabel = child<QLabel>(wiz, "codeLabel");
        QTRY_COMPARE_WITH_TIMEOUT(digits(codeLabel->text()), peerCode, 20000);
        QVERIFY(child<QPushButton>(wiz, "sameCodeButton")->isEnabled());
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(QFile::exists(testpaths::binary())); }

    void wizardPairsBothConfirm() {
        Scene scene;
        openAtPairPage(scene, true);
        if (QTest::currentTestFailed())
            return;
        TandemProcess& peer = *scene.peer;
        MainWindow& w = *scene.window;
        const QString here = scene.here.path(), there = scene.there.path();
        SetupWizard* wiz = w.wizard();
        peer.write("y\n");
        QTest::mouseClick(child<QPushButton>(wiz, "sameCodeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(wiz->paired(), 20000);
        QVERIFY(wiz->button(QWizard::NextButton)->isEnabled());
        QVERIFY(!peer.waitForErr(QStringLiteral("paired with macbook")).isEmpty());
        const QList<TrustStore::Entry> trusted = TrustStore(here).entries();
        QCOMPARE(trusted.size(), 1);
        QCOMPARE(trusted.first().name, QStringLiteral("gpu-desktop"));

        wiz->next();
        QCOMPARE(wiz->currentId(), int(SetupWizard::Done));
        QVERIFY(child<QLabel>(wiz, "doneSummary")->text().contains(QStringLiteral("gpu-desktop")));
        wiz->accept();
        QCOMPARE(AppSettings::load(here).wizardDone, true);
        QCOMPARE(AppSettings::load(here).nodeName, QStringLiteral("macbook"));

        // The cluster panel lists the paired machine, online.
        auto* cluster = w.findChild<QTableView*>(QStringLiteral("clusterView"));
        QTRY_COMPARE_WITH_TIMEOUT(cluster->model()->rowCount(), 2, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(cluster->model()
                                     ->index(1, PeerModel::Status)
                                     .data()
                                     .toString()
                                     .contains(QStringLiteral("paired")),
                                 10000);
    }

    void wizardRejectHere() {
        Scene scene;
        openAtPairPage(scene, false);
        if (QTest::currentTestFailed())
            return;
        TandemProcess& peer = *scene.peer;
        MainWindow& w = *scene.window;
        const QString here = scene.here.path(), there = scene.there.path();
        SetupWizard* wiz = w.wizard();
        QTest::mouseClick(child<QPushButton>(wiz, "differentCodeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(child<QPushButton>(wiz, "retryButton")->isVisible(), 20000);
        QVERIFY(child<QLabel>(wiz, "pairStatus")->text().contains(QStringLiteral("You said")));
        QVERIFY(child<QLabel>(wiz, "pairAdvice")->text().contains(QStringLiteral("right machine")));
        QVERIFY(!wiz->paired());
        QVERIFY(!wiz->button(QWizard::NextButton)->isEnabled());
        QVERIFY(TrustStore(here).entries().isEmpty());
        QVERIFY(!peer.waitForErr(QStringLiteral("pairing failed")).isEmpty());
        QVERIFY(TrustStore(there).entries().isEmpty());
    }

    void wizardRejectedByPeer() {
        Scene scene;
        openAtPairPage(scene, false);
        if (QTest::currentTestFailed())
            return;
        TandemProcess& peer = *scene.peer;
        MainWindow& w = *scene.window;
        const QString here = scene.here.path(), there = scene.there.path();
        SetupWizard* wiz = w.wizard();
        peer.write("n\n");
        QTRY_VERIFY_WITH_TIMEOUT(child<QPushButton>(wiz, "retryButton")->isVisible(), 20000);
        QVERIFY(child<QLabel>(wiz, "pairStatus")
                    ->text()
                    .contains(QStringLiteral("other machine said the codes differ")));
        QVERIFY(TrustStore(here).entries().isEmpty());

        // Try again: a new attempt, a new code, and this time both agree.
        QTest::mouseClick(child<QPushButton>(wiz, "retryButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(digits(child<QLabel>(wiz, "codeLabel")->text()).size() == 6,
                                 20000);
        peer.write("y\n");
        QTest::mouseClick(child<QPushButton>(wiz, "sameCodeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(wiz->paired(), 20000);
        QCOMPARE(TrustStore(here).entries().size(), 1);
    }

    // Pairing with an address where nothing listens fails with the advice to check the other
    // machine, and pairs nothing.
    void unreachablePeer() {
        QTemporaryDir hereDir;
        MainWindow w(loopbackContext(hereDir.path(), freeUdpPort()));
        QTRY_VERIFY_WITH_TIMEOUT(w.node()->isRunning(), 20000);
        QSignalSpy finished(w.node(), &NodeBridge::pairingFinished);
        QTcpServer closed; // a port that was free a moment ago and now refuses connections
        QVERIFY(closed.listen(QHostAddress::LocalHost));
        const quint16 port = closed.serverPort();
        closed.close();
        w.node()->pairWith(QStringLiteral("127.0.0.1"), port);
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished.first().at(0).toBool(), false);
        QCOMPARE(finished.first().at(1).toInt(), int(PairFailure::ConnectionLost));
        QVERIFY2(finished.first().at(2).toString().contains(QStringLiteral("cannot reach")),
                 qPrintable(finished.first().at(2).toString()));
        QVERIFY(TrustStore(hereDir.path()).entries().isEmpty());
    }

    // The other machine starts pairing: the dashboard asks with the code.
    void pairingStartedByPeer() {
        QTemporaryDir hereDir, thereDir;
        const QString here = hereDir.path(), there = thereDir.path();
        const quint16 port = freeUdpPort();
        MainWindow w(loopbackContext(here, port));
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.node()->port() != 0, 20000);
        TandemProcess pair({QStringLiteral("pair"), QStringLiteral("--home"), there,
                            QStringLiteral("--name=gpu-desktop"),
                            QStringLiteral("127.0.0.1:%1").arg(w.node()->port())},
                           true);
        const QString code = pair.waitForOut(QStringLiteral("CODE (\\d{6})"));
        QVERIFY(!code.isEmpty());
        QMessageBox* box = nullptr;
        QVERIFY(QTest::qWaitFor(
            [&] { return (box = w.findChild<QMessageBox*>(QStringLiteral("pairQuestion"))); },
            20000));
        QVERIFY(box->text().contains(code.left(3) + QLatin1Char(' ') + code.mid(3)));
        QVERIFY(box->text().contains(QStringLiteral("gpu-desktop")));
        // The machine is named with its short device ID, not its address (a detail).
        const QString thereId =
            tandemOutput({QStringLiteral("identity"), QStringLiteral("--home"), there});
        QVERIFY(box->text().contains(thereId.left(4).toUpper() + QLatin1Char(' ') +
                                     thereId.mid(4, 4).toUpper()));
        QVERIFY2(!box->text().contains(QStringLiteral("127.0.0.1")), qPrintable(box->text()));
        QVERIFY(box->detailedText().contains(QStringLiteral("127.0.0.1")));
        QVERIFY(box->detailedText().contains(thereId));
        pair.write("y\n");
        QAbstractButton* yes = nullptr;
        for (QAbstractButton* b : box->buttons())
            if (box->buttonRole(b) == QMessageBox::YesRole)
                yes = b;
        QVERIFY(yes);
        yes->click();
        QVERIFY(pair.finish(30000));
        QCOMPARE(pair.exitCode(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(TrustStore(here).entries().size(), 1, 10000);
    }
};

QTEST_MAIN(TestGuiWizard)
#include "test_gui_wizard.moc"
