// The app as a fine-tuning studio: the playground that answers like a chat, and what the
// window keeps across restarts. Widgets on the offscreen platform, with a tiny Hugging Face
// folder (tests/hffolder.h) as the model.

#include "engine/runhistory.h"
#include "guitest.h"
#include "hffolder.h"
#include "model/modelsource.h"
#include "ui/chartpanel.h"
#include "ui/historymodel.h"
#include "ui/livechart.h"
#include "ui/runform.h"
#include "ui/trydialog.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;
using namespace tandem::ui;

namespace {
// A tiny Llama-shaped folder with a tokenizer and a chat template, as hf:DIR.
QString tinyModel(const QTemporaryDir& dir) {
    const QString folder = dir.filePath(QStringLiteral("tiny"));
    hffolder::Spec spec;
    if (!hffolder::write(folder, spec) || !hffolder::writeTokenizer(folder))
        return QString();
    return ModelSource::hfFolder(folder).text();
}

QPlainTextEdit* promptOf(TryDialog& d) {
    return d.findChild<QPlainTextEdit*>(QStringLiteral("tryPrompt"));
}

// Greedy and short, so that an answer is quick and the same every time.
void quick(TryDialog& d) {
    d.findChild<QDoubleSpinBox*>(QStringLiteral("tryTemperature"))->setValue(0);
    d.findChild<QSpinBox*>(QStringLiteral("tryLength"))->setValue(4);
}

// A finished run's folder as the engine leaves it: its record (description, start, summary)
// and `steps` steps' lines in metrics.jsonl with an epoch's end after every ten, the loss
// starting at `loss`.
void writeRun(const QString& folder, const QString& started, int steps, double loss, double lr) {
    QDir().mkpath(folder);
    RunConfig c;
    c.model = QStringLiteral("mlp");
    c.data = QStringLiteral("fashion-mnist");
    c.epochs = (steps + 9) / 10;
    c.lr = lr;
    c.batch = 48;
    c.outDir = folder;
    RunSummary sum;
    sum.finished = true;
    sum.task = Task::Classification;
    sum.samplesPerS = 100;
    QJsonObject record{{QStringLiteral("config"), c.toJson()},
                       {QStringLiteral("started"), started},
                       {QStringLiteral("status"), QStringLiteral("finished")},
                       {QStringLiteral("summary"), sum.toJson()}};
    RunHistory::write(folder, record);
    QFile f(QDir(folder).filePath(RunFiles::metrics()));
    QVERIFY(f.open(QIODevice::WriteOnly));
    for (int i = 1; i <= steps; ++i) {
        StepMetrics m;
        m.step = i;
        m.epoch = (i - 1) / 10;
        m.loss = loss / i;
        m.samples = 48;
        m.stepMs = 10;
        m.workers = {{QStringLiteral("local"), 48, 9, 0}};
        f.write(QJsonDocument(m.toJson()).toJson(QJsonDocument::Compact) + '\n');
        if (i % 10 == 0) {
            EpochMetrics e;
            e.epoch = m.epoch;
            e.trainLoss = m.loss;
            e.test.evaluated = true;
            e.test.loss = m.loss;
            e.test.accuracy = 0.5;
            f.write(QJsonDocument(e.toJson()).toJson(QJsonDocument::Compact) + '\n');
        }
    }
}

int lossPoints(MainWindow& w) {
    return w.charts()->lossChart()->pointCount(0);
}

void pressEnter(QWidget* w, Qt::KeyboardModifiers mods = Qt::NoModifier) {
    QTest::keyClick(w, Qt::Key_Return, mods);
}
} // namespace

class TestGuiStudio : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void enterSendsAndNeverCloses() {
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        QVERIFY(!model.isEmpty());
        TryDialog d(model, QStringLiteral("tiny"), true);
        quick(d);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        QPlainTextEdit* prompt = promptOf(d);
        QVERIFY(prompt);
        prompt->setFocus();
        // Shift+Enter: a new line in the message, nothing sent.
        QTest::keyClicks(prompt, QStringLiteral("hello"));
        pressEnter(prompt, Qt::ShiftModifier);
        QTest::keyClicks(prompt, QStringLiteral("there"));
        QCOMPARE(prompt->toPlainText(), QStringLiteral("hello\nthere"));
        QVERIFY(!d.generating());
        // Enter: sent, and the dialog stays open, idle and while it answers.
        QSignalSpy done(&d, &TryDialog::done);
        pressEnter(prompt);
        QVERIFY(d.generating());
        QVERIFY(d.isVisible());
        pressEnter(prompt);
        pressEnter(&d);
        QVERIFY(d.isVisible());
        QVERIFY(done.wait(120000));
        QCOMPARE(done.first().first().toString(), QString());
        QVERIFY(d.isVisible());
        // The message was sent and the field emptied for the next one.
        QCOMPARE(prompt->toPlainText(), QString());
        QCOMPARE(d.conversation().size(), 1);
        QCOMPARE(d.conversation().first().user, QStringLiteral("hello\nthere"));
        pressEnter(&d);
        QVERIFY(d.isVisible());
        // An empty message sends nothing.
        pressEnter(prompt);
        QVERIFY(!d.generating());
    }

    void aConversationHasTurnsAndRegenerates() {
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        TryDialog d(model, QStringLiteral("tiny"), true);
        quick(d);
        d.findChild<QLineEdit*>(QStringLiteral("trySystem"))
            ->setText(QStringLiteral("You are terse."));
        QSignalSpy done(&d, &TryDialog::done);
        for (const QString& message : {QStringLiteral("first"), QStringLiteral("second")}) {
            promptOf(d)->setPlainText(message);
            d.generate();
            QVERIFY(done.wait(120000));
            QCOMPARE(done.takeFirst().first().toString(), QString());
        }
        const QList<GenerateTurn> turns = d.conversation();
        QCOMPARE(turns.size(), 2);
        QCOMPARE(turns[0].user, QStringLiteral("first"));
        QCOMPARE(turns[1].user, QStringLiteral("second"));
        // Both turns are in the transcript.
        QVERIFY(d.text().contains(QStringLiteral("first")));
        QVERIFY(d.text().contains(QStringLiteral("second")));
        // Regenerate answers the last message again, in its place: still two turns.
        d.regenerate();
        QVERIFY(d.generating());
        QVERIFY(done.wait(120000));
        QCOMPARE(d.conversation().size(), 2);
        QCOMPARE(d.conversation()[1].user, QStringLiteral("second"));
        QCOMPARE(d.conversation()[1].assistant, turns[1].assistant); // greedy: the same
        // A new chat starts from nothing.
        d.findChild<QPushButton*>(QStringLiteral("tryNewChat"))->click();
        QVERIFY(d.conversation().isEmpty());
        QCOMPARE(d.text(), QString());
    }

    void stopEndsAnAnswerAndKeepsWhatCame() {
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        TryDialog d(model, QStringLiteral("tiny"), true);
        d.findChild<QSpinBox*>(QStringLiteral("tryLength"))->setValue(4000);
        d.findChild<QCheckBox*>(QStringLiteral("tryChat"))->setChecked(false);
        QSignalSpy done(&d, &TryDialog::done);
        promptOf(d)->setPlainText(QStringLiteral("ab"));
        d.generate();
        d.stop();
        QVERIFY(done.wait(120000));
        QVERIFY(!d.generating());
        QVERIFY(d.text().startsWith(QStringLiteral("ab")));
    }

    void theWholeConversationReachesTheTemplate() {
        // The system message and every earlier turn are written with the chat template before
        // the new message: a template that refuses with what it was given shows them all.
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        QFile config(dir.filePath(QStringLiteral("tiny/tokenizer_config.json")));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(
            QJsonDocument(QJsonObject{{QStringLiteral("eos_token"), QStringLiteral("</s>")},
                                      {QStringLiteral("chat_template"),
                                       QStringLiteral("{% set ns = namespace(r='') %}{% for m in "
                                                      "messages %}{% set ns.r = ns.r ~ m.role ~ "
                                                      "'=' ~ m.content ~ ';' %}{% endfor %}{{ "
                                                      "raise_exception(ns.r) }}")}})
                .toJson());
        config.close();
        GenerateOptions o;
        o.model = model;
        o.chat = true;
        o.system = QStringLiteral("S");
        o.history = {{QStringLiteral("a"), QStringLiteral("b")},
                     {QStringLiteral("c"), QStringLiteral("d")}};
        o.prompt = "e";
        const Status st = tandem::generate(o, [](const QByteArray&) { return true; });
        QVERIFY(!st);
        QVERIFY2(st.error().message.contains(
                     QStringLiteral("system=S;user=a;assistant=b;user=c;assistant=d;user=e;")),
                 qPrintable(st.error().message));
    }

    void samplingSettingsAreKept() {
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        const QString state = dir.filePath(QStringLiteral("ui-state.ini"));
        {
            TryDialog d(model, QStringLiteral("tiny"), true, nullptr, QString(), state);
            d.findChild<QDoubleSpinBox*>(QStringLiteral("tryTemperature"))->setValue(0.3);
            d.findChild<QDoubleSpinBox*>(QStringLiteral("tryTopP"))->setValue(0.5);
            d.findChild<QSpinBox*>(QStringLiteral("tryLength"))->setValue(77);
            d.findChild<QLineEdit*>(QStringLiteral("trySystem"))
                ->setText(QStringLiteral("Be kind."));
        }
        TryDialog again(model, QStringLiteral("tiny"), true, nullptr, QString(), state);
        QCOMPARE(again.findChild<QDoubleSpinBox*>(QStringLiteral("tryTemperature"))->value(), 0.3);
        QCOMPARE(again.findChild<QDoubleSpinBox*>(QStringLiteral("tryTopP"))->value(), 0.5);
        QCOMPARE(again.findChild<QSpinBox*>(QStringLiteral("tryLength"))->value(), 77);
        QCOMPARE(again.findChild<QLineEdit*>(QStringLiteral("trySystem"))->text(),
                 QStringLiteral("Be kind."));
    }

    void theBaseAnswersBesideTheTunedModel() {
        // A LoRA run has its base for free: the same prompt through both, side by side, each
        // with its own conversation.
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        TryDialog d(model, QStringLiteral("tiny"), true, nullptr, model);
        quick(d);
        QSignalSpy done(&d, &TryDialog::done);
        for (const QString& message : {QStringLiteral("one"), QStringLiteral("two")}) {
            promptOf(d)->setPlainText(message);
            d.generate();
            QVERIFY(done.wait(120000));
            QCOMPARE(done.takeFirst().first().toString(), QString());
        }
        QCOMPARE(d.referenceConversation().size(), 2);
        QCOMPARE(d.referenceText(), d.text()); // the same folder, greedy
        QVERIFY(d.text().contains(QStringLiteral("two")));
    }

    void pastRunsChartsReopen() {
        QTemporaryDir home;
        const QString runs = home.filePath(QStringLiteral("runs"));
        writeRun(runs + QStringLiteral("/older"), QStringLiteral("2026-01-01T10:00:00Z"), 30, 2.0,
                 0.001);
        writeRun(runs + QStringLiteral("/newer"), QStringLiteral("2026-01-02T10:00:00Z"), 20, 3.0,
                 0.01);
        {
            // At start, the newest run's curves: twenty steps and two epochs.
            MainWindow w(loopbackContext(home.path(), freeUdpPort()));
            QCOMPARE(w.history()->rowCount(), 2);
            QCOMPARE(lossPoints(w), 20);
            QCOMPARE(w.charts()->accuracyChart()->pointCount(0), 2);
            // Choosing the older run in History shows its thirty steps.
            auto* view = w.findChild<QTableView*>(QStringLiteral("historyView"));
            view->selectRow(1);
            QCOMPARE(lossPoints(w), 30);
            QCOMPARE(w.charts()->accuracyChart()->pointCount(0), 3);
            view->selectRow(0);
            QCOMPARE(lossPoints(w), 20);
        }
        // A resumed run's repeated steps are charted once, as last written.
        QFile more(runs + QStringLiteral("/newer/metrics.jsonl"));
        QVERIFY(more.open(QIODevice::Append));
        StepMetrics again;
        again.step = 15;
        again.loss = 0.1;
        more.write(QJsonDocument(again.toJson()).toJson(QJsonDocument::Compact) + '\n');
        more.close();
        auto curves = RunHistory::curves(runs + QStringLiteral("/newer"));
        QVERIFY(curves);
        QCOMPARE(curves->steps.size(), 15);
        QCOMPARE(curves->steps.last().loss, 0.1);
        QCOMPARE(curves->epochEnds.size(), 2);
        QVERIFY(!RunHistory::curves(home.filePath(QStringLiteral("none"))));
    }

    void theFormAndWindowAreKeptAcrossRestarts() {
        QTemporaryDir home;
        const quint16 port = freeUdpPort();
        RunConfig chosen;
        {
            MainWindow w(loopbackContext(home.path(), port));
            QCOMPARE(w.runForm()->config().model, QStringLiteral("mnist-cnn")); // the demo
            RunConfig c = w.runForm()->config();
            c.model = QStringLiteral("mlp");
            c.lr = 0.0042;
            c.epochs = 7;
            w.runForm()->setConfig(c);
            chosen = w.runForm()->config();
            w.resize(1010, 690);
            w.close();
        }
        MainWindow again(loopbackContext(home.path(), port));
        const RunConfig kept = again.runForm()->config();
        QCOMPARE(kept.model, chosen.model);
        QCOMPARE(kept.lr, 0.0042);
        QCOMPARE(kept.epochs, 7);
        QCOMPARE(again.size(), QSize(1010, 690));
    }

    void aNewRunLikeAnEarlierOne() {
        QTemporaryDir home;
        writeRun(home.filePath(QStringLiteral("runs/past")), QStringLiteral("2026-01-01T10:00:00Z"),
                 10, 2.0, 0.0123);
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        auto* view = w.findChild<QTableView*>(QStringLiteral("historyView"));
        view->selectRow(0);
        auto* like = w.findChild<QPushButton*>(QStringLiteral("likeThisButton"));
        QVERIFY(like->isEnabled());
        like->click();
        const RunConfig c = w.runForm()->config();
        QCOMPARE(c.model, QStringLiteral("mlp"));
        QCOMPARE(c.lr, 0.0123);
        QCOMPARE(c.batch, int64_t(48));
        QVERIFY(c.outDir.isEmpty());
    }
};

QTEST_MAIN(TestGuiStudio)
#include "test_gui_studio.moc"
