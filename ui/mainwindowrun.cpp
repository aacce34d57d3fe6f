// The main window's side of a training run: starting, resuming and following it, its
// outcome in words, and exporting what it made.

#include "ui/mainwindow.h"

#include "common/clocktext.h"
#include "common/version.h"
#include "engine/runhistory.h"
#include "engine/runplan.h"
#include "engine/trainingrun.h"
#include "model/modelsource.h"
#include "ui/chartpanel.h"
#include "ui/format.h"
#include "ui/historymodel.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/runform.h"
#include "ui/sweeptab.h"
#include "ui/tables.h"
#include "ui/trydialog.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSystemTrayIcon>
#include <QTableView>
#include <QThread>

#include <memory>

namespace tandem::ui {

void MainWindow::connectRun() {
    connect(m_start, &QPushButton::clicked, this, &MainWindow::startRun);
    connect(m_pause, &QPushButton::clicked, m_run, &TrainingRun::pause);
    connect(m_resume, &QPushButton::clicked, m_run, &TrainingRun::resume);
    connect(m_stop, &QPushButton::clicked, m_run, &TrainingRun::stop);
    connect(m_run, &TrainingRun::stateChanged, this,
            [this, last = std::make_shared<TrainingRun::State>(m_run->state())] {
                updateControls();
                updateTray();
                // The engine pauses once the step in flight is done, and says at which
                // (onRunEvent); the next step's progress replaces what a resume says.
                const TrainingRun::State now = m_run->state();
                if (now == TrainingRun::State::Paused)
                    m_progressText->setText(tr("Pausing after the step in progress…"));
                else if (now == TrainingRun::State::Stopping)
                    m_progressText->setText(tr("Stopping: saving a checkpoint…"));
                else if (now == TrainingRun::State::Running && *last == TrainingRun::State::Paused)
                    m_progressText->setText(tr("Resuming…"));
                *last = now;
            });
    connect(m_run, &TrainingRun::started, this, [this](const RunInfo& info) {
        m_task = info.task;
        m_tokensPerSample = info.tokensPerSample;
        m_testSamples = info.testSamples;
        m_charts->reset(info.task,
                        info.stepsPerEpoch > 0 ? int(info.totalSteps / info.stepsPerEpoch) : 1,
                        info.tokensPerSample);
        log(tr("Training %1 on %2: %3 training samples, %4 steps per epoch")
                .arg(info.model, info.datasetDescription)
                .arg(info.trainSamples)
                .arg(info.stepsPerEpoch));
    });
    connect(m_run, &TrainingRun::stepped, this, &MainWindow::onStep);
    connect(m_run, &TrainingRun::epochEnded, this, [this](const EpochMetrics& e) {
        m_charts->addEpoch(e);
        log(tr("Epoch %1: %2, test loss %3")
                .arg(e.epoch + 1)
                .arg(testFigureText(e.test, m_task), QLocale().toString(e.test.loss, 'f', 4)));
    });
    connect(m_run, &TrainingRun::message, this, &MainWindow::log);
    connect(m_run, &TrainingRun::event, this, &MainWindow::onRunEvent);
    connect(m_run, &TrainingRun::evaluating, this, &MainWindow::onEvaluating);
    connect(m_run, &TrainingRun::finished, this, &MainWindow::onFinished);
    connect(m_run, &TrainingRun::failed, this, &MainWindow::onFailed);
    // The first status line speaks of the demo: once the form says something else, so does it.
    connect(m_form, &RunForm::edited, this, [this] {
        if (!m_run->active() && !m_startPending && m_progressText->text() == demoReadyText())
            m_progressText->setText(tr("Ready: press Start to train with these settings."));
    });
    connect(m_form, &RunForm::checked, this, [this](bool ok, const QString&, const Error& error) {
        if (!m_startPending)
            return;
        m_startPending = false;
        if (ok) {
            launch(m_form->config(), QString());
        } else {
            m_progressText->setText(tr("Not started.")); // the banner says why
            showBanner(BannerKind::Error, explainError(error));
            updateControls();
        }
    });
}

QString MainWindow::explainError(const Error& e) const {
    if (e.code == ErrorCode::OutOfMemory)
        return tr("A device ran out of memory (%1). Lower the batch size or leave that machine "
                  "out, then start again.")
            .arg(e.message);
    switch (e.subject) {
    case ErrorSubject::Dataset:
        return tr("The dataset cannot be used: %1. Check the folder or file and its format "
                  "(the user guide lists the formats).")
            .arg(e.message);
    case ErrorSubject::Model: {
        // The advice follows what was chosen: a folder, a file of the user's, a built-in one.
        const ModelSource source = ModelSource::parse(m_form->config().model);
        // A folder that is not one says what it should hold (checkModelFolder): not again.
        if (source.isHf())
            return tr("The model cannot be used: %1. The user guide lists the model families "
                      "Tandem reads.")
                .arg(e.message);
        if (source.isBuiltIn())
            return tr("The model cannot be used: %1.").arg(e.message);
        return tr("The model cannot be used: %1. Save it with torch.jit.save after "
                  "torch.jit.script, and check that it returns class scores.")
            .arg(e.message);
    }
    case ErrorSubject::Peer:
        return tr("A machine could not join: %1.").arg(e.message);
    case ErrorSubject::None:
        break;
    }
    return tr("The run stopped with an error: %1").arg(e.message);
}

void MainWindow::onRunEvent(const RunEvent& e) {
    // Automatic mode's choice stays in view under the status for the whole run; the log's
    // copy would scroll away.
    if (e.kind == RunEvent::Kind::ModeChosen) {
        m_modeText->setText(tr("Mode: %1").arg(e.reason));
        m_modeText->show();
    }
    if (e.kind == RunEvent::Kind::Paused && m_run->state() == TrainingRun::State::Paused)
        m_progressText->setText(
            tr("Paused at step %1. Resume continues where it stopped.").arg(e.step));
    // The cluster table says which machine sits a run out, and why.
    if (e.kind == RunEvent::Kind::WorkerLeftOut)
        m_node->peers()->setIdle(e.worker, e.costMs, e.stepMs, e.withMs);
    if (e.kind == RunEvent::Kind::WorkerBack || e.kind == RunEvent::Kind::WorkerDropped)
        m_node->peers()->setBack(e.worker);
    // A machine whose owner stopped lending it said so: no fault to look for.
    if (e.kind == RunEvent::Kind::WorkerDropped && e.leaving)
        showBanner(BannerKind::Info, tr("%1 stopped lending itself to this run. Its share goes "
                                        "to the others.")
                                         .arg(e.worker));
    else if (e.kind == RunEvent::Kind::WorkerDropped)
        showBanner(BannerKind::Warning,
                   tr("A machine left the run: %1. Its share goes to the others. Check that "
                      "it is switched on and on this network; it can join again.")
                       .arg(e.worker));
}

void MainWindow::startRun() {
    if (m_run->active() || m_startPending)
        return;
    m_banner->hide();
    m_startPending = true;
    m_start->setEnabled(false);
    // Nothing of the last run's progress stays, whether this one starts or not.
    m_progress->setValue(0);
    m_modeText->hide();
    m_progressText->setText(tr("Checking the model and the dataset…"));
    m_form->check();
}

void MainWindow::launch(RunConfig config, const QString& resumeFrom) {
    if (resumeFrom.isEmpty())
        config.outDir =
            RunPlan::newRunFolder(m_ctx.settings.effectiveRunsFolder(m_ctx.home), config.model);
    config.home = m_ctx.home;
    config.name = shownName(); // what invited machines show of this one
    if (!config.invites.isEmpty()) {
        config.listen = QStringLiteral("[::]:%1").arg(m_ctx.settings.runPort);
        // Wait for the invited machines, but not for ever: one that is busy or switched off
        // must not hold up the others.
        config.workers = int(config.invites.size());
        config.joinTimeoutS = 30;
    } else {
        config.listen.clear();
        config.workers = 0;
    }
    if (!config.localWorker && config.invites.isEmpty()) {
        showBanner(BannerKind::Error, tr("No machine is chosen to train. Tick at least one "
                                         "machine under New run → Machines."));
        updateControls();
        return;
    }
    m_runFolder = config.outDir;
    m_chartsFolder = m_runFolder;
    if (resumeFrom.isEmpty())
        saveUiState(); // the form as this run starts, for the next start of the app
    // Written here too, so that History shows the run at once; the engine keeps it (RunHistory).
    RunHistory::started(config);
    if (resumeFrom.isEmpty())
        if (const QString name = m_form->takeRunName(); !name.isEmpty())
            RunHistory::describe(m_runFolder, name, QString());
    m_history->setActiveFolder(m_runFolder);
    m_history->reload();
    m_charts->reset(Task::Classification, config.epochs);
    m_charts->showLentView(false);
    m_modeText->hide();
    m_firstStep = -1;
    m_last = StepMetrics{};
    m_evalS = -1;
    m_evalClock.invalidate();
    m_progress->setValue(0);
    m_progressText->setText(config.invites.isEmpty() ? tr("Starting…")
                                                     : tr("Starting; inviting %n machine(s)…",
                                                          nullptr, int(config.invites.size())));
    log(tr("Run folder: %1").arg(m_runFolder));
    m_node->setBusy(true);
    m_run->start(config, resumeFrom);
    updateControls();
}

void MainWindow::resumeRun(int row) {
    const QModelIndex i = m_history->index(row, 0);
    if (!i.isValid() || m_run->active())
        return;
    const QString checkpoint = i.data(HistoryModel::CheckpointRole).toString();
    if (!i.data(HistoryModel::ResumableRole).toBool()) {
        showBanner(BannerKind::Info, tr("That run finished or has no checkpoint; start a new "
                                        "run instead."));
        return;
    }
    auto c = RunPlan::resumeConfig(checkpoint);
    if (!c) {
        showBanner(BannerKind::Error, tr("Cannot resume: %1").arg(c.error().message));
        return;
    }
    launch(*c, checkpoint);
}

void MainWindow::updateControls() {
    using S = TrainingRun::State;
    const S s = m_run->state();
    const bool busy = m_run->active() || m_startPending;
    // A machine lending its device to another run starts nothing of its own meanwhile.
    m_start->setEnabled(!busy && !m_lending.active);
    m_start->setToolTip(m_lending.active
                            ? tr("This machine is lending its device to another run: press "
                                 "Stop lending first.")
                            : QString());
    m_pause->setEnabled(s == S::Running);
    m_resume->setEnabled(s == S::Paused);
    m_stop->setEnabled(s == S::Running || s == S::Paused);
    m_form->setEnabled(!busy);
    // The run's columns (role, share, speed) only while a run is on, in the room of the
    // Devices and Status columns: they are empty otherwise, the devices are listed under New
    // run meanwhile, and a machine the run loses says so in the log. On a laptop's window the
    // share and the speed stay in view without scrolling sideways. The shard's column shows
    // once a sharded run's step says what each machine holds.
    for (int c : {int(PeerModel::Role), int(PeerModel::Share), int(PeerModel::Speed)})
        m_clusterView->setColumnHidden(c, !m_run->active());
    m_clusterView->setColumnHidden(PeerModel::Shard,
                                   !m_run->active() || !m_node->peers()->sharded());
    for (int c : {int(PeerModel::Devices), int(PeerModel::Status)})
        m_clusterView->setColumnHidden(c, m_run->active());
}

// An epoch's end: the status says what the run does instead of showing the last step's line,
// which would look like a hang, and times it for the estimate of what is left.
void MainWindow::onEvaluating(qint64 done, qint64 total) {
    if (done == 0)
        m_evalClock.start();
    else if (done >= total && m_evalClock.isValid())
        m_evalS = double(m_evalClock.elapsed()) / 1e3;
    if (m_run->state() != TrainingRun::State::Running)
        return; // the paused/stopping text stays
    m_progressText->setText(tr("Epoch %1 of %2 done · evaluating on %3 test samples… %4 %")
                                .arg(m_last.epoch + 1)
                                .arg(m_last.epochs)
                                .arg(QLocale().toString(total))
                                .arg(total > 0 ? 100 * done / total : 0));
}

void MainWindow::onStep(const StepMetrics& m) {
    m_evalClock.invalidate();
    if (m_firstStep < 0)
        m_firstStep = m.step - 1;
    m_last = m;
    m_charts->addStep(m); // buffered; drawn at most ten times a second
    // Labels, the progress bar and the cluster table show the latest step ten times a
    // second, however fast steps come.
    if (!m_progressTimer.isActive())
        m_progressTimer.start();
}

void MainWindow::showProgress() {
    const StepMetrics& m = m_last;
    if (!m_run->active() || m.step <= 0)
        return;
    m_node->peers()->setRunStats(m.workers, m.stepMs, m_tokensPerSample);
    m_clusterView->setColumnHidden(PeerModel::Shard, !m_node->peers()->sharded());
    const double fraction = m.totalSteps > 0 ? double(m.step) / double(m.totalSteps) : 0;
    m_progress->setValue(int(1000 * fraction));
    const int64_t done = m.step - m_firstStep;
    const int epochs = m.epochs;
    // What is left: the steps at this run's pace, and an evaluation at the end of this epoch and
    // of each after it (as long as the last one took, or, before the first, the test samples
    // at about three times the training pace: a forward pass without the backward).
    const double evalS = m_evalS >= 0        ? m_evalS
                         : m.samplesPerS > 0 ? double(m_testSamples) / (3 * m.samplesPerS)
                                             : 0;
    const double eta = done > 0 ? m.elapsedS / double(done) * double(m.totalSteps - m.step) +
                                      evalS * double(std::max(0, epochs - m.epoch))
                                : -1;
    if (m_run->state() != TrainingRun::State::Running || m_evalClock.isValid())
        return; // the paused/stopping text, or the evaluation's, stays
    m_progressText->setText(
        tr("Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · "
           "%7 · loss %8")
            .arg(m.epoch + 1)
            .arg(epochs)
            .arg(m.step)
            .arg(m.totalSteps)
            .arg(clockText(m.elapsedS), clockText(eta),
                 speedText(m.samplesPerS, m.samplesPerS * double(m_tokensPerSample)),
                 QLocale().toString(m.loss, 'f', 4)));
}

void MainWindow::onFinished(const RunSummary& s) {
    m_node->setBusy(false);
    m_node->peers()->setRunStats({}, 0);
    // The engine recorded the end in the run's folder (RunHistory).
    m_history->setActiveFolder(QString());
    m_history->reload();
    const QString figure = testFigureText(s.test, s.task);
    if (s.finished) {
        m_progress->setValue(1000);
        m_progressText->setText(
            tr("Finished: %1, %2.").arg(figure, speedText(s.samplesPerS, s.tokensPerS)));
        showBanner(BannerKind::Info,
                   tr("The run finished: %1. Export the model from History.").arg(figure));
    } else {
        m_progressText->setText(tr("Stopped at step %1; a checkpoint is saved.").arg(s.steps));
        showBanner(BannerKind::Info,
                   tr("The run stopped at step %1. Resume it from History.").arg(s.steps));
    }
    if (m_tray)
        m_tray->showMessage(QStringLiteral("Tandem"), m_progressText->text());
    m_tabs->setCurrentIndex(2);
    if (m_history->rowCount() > 0)
        selectWholeRow(m_historyView, m_history->index(0, 0));
    updateControls();
    if (m_quitAfterRun)
        close();
}

void MainWindow::onFailed(const Error& e) {
    m_node->setBusy(false);
    m_node->peers()->setRunStats({}, 0);
    // A run that failed before the engine ran it has no end in its record yet.
    if (RunHistory::read(m_runFolder).value(QStringLiteral("status")).toString() ==
        QLatin1String("running"))
        RunHistory::ended(m_runFolder, Expected<RunSummary>(e));
    m_history->setActiveFolder(QString());
    m_history->reload();
    m_progressText->setText(tr("The run failed."));
    showBanner(BannerKind::Error, explainError(e));
    updateControls();
    if (m_quitAfterRun)
        close();
}

void MainWindow::tryRun(int row) {
    const QString checkpoint =
        m_history->index(row, 0).data(HistoryModel::CheckpointRole).toString();
    if (checkpoint.isEmpty())
        return;
    const bool hf =
        ModelSource::parse(m_history->index(row, 0).data(HistoryModel::ModelRole).toString())
            .isHf();
    // A LoRA run answers beside its base, which it has for free, and a preference-tuned run
    // beside the model it started from (DPO's reference), when that folder is still on disk.
    const QModelIndex first = m_history->index(row, 0);
    const QString started = first.data(HistoryModel::ModelRole).toString();
    const ModelSource base = ModelSource::parse(started);
    const bool compare =
        hf &&
        (first.data(HistoryModel::AdaptersRole).toBool() ||
         first.data(HistoryModel::TaskRole).toString() == nameOf(Task::Preference)) &&
        QFileInfo(base.path).isDir();
    auto* dialog =
        new TryDialog(checkpoint, m_history->index(row, HistoryModel::Name).data().toString(), hf,
                      this, compare ? started : QString(), uiStatePath());
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
}

void MainWindow::exportSelected(ExportFormat format) {
    const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        showBanner(BannerKind::Info, tr("Choose a run in History first."));
        return;
    }
    if (format == ExportFormat::Hf || format == ExportFormat::Peft) {
        // A folder: named like a file, made by the export (a new name is the usual answer).
        const QString suggested =
            QDir(exportFolder())
                .filePath(
                    QFileInfo(rows.first().data(HistoryModel::FolderRole).toString()).fileName() +
                    (format == ExportFormat::Hf ? QStringLiteral("-hf")
                                                : QStringLiteral("-adapter")));
        const QString folder = QFileDialog::getSaveFileName(
            this,
            format == ExportFormat::Hf ? tr("Export the Hugging Face folder as")
                                       : tr("Export the adapters as"),
            suggested, QString(), nullptr, QFileDialog::DontConfirmOverwrite);
        if (!folder.isEmpty())
            exportRun(rows.first().row(), format, folder);
        return;
    }
    if (format == ExportFormat::Gguf) {
        exportGgufSelected(rows.first().row());
        return;
    }
    const bool ts = format == ExportFormat::TorchScript;
    const QString suggested =
        QDir(exportFolder())
            .filePath(QFileInfo(rows.first().data(HistoryModel::FolderRole).toString()).fileName() +
                      (ts ? QStringLiteral(".pt") : QStringLiteral(".safetensors")));
    const QString path = QFileDialog::getSaveFileName(
        this, ts ? tr("Export as TorchScript") : tr("Export as safetensors"), suggested,
        ts ? tr("TorchScript (*.pt)") : tr("safetensors (*.safetensors)"));
    if (!path.isEmpty())
        exportRun(rows.first().row(), format, path);
}

// GGUF: the quantization first, each with the file's size for this model, then the file.
void MainWindow::exportGgufSelected(int row) {
    const ModelSource source =
        ModelSource::parse(m_history->index(row, 0).data(HistoryModel::ModelRole).toString());
    // Each file's size, from the model folder's shapes (a fine-tune's are its base's).
    const std::vector<GgufQuant> quants = {GgufQuant::Q4_K_M, GgufQuant::Q8_0, GgufQuant::F16,
                                           GgufQuant::BF16};
    const auto sizes = source.isHf() ? ggufExportBytes(source.path, quants)
                                     : Expected<std::vector<int64_t>>(std::vector<int64_t>{});
    auto size = [&](size_t i) {
        return sizes && i < sizes->size() && (*sizes)[i] > 0
                   ? QLocale().formattedDataSize((*sizes)[i])
                   : tr("unknown");
    };
    // 4-bit blocks take rows of whole 256-value blocks; llama.cpp stores other rows at 5 to 8
    // bits, so such a model's Q4_K_M file is hardly smaller than Q8_0, the better choice there.
    const bool narrow = sizes && sizes->size() == quants.size() && (*sizes)[0] > 0 &&
                        double((*sizes)[0]) >= 0.9 * double((*sizes)[1]);
    const QList<std::pair<GgufQuant, QString>> choices = {
        {GgufQuant::Q4_K_M,
         narrow ? tr("Q4_K_M: about %1, hardly smaller here: this model's rows are not whole "
                     "blocks of 256 values, which 4 bits need, so they are stored at 5 to 8 bits")
                      .arg(size(0))
                : tr("Q4_K_M: about %1, the usual choice").arg(size(0))},
        {GgufQuant::Q8_0, tr("Q8_0: about %1, nearly as trained").arg(size(1))},
        {GgufQuant::F16, tr("F16: about %1, as trained").arg(size(2))},
        {GgufQuant::BF16, tr("BF16: about %1, as trained").arg(size(3))}};
    QStringList items;
    for (const auto& c : choices)
        items << c.second;
    bool ok = false;
    const QString picked =
        QInputDialog::getItem(this, tr("Export for Ollama / llama.cpp"),
                              tr("How the weights are stored:"), items, narrow ? 1 : 0, false, &ok);
    if (!ok)
        return;
    const GgufQuant quant = choices[items.indexOf(picked)].first;
    const QString name =
        QFileInfo(m_history->index(row, 0).data(HistoryModel::FolderRole).toString()).fileName() +
        QLatin1Char('-') + ggufQuantName(quant) + QStringLiteral(".gguf");
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export as GGUF"), QDir(exportFolder()).filePath(name), tr("GGUF (*.gguf)"));
    if (!path.isEmpty())
        exportRun(row, ExportFormat::Gguf, path, quant);
}

void MainWindow::exportRun(int row, ExportFormat format, const QString& path, GgufQuant quant) {
    exportCheckpointFile(m_history->index(row, 0).data(HistoryModel::CheckpointRole).toString(),
                         format, path, quant);
}

QWidget* MainWindow::buildSweepTab() {
    // Sweeps go beside the runs: <home>/sweeps by default.
    m_sweep = new SweepTab(m_node->peers(), m_ctx.home,
                           QDir::cleanPath(QDir(m_ctx.settings.effectiveRunsFolder(m_ctx.home))
                                               .filePath(QStringLiteral("../sweeps"))));
    connect(m_sweep, &SweepTab::message, this, &MainWindow::log);
    connect(m_sweep, &SweepTab::exportRequested, this, &MainWindow::exportSweepBest);
    // Trials train here too: invitations from other machines wait until the sweep ends.
    connect(m_sweep, &SweepTab::runningChanged, this,
            [this](bool running) { m_node->setBusy(running || m_run->active()); });
    return m_sweep;
}

void MainWindow::exportSweepBest(const QString& checkpoint, const QString& suggestedName) {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export as TorchScript"),
        QDir(exportFolder()).filePath(suggestedName + QStringLiteral(".pt")),
        tr("TorchScript (*.pt);;safetensors (*.safetensors)"));
    if (path.isEmpty())
        return;
    exportCheckpointFile(checkpoint,
                         path.endsWith(QLatin1String(".safetensors")) ? ExportFormat::Safetensors
                                                                      : ExportFormat::TorchScript,
                         path);
}

void MainWindow::exportCheckpointFile(const QString& checkpoint, ExportFormat format,
                                      const QString& path, GgufQuant quant) {
    rememberExportFolder(path); // where the user chose to put it, for the next export
    if (checkpoint.isEmpty()) {
        const QString m = tr("That run has no checkpoint to export.");
        showBanner(BannerKind::Error, m);
        Q_EMIT exportFinished(false, m);
        return;
    }
    if (m_exportThread)
        m_exportThread->wait();
    QPointer<MainWindow> self(this);
    // Reading the checkpoint and writing the file can take seconds for a large model.
    m_exportThread.reset(QThread::create([self, checkpoint, format, path, quant] {
        GgufOptions gguf;
        gguf.quant = quant;
        const Status st = exportCheckpoint(checkpoint, format, path, gguf);
        const QString err = st ? QString() : st.error().message;
        QMetaObject::invokeMethod(
            qApp,
            [self, err, path] {
                if (!self)
                    return;
                if (err.isEmpty() && path.endsWith(QLatin1String(".gguf"))) {
                    self->handOnGguf(path);
                } else if (err.isEmpty()) {
                    const QString m =
                        tr("Exported to %1. In Python: %2")
                            .arg(
                                QDir::toNativeSeparators(path),
                                path.endsWith(QLatin1String(".pt"))
                                    ? QStringLiteral("torch.jit.load(path)")
                                : path.endsWith(QLatin1String(".safetensors"))
                                    ? QStringLiteral("safetensors.torch.load_file(path)")
                                : path.endsWith(QLatin1String("-adapter"))
                                    ? QStringLiteral("PeftModel.from_pretrained(base, path)")
                                    : QStringLiteral("AutoModelForCausalLM.from_pretrained(path)"));
                    self->showBanner(BannerKind::Info, m);
                    Q_EMIT self->exportFinished(true, m);
                } else {
                    const QString m = tr("The export failed: %1").arg(err);
                    self->showBanner(BannerKind::Error, m);
                    Q_EMIT self->exportFinished(false, m);
                }
            },
            Qt::QueuedConnection);
    }));
    m_exportThread->start();
}

} // namespace tandem::ui
