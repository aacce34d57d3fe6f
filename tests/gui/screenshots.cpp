// Drives the app as a new user would, on one display, and saves what it shows: the setup
// wizard of one window pairing with a second window (two machines on loopback), the answering
// machine's last wizard page, a short run shared by both, the lending machine's view of it,
// its history and an export, a sweep, a language model's fine-tune with Try it…, and a model
// got from the Hugging Face Hub.
// docs/screenshots/make.sh runs it under Xvfb.

#include "chatdata.h"
#include "engine/trainingrun.h"
#include "fakehub.h"
#include "guitest.h"
#include "hffolder.h"
#include "testpaths.h"
#include "testutil.h"
#include "ui/chartpanel.h"
#include "ui/comparedialog.h"
#include "ui/datapreviewdialog.h"
#include "ui/historymodel.h"
#include "ui/hubdialog.h"
#include "ui/language.h"
#include "ui/livechart.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/runform.h"
#include "ui/setupwizard.h"
#include "ui/sweeptab.h"
#include "ui/tables.h"
#include "ui/trydialog.h"

#include <QAbstractButton>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>

using namespace tandem;
using namespace tandem::ui;

namespace {
bool waitFor(const std::function<bool()>& done, int ms, const char* what) {
    if (QTest::qWaitFor(done, ms))
        return true;
    std::fprintf(stderr, "screenshots: gave up waiting for %s\n", what);
    return false;
}

// A language model's fine-tune on both machines: a tiny Llama with Llama 3's published
// tokenizer, on chat data; the dashboard while it trains, then Try it… on the result.
bool languageModelShots(MainWindow& w, const std::function<void(QWidget*, const char*)>& shot,
                        const QString& scratch) {
    const QString published = testpaths::npmDir() + QStringLiteral("/tokenizers/llama3");
    if (!QFile::exists(published + QStringLiteral("/tokenizer.json"))) {
        std::fprintf(stderr,
                     "screenshots: no language-model shots without %s (the README's test "
                     "command fetches it)\n",
                     qPrintable(published));
        return true;
    }
    hffolder::Spec spec;
    spec.vocab = 128256;
    const QString folder = QDir(scratch).filePath(QStringLiteral("tiny-llama3"));
    const QString chat = QDir(scratch).filePath(QStringLiteral("chat.jsonl"));
    if (!hffolder::write(folder, spec) || !testutil::writeFile(chat, chatdata::chatLines(400, 5)))
        return false;
    for (const QString& f :
         {QStringLiteral("tokenizer.json"), QStringLiteral("tokenizer_config.json")})
        if (!QFile::copy(published + QLatin1Char('/') + f, folder + QLatin1Char('/') + f))
            return false;
    RunConfig c = w.runForm()->config();
    c.model = QStringLiteral("hf:") + folder;
    c.data = QStringLiteral("chat:%1,context=32").arg(chat);
    c.limitTrain = c.limitTest = 0;
    c.batch = 16;
    c.epochs = 2;
    c.lr = 0.003;
    c.lora = QStringLiteral("r=8");
    c.mode = TrainMode::Sync;
    w.runForm()->setConfig(c);
    // The data as the model will read it, before the run.
    DataPreviewDialog* preview = w.runForm()->previewData();
    QSignalSpy previewed(preview, &DataPreviewDialog::ready);
    if (!waitFor([&] { return previewed.size() > 0; }, 120000, "the data's preview"))
        return false;
    QTest::qWait(300);
    shot(preview, "13-data-preview");
    preview->close();
    if (!waitFor([&] { return w.runForm()->config().invites.size() == 1; }, 20000,
                 "the paired machine in New run"))
        return false;
    w.startRun();
    if (!waitFor([&] { return w.run()->active(); }, 120000, "the language model's run"))
        return false;
    if (!waitFor(
            [&] { return w.charts()->lossChart()->appendedCount(0) >= 30 || !w.run()->active(); },
            600000, "the language model's training"))
        return false;
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("tabs"));
    tabs->setCurrentIndex(0);
    shot(&w, "11-language-model-training");
    if (!waitFor([&] { return w.run()->state() == TrainingRun::State::Finished; }, 600000,
                 "the end of the language model's run"))
        return false;
    auto* history = w.findChild<QTableView*>(QStringLiteral("historyView"));
    selectWholeRow(history, w.history()->index(0, 0));
    w.findChild<QPushButton*>(QStringLiteral("tryButton"))->click();
    auto* dialog = w.findChild<TryDialog*>(QStringLiteral("tryDialog"));
    if (!dialog)
        return false;
    dialog->findChild<QPlainTextEdit*>(QStringLiteral("tryPrompt"))
        ->setPlainText(QStringLiteral("What colour is a plum?"));
    QSignalSpy done(dialog, &TryDialog::done);
    dialog->findChild<QPushButton*>(QStringLiteral("tryGenerate"))->click();
    if (!waitFor([&] { return done.size() > 0; }, 120000, "Try it…"))
        return false;
    shot(dialog, "12-try-it");
    dialog->close();
    // History: the language model's run named, and compared with the demo's.
    w.history()->setData(w.history()->index(0, HistoryModel::Name), QStringLiteral("support chat"),
                         Qt::EditRole);
    tabs->setCurrentIndex(2);
    CompareDialog* compare = w.compareRuns({0, 1});
    compare->show();
    QTest::qWait(500);
    shot(compare, "14-compare-runs");
    compare->close();
    return true;
}

// From the Hub…: a search and a finished download, against a stand-in Hub on loopback
// (tests/fakehub.h) whose models are named as real ones are; their files are a few bytes.
bool hubShots(MainWindow& w, const std::function<void(QWidget*, const char*)>& shot,
              const QString& scratch) {
    FakeHub hub;
    const QMap<QString, FakeHub::File> files{
        {QStringLiteral("config.json"), {"{\"model_type\": \"llama\"}", false}},
        {QStringLiteral("tokenizer.json"), {"{}", false}},
        {QStringLiteral("model.safetensors"), {QByteArray(3 << 20, 'w'), true}}};
    hub.addRepo(QStringLiteral("HuggingFaceTB/SmolLM2-135M-Instruct"), files, false, 412807);
    hub.addRepo(QStringLiteral("Qwen/Qwen2.5-0.5B-Instruct"), files, false, 1890336);
    hub.addRepo(QStringLiteral("meta-llama/Llama-3.2-1B-Instruct"), files, true, 2977562);
    qputenv("HF_ENDPOINT", hub.endpoint().toString().toUtf8());
    qputenv("HF_HOME", QDir(scratch).filePath(QStringLiteral("hf")).toUtf8());
    qunsetenv("HF_HUB_CACHE");
    qunsetenv("HF_TOKEN");
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("tabs"));
    tabs->setCurrentIndex(1);
    HubDialog* d = w.runForm()->getFromHub();
    QSignalSpy shown(d, &HubDialog::searchShown);
    d->findChild<QLineEdit*>(QStringLiteral("hubQuery"))->setText(QStringLiteral("instruct"));
    d->findChild<QPushButton*>(QStringLiteral("hubSearch"))->click();
    if (!waitFor([&] { return shown.size() > 0; }, 30000, "the Hub's search"))
        return false;
    auto* results = d->findChild<QTableWidget*>(QStringLiteral("hubResults"));
    results->setCurrentCell(2, 0);
    QSignalSpy ended(d, &HubDialog::downloadEnded);
    d->findChild<QPushButton*>(QStringLiteral("hubDownload"))->click();
    if (!waitFor([&] { return ended.size() > 0; }, 60000, "the download"))
        return false;
    QTest::qWait(300);
    shot(d, "15-get-a-model");
    d->close();
    qunsetenv("HF_ENDPOINT");
    qunsetenv("HF_HOME");
    return true;
}
} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.addOption({QStringLiteral("out"), QStringLiteral("Folder for the PNG files."),
                 QStringLiteral("DIR")});
    p.addOption({QStringLiteral("lang"), QStringLiteral("Language code."), QStringLiteral("CODE")});
    p.process(app);
    const QString lang = p.value(QStringLiteral("lang")).isEmpty()
                             ? QStringLiteral("en")
                             : p.value(QStringLiteral("lang"));
    const QDir out(p.value(QStringLiteral("out")).isEmpty() ? QStringLiteral(".")
                                                            : p.value(QStringLiteral("out")));
    QDir().mkpath(out.path());
    applyLanguage(app, lang);
    auto shot = [&](QWidget* w, const char* name) {
        QTest::qWait(400); // let charts and layouts draw
        const QString file =
            out.filePath(QStringLiteral("%1-%2.png").arg(lang, QLatin1String(name)));
        w->grab().save(file);
        std::printf("%s\n", qPrintable(file));
    };

    QTemporaryDir here, there, sweeps; // outlive the windows, whose sweep holds a folder
    const quint16 port = freeUdpPort();
    // The other machine: a window of its own, its wizard open on the Find page.
    WindowContext otherCtx = loopbackContext(there.path(), port, QStringLiteral("gpu-desktop"));
    otherCtx.settings.wizardDone = false;
    MainWindow other(otherCtx);
    other.resize(1440, 900);
    other.show();
    other.showWizard();
    other.wizard()->resize(780, 580);
    other.wizard()->next();

    WindowContext ctx = loopbackContext(here.path(), port);
    ctx.settings.wizardDone = false;
    MainWindow w(ctx);
    w.resize(1440, 900);
    w.show();
    w.showWizard();
    SetupWizard* wiz = w.wizard();
    wiz->resize(780, 580);
    if (!waitFor([&] { return w.node()->isRunning() && other.node()->isRunning(); }, 20000,
                 "the nodes"))
        return 1;
    shot(wiz, "01-wizard-this-machine");
    wiz->next();
    auto* table = wiz->findChild<QTableView*>(QStringLiteral("peerTable"));
    if (!waitFor([&] { return table->model()->rowCount() > 0; }, 30000, "the other machine"))
        return 1;
    // The list is rebuilt as announcements arrive; choose until the choice holds.
    if (!waitFor(
            [&] {
                selectWholeRow(table, table->model()->index(0, 0));
                return table->selectionModel()->hasSelection() && !wiz->chosenName().isEmpty();
            },
            20000, "a chosen machine"))
        return 1;
    shot(wiz, "02-wizard-find");
    wiz->next();
    QMessageBox* question = nullptr;
    if (!waitFor(
            [&] {
                return (question = other.findChild<QMessageBox*>(QStringLiteral("pairQuestion")));
            },
            30000, "the question on the other machine"))
        return 1;
    auto* codeLabel = wiz->findChild<QLabel*>(QStringLiteral("codeLabel"));
    if (!waitFor([&] { return !codeLabel->text().isEmpty(); }, 20000, "the code on screen"))
        return 1;
    shot(wiz, "03-wizard-pair");
    for (QAbstractButton* b : question->buttons())
        if (question->buttonRole(b) == QMessageBox::YesRole)
            b->click();
    wiz->findChild<QPushButton*>(QStringLiteral("sameCodeButton"))->click();
    if (!waitFor([&] { return wiz->paired(); }, 20000, "pairing"))
        return 1;
    wiz->next();
    shot(wiz, "04-wizard-done");
    wiz->accept();
    if (!waitFor([&] { return other.wizard()->currentId() == SetupWizard::Done; }, 20000,
                 "the answering wizard's last page"))
        return 1;
    shot(other.wizard(), "10-wizard-done-answered");
    other.wizard()->accept();

    // A short run of the demo model shared by both machines.
    RunConfig c = w.runForm()->config();
    c.limitTrain = 9600;
    c.limitTest = 2000;
    c.epochs = 2;
    c.mode = TrainMode::Sync; // both machines share one CPU here: automatic would train alone
    w.runForm()->setConfig(c);
    if (!waitFor([&] { return w.runForm()->config().invites.size() == 1; }, 20000,
                 "the paired machine in New run"))
        return 1;
    shot(&w, "05-dashboard-new-run");
    w.startRun();
    if (!waitFor([&] { return w.run()->active(); }, 120000, "the run to start"))
        return 1;
    if (!waitFor(
            [&] { return w.charts()->lossChart()->appendedCount(0) >= 220 || !w.run()->active(); },
            600000, "training"))
        return 1;
    w.findChild<QTabWidget*>(QStringLiteral("tabs"))->setCurrentIndex(0);
    shot(&w, "06-dashboard-training");
    other.findChild<QTabWidget*>(QStringLiteral("tabs"))->setCurrentIndex(0);
    shot(&other, "09-lending-machine");
    if (!waitFor([&] { return w.run()->state() == TrainingRun::State::Finished; }, 600000,
                 "the end of the run"))
        return 1;
    QTemporaryDir exports;
    QSignalSpy exported(&w, &MainWindow::exportFinished);
    w.exportRun(0, ExportFormat::TorchScript, exports.filePath(QStringLiteral("demo.pt")));
    if (!waitFor([&] { return exported.size() > 0; }, 60000, "the export"))
        return 1;
    shot(&w, "07-history-exported");

    // A small sweep on both machines: nine trials of the MLP, asha over two rungs.
    const QString sweepFile = sweeps.filePath(QStringLiteral("mlp-sweep.json"));
    QFile f(sweepFile);
    if (!f.open(QIODevice::WriteOnly))
        return 1;
    f.write(R"({"model": "mlp", "data": "fashion-mnist", "threads": 1, "epochs": 3,
        "limit_train": 6000, "limit_test": 2000, "local_steps": 8,
        "sweep": {"space": {"lr": {"log_uniform": [0.00001, 0.01]},
                            "optimizer": {"choice": ["adam", "sgd"]}},
                  "trials": 9, "seed": 2,
                  "scheduler": {"kind": "asha", "reduction": 3, "rungs": [1, 3]}}})");
    f.close();
    SweepTab* sweep = w.sweep();
    sweep->setProgram(testpaths::binary());
    auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("tabs"));
    tabs->setCurrentWidget(sweep);
    if (!sweep->openFile(sweepFile))
        return 1;
    sweep->findChild<QLineEdit*>(QStringLiteral("sweepFolder"))
        ->setText(sweeps.filePath(QStringLiteral("mlp-sweep")));
    QSignalSpy swept(sweep, &SweepTab::finished);
    sweep->start();
    if (!waitFor([&] { return swept.size() > 0; }, 600000, "the sweep"))
        return 1;
    shot(&w, "08-sweep");
    return languageModelShots(w, shot, sweeps.path()) && hubShots(w, shot, sweeps.path()) ? 0 : 1;
}
