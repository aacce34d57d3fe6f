// The app as a fine-tuning studio: the playground that answers like a chat, and what the
// window keeps across restarts. Widgets on the offscreen platform, with a tiny Hugging Face
// folder (tests/hffolder.h) as the model.

#include "common/clocktext.h"
#include "engine/runhistory.h"
#include "fakehub.h"
#include "formats/datapreview.h"
#include "guitest.h"
#include "hffolder.h"
#include "model/modelsource.h"
#include "ui/chartpanel.h"
#include "ui/comparedialog.h"
#include "ui/datapreviewdialog.h"
#include "ui/historymodel.h"
#include "ui/hubdialog.h"
#include "ui/language.h"
#include "ui/livechart.h"
#include "ui/peermodel.h"
#include "ui/runform.h"
#include "ui/trydialog.h"

#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QDesktopServices>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFontMetrics>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QScreen>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <QValueAxis>

using namespace tandem;
using namespace tandem::ui;

namespace {
// Stands in for the system's file manager.
class UrlCatcher : public QObject {
    Q_OBJECT
public:
    explicit UrlCatcher(QUrl* into)
        : m_into(into) {}
public Q_SLOTS:
    void open(const QUrl& url) { *m_into = url; }

private:
    QUrl* m_into;
};

bool testWrite(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

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

// A text file the tiny model's tokenizer reads (its characters only).
QString writeStory(const QTemporaryDir& dir) {
    const QString text = dir.filePath(QStringLiteral("story.txt"));
    QFile f(text);
    if (!f.open(QIODevice::WriteOnly))
        return QString();
    for (int i = 0; i < 300; ++i)
        f.write("the quick brown fox jumps over the lazy dog. ");
    return text;
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
        const QString status = d.findChild<QLabel*>(QStringLiteral("tryStatus"))->text();
        QVERIFY2(status.startsWith(QStringLiteral("Stopped: ")), qPrintable(status));
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
        QSize size;
        {
            MainWindow w(loopbackContext(home.path(), port));
            QCOMPARE(w.runForm()->config().model, QStringLiteral("mnist-cnn")); // the demo
            RunConfig c = w.runForm()->config();
            c.model = QStringLiteral("mlp");
            c.lr = 0.0042;
            c.epochs = 7;
            w.runForm()->setConfig(c);
            chosen = w.runForm()->config();
            // A size inside the screen: Qt 6.5 and later shrink a restored window to fit it.
            const QSize room = w.screen()->availableGeometry().size();
            w.resize(room.width() * 3 / 4, room.height() * 3 / 4);
            size = w.size();
            w.close();
        }
        MainWindow again(loopbackContext(home.path(), port));
        const RunConfig kept = again.runForm()->config();
        QCOMPARE(kept.model, chosen.model);
        QCOMPARE(kept.lr, 0.0042);
        QCOMPARE(kept.epochs, 7);
        QVERIFY(size != QSize(1280, 800)); // the first start's size
        QCOMPARE(again.size(), size);
        // A form that invites another machine is kept too: the workers to wait for and the
        // address are the run's, not the form's (one kept with them but without the address,
        // as the form wrote it before, reads as its machines).
        QJsonObject kept2 = again.runForm()->description();
        QVERIFY(!kept2.contains(QStringLiteral("workers")) ||
                kept2.value(QStringLiteral("workers")).toInt() == 0);
        kept2.insert(QStringLiteral("invites"), QJsonArray{QStringLiteral("peer:abc")});
        kept2.insert(QStringLiteral("workers"), 1);
        QVERIFY(!RunConfig::fromJson(kept2).ok());
        auto read = RunForm::fromDescription(kept2);
        QVERIFY2(read.ok(), qPrintable(read.ok() ? QString() : read.error().message));
        QCOMPARE(read->invites, QStringList{QStringLiteral("peer:abc")});
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

    void aContextPastTheModelsPositionsIsRefused() {
        // The tiny model reads 64 positions (max_position_embeddings). The check says so, both
        // for a context a little past them and for one no text would fill (where the data used
        // to be blamed), in words for the form, and a context that fits passes.
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        const QString text = writeStory(dir);
        QTemporaryDir home;
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        RunForm* form = w.runForm();
        QSignalSpy checked(form, &RunForm::checked);
        for (int context : {128, 60000, 64}) {
            RunConfig c = form->config();
            c.model = model;
            c.data = QStringLiteral("text:%1,context=%2").arg(text).arg(context);
            c.batch = 4;
            form->setConfig(c);
            form->check();
            QVERIFY(checked.wait(120000));
            const QList<QVariant> result = checked.takeFirst();
            const QString message = result.at(1).toString();
            if (context == 64) {
                QVERIFY2(result.at(0).toBool(), qPrintable(message));
                continue;
            }
            QVERIFY2(!result.at(0).toBool(), qPrintable(message));
            const QString expected = QStringLiteral(
                "a context of %1 tokens is longer than the 64 positions %2 reads at once "
                "(max_position_embeddings in its config.json); choose a context of 64 or less");
            QVERIFY2(
                message.contains(expected.arg(countText(context), ModelSource::parse(model).path)),
                qPrintable(message));
            QCOMPARE(result.at(2).value<Error>().subject, ErrorSubject::Dataset);
            QVERIFY2(!message.contains(QStringLiteral("context=")), qPrintable(message));
        }
    }

    void theCheckGoesStaleWhenTheSizesChange() {
        // A check's result (and a batch it set for a run of too few steps) is of the sizes it
        // saw: changing the batch, the epochs or the training samples clears it. A passed check
        // puts no note between the fields, which would move them under the pointer.
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        const QString text = writeStory(dir);
        QTemporaryDir home;
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        RunForm* form = w.runForm();
        RunConfig c = form->config();
        c.model = model;
        c.data = QStringLiteral("text:%1,context=32").arg(text);
        c.batch = 4;
        form->setConfig(c);
        QSignalSpy checked(form, &RunForm::checked);
        auto* label = form->findChild<QLabel*>(QStringLiteral("checkLabel"));
        for (const char* spin : {"batchSpin", "epochsSpin", "limitTrainSpin"}) {
            form->check();
            QVERIFY(checked.wait(120000));
            QCOMPARE(form->checkState(), RunForm::Check::Ok);
            QVERIFY(label->text().startsWith(QStringLiteral("✔ ")));
            for (const char* note : {"modelCheckNote", "dataCheckNote"})
                QVERIFY2(!form->findChild<QLabel*>(QLatin1String(note))->isVisibleTo(form), note);
            auto* box = form->findChild<QSpinBox*>(QLatin1String(spin));
            QVERIFY2(box, spin);
            box->setValue(box->value() + 1);
            QCOMPARE(form->checkState(), RunForm::Check::NotChecked);
            QVERIFY2(label->text().isEmpty(), spin);
        }
    }

    void theCheckNamesEachNumber() {
        // A tokenizer with fewer ids than the model's output rows (Llama 3's 128,010 and 128,256):
        // the check says which is which, and counts have their thousands grouped.
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("wide"));
        hffolder::Spec spec;
        spec.vocab = 1200;
        QVERIFY(hffolder::write(folder, spec));
        QVERIFY(hffolder::writeTokenizer(folder));
        RunConfig c;
        c.model = ModelSource::hfFolder(folder).text();
        c.data = QStringLiteral("text:%1,context=32").arg(writeStory(dir));
        c.lora = QStringLiteral("r=4");
        auto check = checkRunInputs(c);
        QVERIFY2(check, qPrintable(check ? QString() : check.error().message));
        QVERIFY2(check->summary.contains(QStringLiteral(
                     "token ids below 64 (the tokenizer's; the model's output has 1,200 rows)")),
                 qPrintable(check->summary));
        QVERIFY2(QRegularExpression(QStringLiteral("\\(\\d{1,3}(,\\d{3})+ frozen\\)"))
                     .match(check->summary)
                     .hasMatch(),
                 qPrintable(check->summary));
    }

    void historySaysWhereARunIsAndExportsOpenWhereTheLastWent() {
        QTemporaryDir home;
        const QString run = home.filePath(QStringLiteral("runs/past"));
        writeRun(run, QStringLiteral("2026-01-01T10:00:00Z"), 10, 2.0, 0.01);
        const quint16 port = freeUdpPort();
        const QString away = home.filePath(QStringLiteral("exports"));
        QVERIFY(QDir().mkpath(away));
        {
            MainWindow w(loopbackContext(home.path(), port));
            auto* view = w.findChild<QTableView*>(QStringLiteral("historyView"));
            auto* where = w.findChild<QLabel*>(QStringLiteral("historyFolder"));
            QVERIFY(where->text().isEmpty());
            view->selectRow(0);
            QCOMPARE(where->text(),
                     QStringLiteral("Folder: %1").arg(QDir::toNativeSeparators(run)));
            // Open folder hands the folder to the system's file manager.
            QUrl opened;
            UrlCatcher catcher(&opened);
            QDesktopServices::setUrlHandler(QStringLiteral("file"), &catcher, "open");
            w.findChild<QPushButton*>(QStringLiteral("openFolderButton"))->click();
            QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
            QCOMPARE(opened, QUrl::fromLocalFile(run));
            // The export dialogs open in the home folder until an export goes elsewhere.
            QCOMPARE(w.exportFolder(), QDir::homePath());
            QSignalSpy exported(&w, &MainWindow::exportFinished);
            w.exportRun(0, ExportFormat::TorchScript, away + QStringLiteral("/model.pt"));
            QCOMPARE(exported.size(), 1); // this run has no checkpoint: refused at once
            QCOMPARE(exported.first().first().toBool(), false);
            QCOMPARE(w.exportFolder(), away);
        }
        MainWindow again(loopbackContext(home.path(), port));
        QCOMPARE(again.exportFolder(), away);
    }

    void aFailedStartLeavesNothingOfTheLastRun() {
        QTemporaryDir home;
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        w.show();
        auto* bar = w.findChild<QProgressBar*>();
        auto* status = w.findChild<QLabel*>(QStringLiteral("progressText"));
        bar->setValue(1000); // where the last run left it
        status->setText(QStringLiteral("Finished"));
        RunConfig c = w.runForm()->config();
        c.data = QStringLiteral("mnist:") + home.filePath(QStringLiteral("nowhere"));
        w.runForm()->setConfig(c);
        w.startRun();
        QTRY_VERIFY_WITH_TIMEOUT(!w.bannerText().isEmpty(), 60000);
        QCOMPARE(bar->value(), 0);
        QCOMPARE(status->text(), QStringLiteral("Not started."));
    }

    void theClusterCountsTokensForALanguageModel() {
        // The speed column in the unit of the charts: tokens where a sample is a window of them.
        PeerModel peers;
        peers.setSelf(QStringLiteral("macbook"), {});
        const QList<WorkerStepStats> step{{QStringLiteral("local"), 4, 90, 0}};
        peers.setRunStats(step, 100);
        QCOMPARE(peers.headerData(PeerModel::Speed, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Samples/s"));
        QCOMPARE(peers.index(0, PeerModel::Speed).data().toString(),
                 QLocale().toString(40.0, 'f', 0));
        QSignalSpy header(&peers, &QAbstractItemModel::headerDataChanged);
        peers.setRunStats(step, 100, 128);
        QCOMPARE(header.size(), 1);
        QCOMPARE(peers.headerData(PeerModel::Speed, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Tokens/s"));
        QCOMPARE(peers.index(0, PeerModel::Speed).data().toString(),
                 QLocale().toString(5120.0, 'f', 0));
        peers.setRunStats({}, 0); // the run ended
        QCOMPARE(peers.headerData(PeerModel::Speed, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Samples/s"));
    }

    void theAdaptedLayersAreShownAndChosen() {
        // The folder's family offers its linear layers, the default ones checked; a choice that
        // differs goes into the adapters' spec as targets=, and a loaded one comes back.
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        QTemporaryDir home;
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        RunForm* form = w.runForm();
        RunConfig c = form->config();
        c.model = model;
        c.lora = QStringLiteral("r=4");
        form->setConfig(c);
        auto* row = form->findChild<QWidget*>(QStringLiteral("loraTargets"));
        QVERIFY(row->isVisibleTo(form));
        QStringList shown, checked;
        for (QCheckBox* b : row->findChildren<QCheckBox*>()) {
            shown << b->text();
            if (b->isChecked())
                checked << b->text();
        }
        QCOMPARE(shown, QStringLiteral("q_proj k_proj v_proj o_proj gate_proj up_proj down_proj")
                            .split(QLatin1Char(' ')));
        QCOMPARE(checked, QStringLiteral("q_proj k_proj v_proj o_proj").split(QLatin1Char(' ')));
        QCOMPARE(form->config().lora, QStringLiteral("r=4")); // the defaults: nothing to add
        row->findChild<QCheckBox*>(QStringLiteral("target_k_proj"))->setChecked(false);
        row->findChild<QCheckBox*>(QStringLiteral("target_down_proj"))->setChecked(true);
        QCOMPARE(form->config().lora, QStringLiteral("r=4,targets=q_proj,v_proj,o_proj,down_proj"));
        // As a description saves and loads it, with a 4-bit base before the targets.
        c.lora = QStringLiteral("base=nf4,r=4,targets=q_proj,up_proj");
        form->setConfig(c);
        QCOMPARE(form->config().lora, c.lora);
        QVERIFY(row->findChild<QCheckBox*>(QStringLiteral("target_up_proj"))->isChecked());
        QVERIFY(!row->findChild<QCheckBox*>(QStringLiteral("target_k_proj"))->isChecked());
        // The last one checked stays: adapters go somewhere.
        row->findChild<QCheckBox*>(QStringLiteral("target_q_proj"))->setChecked(false);
        row->findChild<QCheckBox*>(QStringLiteral("target_up_proj"))->setChecked(false);
        QVERIFY(row->findChild<QCheckBox*>(QStringLiteral("target_up_proj"))->isChecked());
        // Without adapters, every weight trains: no layers to choose.
        c.lora.clear();
        form->setConfig(c);
        QVERIFY(!row->isVisibleTo(form));
        QVERIFY(form->config().lora.isEmpty());
    }

    void runsHaveNamesNotesAndSettings() {
        QTemporaryDir home;
        const QString run = home.filePath(QStringLiteral("runs/past"));
        writeRun(run, QStringLiteral("2026-01-01T10:00:00Z"), 10, 2.0, 0.0005);
        QJsonObject record = RunHistory::read(run);
        record.insert(QStringLiteral("ended"), QStringLiteral("2026-01-01T10:03:05Z"));
        RunHistory::write(run, record);
        const quint16 port = freeUdpPort();
        {
            MainWindow w(loopbackContext(home.path(), port));
            HistoryModel* h = w.history();
            // Until named, a run is its folder; its settings and how long it took are shown.
            QCOMPARE(h->index(0, HistoryModel::Name).data().toString(), QStringLiteral("past"));
            const QString settings = h->index(0, HistoryModel::Settings).data().toString();
            for (const char* says : {"lr 0.0005", "1 epoch", "batch 48", "1 machine"})
                QVERIFY2(settings.contains(QLatin1String(says)), qPrintable(settings));
            QCOMPARE(h->index(0, HistoryModel::Duration).data().toString(), QStringLiteral("3:05"));
            // Named in place, with notes beside it.
            QVERIFY(h->flags(h->index(0, HistoryModel::Name)) & Qt::ItemIsEditable);
            QVERIFY(h->setData(h->index(0, HistoryModel::Name), QStringLiteral("baseline"),
                               Qt::EditRole));
            QVERIFY(
                h->setData(h->index(0, 0), QStringLiteral("lr too low?"), HistoryModel::NotesRole));
            QCOMPARE(h->index(0, HistoryModel::Name).data().toString(), QStringLiteral("baseline"));
            QVERIFY(h->index(0, HistoryModel::Status)
                        .data(Qt::ToolTipRole)
                        .toString()
                        .startsWith(QStringLiteral("lr too low?")));
        }
        // Kept in the run's record: across a restart, and when the run resumes.
        RunConfig again =
            RunConfig::fromJson(RunHistory::read(run).value(QStringLiteral("config")).toObject())
                .value();
        RunHistory::started(again);
        MainWindow w(loopbackContext(home.path(), port));
        QCOMPARE(w.history()->index(0, HistoryModel::Name).data().toString(),
                 QStringLiteral("baseline"));
        QCOMPARE(w.history()->index(0, 0).data(HistoryModel::NotesRole).toString(),
                 QStringLiteral("lr too low?"));
    }

    void twoRunsCompare() {
        QTemporaryDir home;
        const QString runs = home.filePath(QStringLiteral("runs"));
        writeRun(runs + QStringLiteral("/a"), QStringLiteral("2026-01-01T10:00:00Z"), 30, 2.0,
                 0.001);
        writeRun(runs + QStringLiteral("/b"), QStringLiteral("2026-01-02T10:00:00Z"), 20, 3.0,
                 0.01);
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        auto* view = w.findChild<QTableView*>(QStringLiteral("historyView"));
        auto* compare = w.findChild<QPushButton*>(QStringLiteral("compareButton"));
        view->selectRow(0);
        QVERIFY(!compare->isEnabled()); // one run: nothing to compare with
        view->selectionModel()->select(view->model()->index(1, 0),
                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QVERIFY(compare->isEnabled());
        CompareDialog* d = w.compareRuns({0, 1});
        // Shown at the size of the screenshots, each value axis has room for its labels: QtCharts
        // writes "…" for a label taller than the space between two ticks.
        d->resize(1000, 720);
        d->show();
        QVERIFY(QTest::qWaitForWindowExposed(d));
        const auto views = d->findChildren<QChartView*>();
        QCOMPARE(views.size(), 3);
        auto roomy = [&] {
            for (QChartView* v : views)
                for (QAbstractAxis* a : v->chart()->axes(Qt::Vertical)) {
                    const auto* axis = qobject_cast<QValueAxis*>(a);
                    const double gap = v->chart()->plotArea().height() / (axis->tickCount() - 1);
                    if (gap < 1.5 * QFontMetrics(axis->labelsFont()).height())
                        return false;
                }
            return true;
        };
        QVERIFY(QTest::qWaitFor(roomy, 5000));
        // One curve per run on each chart: b (newest, row 0) has 20 steps and 2 epochs, a 30 and 3.
        QCOMPARE(d->lossChart()->seriesCount(), 2);
        QCOMPARE(d->lossChart()->pointCount(0), 20);
        QCOMPARE(d->lossChart()->pointCount(1), 30);
        QCOMPARE(d->figureChart()->pointCount(0), 2);
        QCOMPARE(d->figureChart()->pointCount(1), 3);
        QCOMPARE(d->speedChart()->yTitle(), QStringLiteral("Samples/s"));
        // The settings side by side, the rows where they differ in bold.
        QTableWidget* t = d->table();
        QCOMPARE(t->columnCount(), 2);
        auto rowOf = [t](const QString& label) {
            for (int r = 0; r < t->rowCount(); ++r)
                if (t->verticalHeaderItem(r)->text() == label)
                    return r;
            return -1;
        };
        const int lr = rowOf(QStringLiteral("Learning rate"));
        const int model = rowOf(QStringLiteral("Model"));
        QVERIFY(lr >= 0 && model >= 0);
        QCOMPARE(t->item(lr, 0)->text(), QLocale().toString(0.01, 'g', 4));
        QCOMPARE(t->item(lr, 1)->text(), QLocale().toString(0.001, 'g', 4));
        QVERIFY(t->item(lr, 0)->font().bold());
        QVERIFY(!t->item(model, 0)->font().bold());
        delete d;
    }

    void theDataIsSeenBeforeItTrains() {
        // Three conversations that read, one longer than the context, a line that is not JSON
        // and one with a role no template knows: each readable one counted and measured, the
        // first written as the model reads it with the assistant's tokens apart, and the two
        // bad lines named with why, where a run would stop at the first.
        QTemporaryDir dir;
        const QString model = tinyModel(dir);
        const QString chat = dir.filePath(QStringLiteral("chat.jsonl"));
        QFile f(chat);
        QVERIFY(f.open(QIODevice::WriteOnly));
        auto conversation = [](const QString& user, const QString& answer) {
            return QJsonDocument(
                       QJsonObject{
                           {QStringLiteral("messages"),
                            QJsonArray{
                                QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                            {QStringLiteral("content"), user}},
                                QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                            {QStringLiteral("content"), answer}}}}})
                       .toJson(QJsonDocument::Compact) +
                   '\n';
        };
        f.write(conversation(QStringLiteral("hi"), QStringLiteral("hello there")));
        f.write("not json\n");
        f.write(conversation(QStringLiteral("how are you"), QStringLiteral("fine")));
        f.write(R"({"messages": [{"role": "robot", "content": "beep"}]})"
                "\n");
        f.write(conversation(QStringLiteral("a long one"), QString(80, QLatin1Char('a'))));
        f.write(conversation(QStringLiteral("bye"), QStringLiteral("bye now")));
        f.close();
        auto p = previewData(QStringLiteral("chat:%1,context=48").arg(chat),
                             ModelSource::parse(model).path);
        QVERIFY2(p, qPrintable(p ? QString() : p.error().message));
        QCOMPARE(int(p->lengths.size()), 4);
        QCOMPARE(p->longer, int64_t(1));
        QCOMPARE(p->refused.size(), 2);
        QVERIFY2(p->refused[0].startsWith(chat + QStringLiteral(", line 2: is not a JSON object")),
                 qPrintable(p->refused[0]));
        QVERIFY2(p->refused[1].startsWith(chat + QStringLiteral(", line 4: ")) &&
                     p->refused[1].contains(QStringLiteral("robot")),
                 qPrintable(p->refused[1]));
        // The template writes "user: hi\nassistant: hello there\n"; the answer after the
        // generation prompt ("assistant:") is what trains.
        const DataPreview::Document& first = p->first.first();
        QCOMPARE(first.line, qsizetype(1));
        QString trained, all;
        for (const auto& [text, on] : first.pieces) {
            all += text;
            if (on)
                trained += text;
        }
        QCOMPARE(all, QStringLiteral("user: hi\nassistant: hello there\n"));
        QCOMPARE(trained, QStringLiteral(" hello there\n"));
        QCOMPARE(first.tokens, int64_t(all.size())); // one character a token here
        QVERIFY(p->windows > 0);

        // In the form: Preview for chat data with a model folder, showing the same.
        QTemporaryDir home;
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        RunForm* form = w.runForm();
        RunConfig c = form->config();
        c.model = model;
        c.data = QStringLiteral("chat:%1,context=48").arg(chat);
        form->setConfig(c);
        QVERIFY(form->findChild<QPushButton*>(QStringLiteral("previewButton"))->isEnabled());
        DataPreviewDialog* d = form->previewData();
        QSignalSpy ready(d, &DataPreviewDialog::ready);
        QVERIFY(ready.wait(60000));
        QCOMPARE(ready.first().first().toBool(), true);
        QVERIFY2(d->summary().startsWith(QStringLiteral("4 conversation")),
                 qPrintable(d->summary()));
        QVERIFY2(d->summary().contains(QStringLiteral("1 longer than the context of 48 tokens")),
                 qPrintable(d->summary()));
        QVERIFY(d->documentsHtml().contains(QStringLiteral("hello there")));
        QCOMPARE(d->refusedLines(), p->refused);
        QCOMPARE(d->histogram()->pointCount(1), 2); // the context's line
        QVERIFY(d->histogram()->pointCount(0) >= 2);
        d->close();
        // Not for data a preview does not read.
        c.data = QStringLiteral("fashion-mnist");
        form->setConfig(c);
        QVERIFY(!form->findChild<QPushButton*>(QStringLiteral("previewButton"))->isEnabled());
    }

    // From the Hub…: a search, a download with its progress, a gated model refused until a
    // token is saved, and the downloaded folder put in the form (against tests/fakehub.h).
    void aModelComesFromTheHub() {
        // In Arabic: right to left, where QTableView::selectRow() on a table not laid out yet
        // selects nothing (the dialog chose its download that way, and found nothing chosen).
        const QLocale before;
        tandem::ui::applyLanguage(*qApp, QStringLiteral("ar"));
        const auto back = qScopeGuard([before] {
            tandem::ui::applyLanguage(*qApp, QStringLiteral("en"));
            QLocale::setDefault(before);
        });
        QTemporaryDir home, hf;
        FakeHub server;
        QMap<QString, FakeHub::File> files{
            {QStringLiteral("config.json"), {"{\"model_type\": \"llama\"}", false}},
            {QStringLiteral("model.safetensors"), {QByteArray(200000, 'w'), true}}};
        server.addRepo(QStringLiteral("tiny/open-llama"), files, false, 100);
        server.addRepo(QStringLiteral("tiny/gated-llama"), files, true, 50);
        qputenv("HF_ENDPOINT", server.endpoint().toString().toUtf8());
        qputenv("HF_HOME", hf.path().toUtf8());
        qunsetenv("HF_HUB_CACHE");
        qunsetenv("HF_TOKEN");
        const QByteArray bus = qgetenv("DBUS_SESSION_BUS_ADDRESS");
        qunsetenv("DBUS_SESSION_BUS_ADDRESS"); // no keychain: the token file
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        RunForm* form = w.runForm();
        auto* hubButton = form->findChild<QPushButton*>(QStringLiteral("modelHubButton"));
        QVERIFY(!hubButton->isEnabled()); // the demo model is not a Hugging Face folder
        HubDialog* d = form->getFromHub();
        auto* results = d->findChild<QTableWidget*>(QStringLiteral("hubResults"));
        auto* status = d->findChild<QLabel*>(QStringLiteral("hubStatus"));
        auto* download = d->findChild<QPushButton*>(QStringLiteral("hubDownload"));
        auto* use = d->findChild<QPushButton*>(QStringLiteral("hubUse"));
        QVERIFY(!download->isEnabled());
        QVERIFY(!use->isEnabled());
        QSignalSpy shown(d, &HubDialog::searchShown);
        d->findChild<QLineEdit*>(QStringLiteral("hubQuery"))->setText(QStringLiteral("llama"));
        d->findChild<QPushButton*>(QStringLiteral("hubSearch"))->click();
        QVERIFY(shown.wait(30000));
        QCOMPARE(results->rowCount(), 2);
        QCOMPARE(results->item(0, 0)->text(), QStringLiteral("tiny/open-llama"));
        // the gated one, without a token
        QSignalSpy ended(d, &HubDialog::downloadEnded);
        results->setCurrentCell(1, 0);
        download->click();
        QVERIFY(ended.wait(30000));
        QCOMPARE(ended.last().first().toBool(), false);
        QVERIFY2(status->text().contains(QStringLiteral("gated")), qPrintable(status->text()));
        d->findChild<QLineEdit*>(QStringLiteral("hubToken"))->setText(server.token);
        d->findChild<QPushButton*>(QStringLiteral("hubSaveToken"))->click();
        QVERIFY(d->findChild<QLabel*>(QStringLiteral("hubTokenState"))
                    ->text()
                    .contains(QDir::toNativeSeparators(hf.filePath(QStringLiteral("token")))));
        download->click();
        QVERIFY(ended.wait(30000));
        QVERIFY2(ended.last().first().toBool(), qPrintable(status->text()));
        QVERIFY(d->findChild<QProgressBar*>(QStringLiteral("hubProgress"))->value() == 1000);
        QVERIFY(!server.tokenWentToStore);
        // the download is chosen below, and goes to the form
        auto* local = d->findChild<QTableWidget*>(QStringLiteral("hubLocal"));
        QCOMPARE(local->rowCount(), 1);
        QVERIFY(use->isEnabled());
        const QString folder = local->item(local->currentRow(), 2)->data(Qt::UserRole).toString();
        QVERIFY(QFile::exists(folder + QStringLiteral("/config.json")));
        use->click();
        QCOMPARE(form->config().model, QStringLiteral("hf:") + folder);
        QVERIFY(hubButton->isEnabled());
        qunsetenv("HF_ENDPOINT");
        qunsetenv("HF_HOME");
        if (!bus.isEmpty())
            qputenv("DBUS_SESSION_BUS_ADDRESS", bus);
    }

    void anExportGoesToOllamaWhereItIsInstalled() {
        // A stand-in `ollama` on PATH records how it was called; another fails; with none on
        // PATH the app says how to add the file by hand.
        QTemporaryDir dir;
        const QString gguf = dir.filePath(QStringLiteral("support-Q8_0.gguf"));
        QVERIFY(testWrite(gguf, "GGUF"));
        QVERIFY(testWrite(dir.filePath(QStringLiteral("support-Q8_0.Modelfile")),
                          "FROM ./support-Q8_0.gguf\n"));
        const QString bin = dir.filePath(QStringLiteral("bin"));
        QVERIFY(QDir().mkpath(bin));
        const QString calls = dir.filePath(QStringLiteral("calls.txt"));
        const QByteArray path = qgetenv("PATH");
        auto fakeOllama = [&](const QByteArray& body) {
            const QString exe = bin + QStringLiteral("/ollama");
            QFile::remove(exe);
            QVERIFY(testWrite(exe, "#!/bin/sh\n" + body));
            QFile::setPermissions(exe, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        };
        QTemporaryDir home;
        MainWindow w(loopbackContext(home.path(), freeUdpPort()));
        w.show();
        QSignalSpy done(&w, &MainWindow::ollamaFinished);
        qputenv("PATH", bin.toUtf8() + ':' + path);
        fakeOllama("echo \"$@\" > '" + calls.toUtf8() + "'; pwd >> '" + calls.toUtf8() +
                   "'; echo success\n");
        w.handOnGguf(gguf);
        QVERIFY(done.wait(30000));
        QCOMPARE(done.takeFirst().at(0).toBool(), true);
        QFile c(calls);
        QVERIFY(c.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(c.readAll()).trimmed(),
                 QStringLiteral("create support-q8_0 -f %1\n%2")
                     .arg(dir.filePath(QStringLiteral("support-Q8_0.Modelfile")), dir.path()));
        QVERIFY2(w.bannerText().contains(QStringLiteral("ollama run support-q8_0")),
                 qPrintable(w.bannerText()));
        fakeOllama("echo 'Error: unsupported architecture' >&2; exit 1\n");
        w.handOnGguf(gguf);
        QVERIFY(done.wait(30000));
        QCOMPARE(done.takeFirst().at(0).toBool(), false);
        QVERIFY2(w.bannerText().contains(QStringLiteral("unsupported architecture")) &&
                     w.bannerText().contains(QStringLiteral("By hand: ollama create")),
                 qPrintable(w.bannerText()));
        QFile::remove(bin + QStringLiteral("/ollama"));
        qputenv("PATH", bin.toUtf8());
        QSignalSpy exported(&w, &MainWindow::exportFinished);
        w.handOnGguf(gguf);
        qputenv("PATH", path);
        QCOMPARE(exported.size(), 1);
        QVERIFY2(w.bannerText().contains(QStringLiteral("Ollama is not installed")),
                 qPrintable(w.bannerText()));
        QVERIFY(done.isEmpty());
    }
};

QTEST_MAIN(TestGuiStudio)
#include "test_gui_studio.moc"
