// The Sweep tab with a real sweep: this machine and a paired `tandem serve` on loopback run
// the trials, the table and the charts fill, and the best trial exports.

#include "guitest.h"
#include "proc.h"
#include "sweep/scheduler.h"
#include "testpaths.h"
#include "testutil.h"
#include "ui/livechart.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/sweeptab.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;
using namespace tandem::ui;

class TestGuiSweep : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sweepTabRunsAcrossTwoMachinesAndExportsTheBest();
    void badFileIsNamedInTheTab();
};

void TestGuiSweep::sweepTabRunsAcrossTwoMachinesAndExportsTheBest() {
    QTemporaryDir tmp;
    const QString app = tmp.filePath(QStringLiteral("app")),
                  desk = tmp.filePath(QStringLiteral("desk"));
    const auto [appId, deskId] = pairHomes(app, desk);
    QVERIFY(!appId.isEmpty() && !deskId.isEmpty());
    const quint16 dport = freeUdpPort();
    TandemProcess serve(serveArgs(desk, dport, QStringLiteral("desk")), true);
    QVERIFY(!serve.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)")).isEmpty());
    const QString data = tmp.filePath(QStringLiteral("tiny"));
    testutil::writeIdxDataset(data, 600, 200, true);

    MainWindow w(loopbackContext(app, dport));
    w.show();
    SweepTab* tab = w.sweep();
    tab->setProgram(testpaths::binary());
    // The desk shows up paired and online.
    PeerModel* peers = w.node()->peers();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (int r = 0; r < peers->rowCount(); ++r) {
                const QModelIndex i = peers->index(r, PeerModel::Machine);
                if (!i.data(PeerModel::SelfRole).toBool() &&
                    i.data(PeerModel::PairedRole).toBool() &&
                    i.data(PeerModel::OnlineRole).toBool())
                    return true;
            }
            return false;
        }(),
        60000);

    const QString file = tmp.filePath(QStringLiteral("sweep.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"model": "mlp", "data": "mnist:%1", "threads": 1, "epochs": 2,
        "local_steps": 4, "sweep": {"space": {"lr": {"choice": [0.000001, 0.003]},
        "batch": {"choice": [20, 40]}}, "trials": 4, "seed": 3,
        "scheduler": {"kind": "asha", "reduction": 2, "rungs": [1, 2]}}})")
                .arg(data)
                .toUtf8());
    f.close();
    QVERIFY(tab->openFile(file));
    QVERIFY2(tab->statusText().startsWith(QStringLiteral("4 trial")),
             qPrintable(tab->statusText()));
    tab->findChild<QLineEdit*>(QStringLiteral("sweepFolder"))
        ->setText(tmp.filePath(QStringLiteral("sweep-out")));
    QSignalSpy done(tab, &SweepTab::finished);
    QTest::mouseClick(tab->findChild<QPushButton*>(QStringLiteral("sweepStart")), Qt::LeftButton);
    QVERIFY(tab->running());
    QVERIFY(tab->findChild<QPushButton*>(QStringLiteral("sweepStop"))->isEnabled());
    QVERIFY(done.wait(300000));
    QVERIFY(done.first().first().toJsonObject().value(QStringLiteral("complete")).toBool());

    // The table says what the records say: trials promoted to the second rung finished, the
    // rest were stopped early when the sweep ended (asha keeps the better half of a rung).
    auto* table = tab->findChild<QTableWidget*>(QStringLiteral("sweepTable"));
    QCOMPARE(table->rowCount(), 4);
    QSet<QString> devices;
    int stopped = 0;
    auto* curves = tab->findChild<LiveChart*>(QStringLiteral("sweepCurves"));
    QCOMPARE(curves->seriesCount(), 4);
    for (const TrialRecord& t : tab->runner()->trials()) {
        const bool done = t.status == TrialRecord::Status::Done;
        QVERIFY(done || t.status == TrialRecord::Status::Stopped);
        stopped += !done;
        QCOMPARE(table->item(t.id, 3)->text(),
                 done ? QStringLiteral("finished") : QStringLiteral("stopped early"));
        QVERIFY(!table->item(t.id, 4)->text().isEmpty()); // the metric at the first rung
        QCOMPARE(table->item(t.id, 5)->text().isEmpty(), !done);
        devices << table->item(t.id, 2)->text();
        QCOMPARE(curves->appendedCount(t.id), qint64(done ? 2 : 1)); // one point per epoch
    }
    QVERIFY(stopped >= 1 && stopped <= 2);
    QCOMPARE(devices.size(), 2);
    auto* scatter = tab->findChild<LiveChart*>(QStringLiteral("sweepScatter"));
    QCOMPARE(scatter->appendedCount(0) + scatter->appendedCount(1), qint64(4));
    QCOMPARE(scatter->appendedCount(1), qint64(1)); // the best, drawn apart
    QVERIFY2(tab->statusText().contains(QStringLiteral("Best: trial")),
             qPrintable(tab->statusText()));
    QVERIFY2(tab->statusText().contains(QStringLiteral("lr=0.003")), qPrintable(tab->statusText()));

    QVERIFY(tab->findChild<QPushButton*>(QStringLiteral("sweepExport"))->isEnabled());
    QSignalSpy exported(&w, &MainWindow::exportFinished);
    const QString out = tmp.filePath(QStringLiteral("best.pt"));
    w.exportCheckpointFile(tab->bestCheckpoint(), ExportFormat::TorchScript, out);
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported.first().first().toBool(), qPrintable(exported.first().at(1).toString()));
    QVERIFY(QFileInfo(out).size() > 1000);
}

void TestGuiSweep::badFileIsNamedInTheTab() {
    QTemporaryDir tmp;
    MainWindow w(loopbackContext(tmp.path(), freeUdpPort()));
    const QString file = tmp.filePath(QStringLiteral("bad.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"model": "mlp", "data": "d", "sweep": {"space": {"lr": {"uniform": [0, 1]}},
        "trials": 2}})");
    f.close();
    QVERIFY(!w.sweep()->openFile(file));
    QVERIFY2(w.sweep()->statusText().contains(QStringLiteral("sweep.space.lr")),
             qPrintable(w.sweep()->statusText()));
    QVERIFY(!w.sweep()->findChild<QPushButton*>(QStringLiteral("sweepStart"))->isEnabled());
}

QTEST_MAIN(TestGuiSweep)
#include "test_gui_sweep.moc"
