// A new user's first hour, driven through two app windows (two machines with the same host
// name) on loopback: each names its machine in the wizard, finds the other under that name and
// its device ID, pairs, and the answering machine's wizard says what comes next; one starts a
// run with the other, whose dashboard shows its part of that run; pause, resume, the final
// evaluation, export; and the lending machine stops lending a second run.

#include "engine/trainingrun.h"
#include "guitest.h"
#include "net/truststore.h"
#include "ui/chartpanel.h"
#include "ui/format.h"
#include "ui/livechart.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/runform.h"
#include "ui/setupwizard.h"

#include <QAbstractButton>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;
using namespace tandem::ui;

namespace {
template <typename T> T* child(QObject* parent, const char* name) {
    return parent->findChild<T*>(QLatin1String(name));
}

QString digits(const QString& s) {
    QString d;
    for (QChar c : s)
        if (c.isDigit())
            d += c;
    return d;
}

QString statusText(MainWindow& w) {
    return child<QLabel>(&w, "progressText")->text();
}

// The small MLP on part of Fashion-MNIST, in sync with the invited machine, long enough for a
// pause in the middle (about a thousand steps).
RunConfig journeyRun(int64_t limitTrain) {
    RunConfig c;
    c.model = QStringLiteral("mlp");
    c.data = QStringLiteral("fashion-mnist");
    c.epochs = 2;
    c.batch = 32;
    c.limitTrain = limitTrain;
    c.limitTest = 2000;
    c.threads = 1;
    c.lr = 0.002;
    c.mode = TrainMode::Sync;
    return c;
}
} // namespace

class TestGuiJourney : public QObject {
    Q_OBJECT

    // Walks one window's wizard: name typed on page 1, then Next to the Find page.
    static void nameAndFind(MainWindow& w, const QString& name) {
        w.showWizard();
        SetupWizard* wiz = w.wizard();
        QTRY_VERIFY_WITH_TIMEOUT(w.node()->isRunning(), 20000);
        auto* edit = child<QLineEdit>(wiz, "nameEdit");
        edit->selectAll();
        QTest::keyClicks(edit, name);
        wiz->next();
        QCOMPARE(wiz->currentId(), int(SetupWizard::FindPeer));
    }

    // The row of the machine called `name` in the wizard's list of machines found, or -1.
    static int foundRow(MainWindow& w, const QString& name) {
        auto* table = child<QTableView>(w.wizard(), "peerTable");
        for (int r = 0; r < table->model()->rowCount(); ++r)
            if (table->model()->index(r, PeerModel::Machine).data().toString() == name)
                return r;
        return -1;
    }

    // A's wizard pairs with B, B answers in its dialog; both wizards end on Done.
    void pairThroughWizards(MainWindow& a, MainWindow& b) {
        nameAndFind(a, QStringLiteral("alpha"));
        nameAndFind(b, QStringLiteral("beta"));
        // Both hosts are called "vm": the names typed are announced before Finish, and the
        // device ID tells the machines apart.
        int row = -1;
        QVERIFY(QTest::qWaitFor([&] { return (row = foundRow(a, QStringLiteral("beta"))) >= 0; },
                                30000));
        auto* table = child<QTableView>(a.wizard(), "peerTable");
        QCOMPARE(table->model()->index(row, PeerModel::DeviceId).data().toString(),
                 shortDeviceId(b.node()->deviceId()));
        QVERIFY(!table->isColumnHidden(PeerModel::DeviceId));
        table->selectRow(row);
        a.wizard()->next();
        QCOMPARE(a.wizard()->currentId(), int(SetupWizard::Pair));

        QMessageBox* box = nullptr;
        QVERIFY(
            QTest::qWaitFor([&] { return (box = child<QMessageBox>(&b, "pairQuestion")); }, 30000));
        QVERIFY2(box->windowTitle().contains(QStringLiteral("alpha")), qPrintable(box->text()));
        QVERIFY(box->text().contains(shortDeviceId(a.node()->deviceId())));
        auto* code = child<QLabel>(a.wizard(), "codeLabel");
        QTRY_VERIFY_WITH_TIMEOUT(!digits(code->text()).isEmpty(), 20000);
        QVERIFY(digits(box->text()).endsWith(digits(code->text())));
        QVERIFY(child<QLabel>(a.wizard(), "pairStatus")->text().contains(QStringLiteral("beta")));
        // The Pair page has a subtitle like every other page.
        QVERIFY(!a.wizard()->currentPage()->subTitle().isEmpty());
        for (QAbstractButton* btn : box->buttons())
            if (box->buttonRole(btn) == QMessageBox::YesRole)
                btn->click();
        QTest::mouseClick(child<QPushButton>(a.wizard(), "sameCodeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(a.wizard()->paired(), 30000);
        a.wizard()->next();
        QCOMPARE(a.wizard()->currentId(), int(SetupWizard::Done));
        QVERIFY(child<QLabel>(a.wizard(), "doneSummary")
                    ->text()
                    .contains(QStringLiteral("alpha and beta are paired")));

        // The answering machine's wizard leaves the Find page for Done, and says what now.
        QTRY_COMPARE_WITH_TIMEOUT(b.wizard()->currentId(), int(SetupWizard::Done), 20000);
        const QString done = child<QLabel>(b.wizard(), "doneSummary")->text();
        QVERIFY2(done.contains(QStringLiteral("beta and alpha are paired")), qPrintable(done));
        QVERIFY2(done.contains(QStringLiteral("Runs started on alpha")), qPrintable(done));
        a.wizard()->button(QWizard::FinishButton)->click();
        b.wizard()->button(QWizard::FinishButton)->click();
    }

private Q_SLOTS:
    void initTestCase() {
        if (!QFile::exists(
                QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")))
            QSKIP("needs Debian's Fashion-MNIST (the README's command installs it)");
    }

    void pairRunLendAndExport() {
        QTemporaryDir homeA, homeB, out;
        const quint16 port = freeUdpPort();
        WindowContext ca = loopbackContext(homeA.path(), port, QStringLiteral("vm"));
        WindowContext cb = loopbackContext(homeB.path(), port, QStringLiteral("vm"));
        ca.settings.wizardDone = cb.settings.wizardDone = false;
        MainWindow a(ca), b(cb);
        a.show();
        b.show();
        pairThroughWizards(a, b);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(TrustStore(homeA.path()).entries().size(), 1);
        QCOMPARE(TrustStore(homeB.path()).entries().size(), 1);

        // alpha starts a run with beta ticked under Machines.
        a.runForm()->setConfig(journeyRun(16384));
        auto* list = child<QListWidget>(a.runForm(), "machinesList");
        QTRY_COMPARE_WITH_TIMEOUT(list->count(), 2, 30000);
        QVERIFY(list->item(1)->text().startsWith(QStringLiteral("beta")));
        list->item(1)->setCheckState(Qt::Checked);
        QSignalSpy evaluating(a.run(), &TrainingRun::evaluating);
        QStringList evalTexts;
        connect(a.run(), &TrainingRun::evaluating, this,
                [&] { evalTexts << statusText(a); }); // after the window's own slot
        QTest::mouseClick(child<QPushButton>(&a, "startButton"), Qt::LeftButton);

        // beta's dashboard shows alpha's run: whose it is, its share, speed and loss.
        QTRY_VERIFY_WITH_TIMEOUT(
            statusText(b).contains(QStringLiteral("Lending this machine to the run of alpha")),
            120000);
        QTRY_VERIFY_WITH_TIMEOUT(statusText(b).contains(QStringLiteral("share")), 120000);
        const QString lending = statusText(b);
        QVERIFY2(lending.contains(QStringLiteral("run of alpha (device ") +
                                  shortDeviceId(a.node()->deviceId())),
                 qPrintable(lending));
        // The lending view drops the charts it has no figures for.
        QVERIFY(!b.charts()->accuracyChart()->isVisible());
        QVERIFY(b.charts()->speedChart()->isVisible());
        QVERIFY2(lending.contains(QStringLiteral("samples/s")), qPrintable(lending));
        QVERIFY2(lending.contains(QStringLiteral("loss")), qPrintable(lending));
        QVERIFY(b.charts()->lossChart()->appendedCount(0) >= 1);
        QVERIFY(!child<QPushButton>(&b, "startButton")->isEnabled());
        QVERIFY(child<QPushButton>(&b, "stopLendingButton")->isVisible());
        QVERIFY(child<QPlainTextEdit>(&b, "logView")
                    ->toPlainText()
                    .contains(QStringLiteral("Joining the run of alpha")));

        // Pause and resume from alpha; beta says so.
        QTest::mouseClick(child<QPushButton>(&a, "pauseButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(statusText(b).contains(QStringLiteral("paused the run")), 60000);
        QTest::mouseClick(child<QPushButton>(&a, "resumeButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!statusText(b).contains(QStringLiteral("paused the run")), 60000);

        // The run ends through its final evaluation, which the status line reports.
        QTRY_COMPARE_WITH_TIMEOUT(a.run()->state(), TrainingRun::State::Finished, 300000);
        QVERIFY(evaluating.count() >= 2);
        const QString evalLine =
            QStringLiteral("evaluating on %1 test samples").arg(QLocale().toString(2000));
        QVERIFY2(!evalTexts.filter(evalLine).isEmpty(),
                 qPrintable(evalTexts.join(QLatin1Char('\n'))));
        QTRY_VERIFY_WITH_TIMEOUT(statusText(b).contains(QStringLiteral("finished its work")),
                                 60000);
        QVERIFY(child<QPushButton>(&b, "startButton")->isEnabled());
        QVERIFY(!child<QPushButton>(&b, "stopLendingButton")->isVisible());

        QSignalSpy exported(&a, &MainWindow::exportFinished);
        const QString pt = out.filePath(QStringLiteral("model.pt"));
        a.exportRun(0, ExportFormat::TorchScript, pt);
        QVERIFY(exported.wait(60000));
        QVERIFY2(exported.last().at(0).toBool(), qPrintable(exported.last().at(1).toString()));
        QVERIFY(QFileInfo(pt).size() > 0);

        // A second run: beta stops lending, and alpha's run goes on without it.
        a.runForm()->setConfig(journeyRun(32768));
        QTRY_COMPARE_WITH_TIMEOUT(list->count(), 2, 30000);
        list->item(1)->setCheckState(Qt::Checked);
        QTest::mouseClick(child<QPushButton>(&a, "startButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(statusText(b).contains(QStringLiteral("share")), 120000);
        QTest::mouseClick(child<QPushButton>(&b, "stopLendingButton"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(child<QPlainTextEdit>(&b, "logView")
                                     ->toPlainText()
                                     .contains(QStringLiteral("stopped lending to alpha")),
                                 60000);
        QVERIFY(child<QPushButton>(&b, "startButton")->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(a.run()->state(), TrainingRun::State::Finished, 300000);
    }
};

QTEST_MAIN(TestGuiJourney)
#include "test_gui_journey.moc"
