#include "mainwindow.h"

#include "chartpanel.h"
#include "clocktext.h"
#include "format.h"
#include "historymodel.h"
#include "nodebridge.h"
#include "peermodel.h"
#include "runform.h"
#include "settingsdialog.h"
#include "setupwizard.h"
#include "tables.h"
#include "trainingrun.h"
#include "version.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QJsonObject>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

namespace tandem::ui {

namespace {

QJsonObject startRecord(const RunConfig& c) {
    return QJsonObject{
        {QStringLiteral("config"), c.toJson()},
        {QStringLiteral("started"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("status"), QStringLiteral("running")},
        {QStringLiteral("app_version"), appVersion()}};
}
} // namespace

MainWindow::MainWindow(const WindowContext& context, QWidget* parent)
    : QMainWindow(parent)
    , m_ctx(context)
    , m_node(new NodeBridge(context.node, this))
    , m_run(new TrainingRun(this)) {
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("Tandem"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/tandem.png")));
    m_node->peers()->setSelf(context.settings.nodeName.isEmpty() ? QSysInfo::machineHostName()
                                                                 : context.settings.nodeName,
                             context.node.devices);
    m_history = new HistoryModel(this);
    m_history->setFolder(context.settings.effectiveRunsFolder(context.home));

    // The banner: errors and outcomes in words, with what to do next.
    m_banner = new QFrame;
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setAutoFillBackground(true);
    auto* bannerRow = new QHBoxLayout(m_banner);
    m_bannerText = new QLabel;
    m_bannerText->setWordWrap(true);
    m_bannerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* bannerClose = new QToolButton;
    bannerClose->setText(QStringLiteral("✕"));
    bannerClose->setToolTip(tr("Dismiss"));
    bannerClose->setAutoRaise(true);
    bannerRow->addWidget(m_bannerText, 1);
    bannerRow->addWidget(bannerClose, 0, Qt::AlignTop);
    connect(bannerClose, &QToolButton::clicked, m_banner, &QWidget::hide);
    m_banner->hide();

    // Left: cluster, new run, history.
    m_form = new RunForm(m_node->peers(), m_ctx.node.devices);
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("tabs"));
    m_tabs->addTab(buildClusterTab(), tr("Cluster"));
    auto* runTab = new QWidget;
    auto* runLayout = new QVBoxLayout(runTab);
    runLayout->addWidget(m_form);
    auto* fileRow = new QHBoxLayout;
    auto* load = new QPushButton(tr("Load…"));
    auto* save = new QPushButton(tr("Save…"));
    load->setToolTip(tr("Load a run description (JSON, as for tandem train --config)"));
    save->setToolTip(tr("Save this run description as JSON"));
    fileRow->addStretch();
    fileRow->addWidget(load);
    fileRow->addWidget(save);
    runLayout->addLayout(fileRow);
    runLayout->addStretch();
    connect(load, &QPushButton::clicked, this, &MainWindow::loadDescription);
    connect(save, &QPushButton::clicked, this, &MainWindow::saveDescription);
    m_tabs->addTab(runTab, tr("New run"));
    m_tabs->addTab(buildHistoryTab(), tr("History"));
    m_tabs->setCurrentIndex(1);

    // Right: controls, progress, charts.
    m_start = new QPushButton(tr("Start"));
    m_pause = new QPushButton(tr("Pause"));
    m_resume = new QPushButton(tr("Resume"));
    m_stop = new QPushButton(tr("Stop"));
    m_start->setObjectName(QStringLiteral("startButton"));
    m_pause->setObjectName(QStringLiteral("pauseButton"));
    m_resume->setObjectName(QStringLiteral("resumeButton"));
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_start->setDefault(true);
    auto* controls = new QHBoxLayout;
    for (QPushButton* b : {m_start, m_pause, m_resume, m_stop})
        controls->addWidget(b);
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("progressBar"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    controls->addWidget(m_progress, 1);
    m_progressText = new QLabel(tr("Ready. The demo is set up in New run: press Start."));
    m_progressText->setObjectName(QStringLiteral("progressText"));
    m_progressText->setWordWrap(true);
    m_charts = new ChartPanel;
    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addLayout(controls);
    rightLayout->addWidget(m_progressText);
    rightLayout->addWidget(m_charts, 1);

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_tabs);
    split->addWidget(right);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({620, 820});

    m_log = new QPlainTextEdit;
    m_log->setObjectName(QStringLiteral("logView"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setPlaceholderText(tr("Log"));
    auto* vsplit = new QSplitter(Qt::Vertical);
    vsplit->addWidget(split);
    vsplit->addWidget(m_log);
    vsplit->setStretchFactor(0, 5);
    vsplit->setStretchFactor(1, 1);

    auto* central = new QWidget;
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->addWidget(m_banner);
    centralLayout->addWidget(vsplit, 1);
    setCentralWidget(central);
    buildMenus();

    m_progressTimer.setSingleShot(true);
    m_progressTimer.setInterval(100);
    connect(&m_progressTimer, &QTimer::timeout, this, &MainWindow::showProgress);
    connect(m_start, &QPushButton::clicked, this, &MainWindow::startRun);
    connect(m_pause, &QPushButton::clicked, m_run, &TrainingRun::pause);
    connect(m_resume, &QPushButton::clicked, m_run, &TrainingRun::resume);
    connect(m_stop, &QPushButton::clicked, m_run, &TrainingRun::stop);
    connect(m_run, &TrainingRun::stateChanged, this, [this] {
        updateControls();
        updateTray();
        if (m_run->state() == TrainingRun::State::Paused)
            m_progressText->setText(
                tr("Paused at step %1. Resume continues where it stopped.").arg(m_last.step));
        else if (m_run->state() == TrainingRun::State::Stopping)
            m_progressText->setText(tr("Stopping: saving a checkpoint…"));
    });
    connect(m_run, &TrainingRun::started, this, [this](const RunInfo& info) {
        log(tr("Training %1 on %2: %3 training samples, %4 steps per epoch")
                .arg(info.model, info.datasetDescription)
                .arg(info.trainSamples)
                .arg(info.stepsPerEpoch));
    });
    connect(m_run, &TrainingRun::stepped, this, &MainWindow::onStep);
    connect(m_run, &TrainingRun::epochEnded, this, [this](const EpochMetrics& e) {
        m_charts->addEpoch(e);
        log(tr("Epoch %1: test accuracy %2%, test loss %3")
                .arg(e.epoch + 1)
                .arg(QLocale().toString(100 * e.testAccuracy, 'f', 2))
                .arg(QLocale().toString(e.testLoss, 'f', 4)));
    });
    connect(m_run, &TrainingRun::message, this, [this](const QString& m) {
        log(m);
        if (m.startsWith(QLatin1String("dropped ")))
            showBanner(BannerKind::Warning,
                       tr("A machine left the run: %1. Its share goes to the others. Check that "
                          "it is switched on and on this network; it can join again.")
                           .arg(m.mid(8).section(QLatin1Char(':'), 0, 0)));
    });
    connect(m_run, &TrainingRun::finished, this, &MainWindow::onFinished);
    connect(m_run, &TrainingRun::failed, this, &MainWindow::onFailed);
    connect(m_form, &RunForm::checked, this, [this](bool ok, const QString& message) {
        if (!m_startPending)
            return;
        m_startPending = false;
        if (ok) {
            launch(m_form->config(), QString());
        } else {
            showBanner(BannerKind::Error, explainError(message));
            updateControls();
        }
    });

    connect(m_node, &NodeBridge::message, this, &MainWindow::log);
    connect(m_node, &NodeBridge::failed, this, [this](const QString& m) {
        showBanner(BannerKind::Error,
                   tr("This machine cannot join the network: %1. Another program may use the "
                      "same ports; change them in Settings.")
                       .arg(m));
    });
    connect(m_node, &NodeBridge::started, this, [this](const QString& id, quint16 port) {
        log(tr("This machine is %1, listening on port %2").arg(id.left(16)).arg(port));
    });
    connect(m_node, &NodeBridge::pairingQuestion, this, &MainWindow::onPairingQuestion);
    connect(m_node, &NodeBridge::pairingFinished, this,
            [this](bool paired, int, const QString& message) {
                log(message);
                if (paired && !(m_wizard && m_wizard->isVisible()))
                    showBanner(BannerKind::Info, tr("Paired: %1").arg(message));
            });
    connect(m_node, &NodeBridge::workerChanged, this,
            [this](bool running, const QString& coordinator) {
                showBanner(BannerKind::Info,
                           running ? tr("This machine is training for %1.").arg(coordinator)
                                   : tr("This machine finished its work for %1.").arg(coordinator));
                updateTray();
            });

    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(windowIcon(), this);
        auto* menu = new QMenu(this);
        menu->addAction(tr("Show Tandem"), this, [this] {
            showNormal();
            raise();
            activateWindow();
        });
        menu->addAction(tr("Pause"), m_run, &TrainingRun::pause);
        menu->addAction(tr("Resume"), m_run, &TrainingRun::resume);
        menu->addSeparator();
        menu->addAction(tr("Quit"), this, &QWidget::close);
        m_tray->setContextMenu(menu);
        m_tray->show();
    }
    updateControls();
    updateTray();
    resize(1280, 800);
    m_node->start();
}

MainWindow::~MainWindow() {
    if (m_exportThread)
        m_exportThread->wait();
}

QWidget* MainWindow::buildClusterTab() {
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    auto* filter = new PeerFilter(PeerFilter::Mode::Cluster, this);
    filter->setSourceModel(m_node->peers());
    m_clusterView = makeRowTable(filter);
    m_clusterView->setObjectName(QStringLiteral("clusterView"));
    layout->addWidget(m_clusterView, 1);
    auto* row = new QHBoxLayout;
    auto* pair = new QPushButton(tr("Pair a machine…"));
    auto* unpair = new QPushButton(tr("Unpair"));
    unpair->setObjectName(QStringLiteral("unpairButton"));
    row->addWidget(pair);
    row->addStretch();
    row->addWidget(unpair);
    layout->addLayout(row);
    connect(pair, &QPushButton::clicked, this, &MainWindow::showWizard);
    connect(unpair, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_clusterView->selectionModel()->selectedRows();
        if (rows.isEmpty() || rows.first().data(PeerModel::SelfRole).toBool())
            return;
        const QString id = rows.first().data(PeerModel::DeviceIdRole).toString();
        const QString name = rows.first().data().toString();
        if (confirm(tr("Unpair"),
                    tr("Unpair %1? It can no longer train with this machine until you pair the "
                       "two again.")
                        .arg(name),
                    tr("Unpair")))
            m_node->unpair(id);
    });
    return w;
}

QWidget* MainWindow::buildHistoryTab() {
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    m_historyView = makeRowTable(m_history);
    m_historyView->setObjectName(QStringLiteral("historyView"));
    layout->addWidget(m_historyView, 1);
    auto* row = new QHBoxLayout;
    auto* exportTs = new QPushButton(tr("Export TorchScript…"));
    auto* exportSt = new QPushButton(tr("Export safetensors…"));
    auto* resume = new QPushButton(tr("Resume run"));
    auto* open = new QPushButton(tr("Open folder"));
    resume->setObjectName(QStringLiteral("resumeRunButton"));
    for (QPushButton* b : {exportTs, exportSt, resume, open})
        row->addWidget(b);
    row->addStretch();
    layout->addLayout(row);
    connect(exportTs, &QPushButton::clicked, this,
            [this] { exportSelected(ExportFormat::TorchScript); });
    connect(exportSt, &QPushButton::clicked, this,
            [this] { exportSelected(ExportFormat::Safetensors); });
    connect(resume, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            resumeRun(rows.first().row());
    });
    connect(open, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            QDesktopServices::openUrl(
                QUrl::fromLocalFile(rows.first().data(HistoryModel::FolderRole).toString()));
    });
    return w;
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&Tandem"));
    file->addAction(tr("&Load run description…"), this, &MainWindow::loadDescription);
    file->addAction(tr("&Save run description…"), this, &MainWindow::saveDescription);
    file->addSeparator();
    file->addAction(tr("S&ettings…"), this, &MainWindow::openSettings);
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close);
    QMenu* machines = menuBar()->addMenu(tr("&Machines"));
    machines->addAction(tr("Set up &pairing…"), this, &MainWindow::showWizard);
    machines->addAction(tr("&Add a machine by address…"), this, [this] {
        QInputDialog d(this);
        d.setWindowTitle(tr("Add a machine"));
        d.setLabelText(tr("IP address or host name of the machine:"));
        // Our own button texts: Qt ships no translation of its own for every language here.
        d.setOkButtonText(tr("Add"));
        d.setCancelButtonText(tr("Cancel"));
        if (d.exec() == QDialog::Accepted && !d.textValue().trimmed().isEmpty())
            m_node->addAddress(d.textValue().trimmed());
    });
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("User &guide"), this, [] {
        QDesktopServices::openUrl(QUrl(QStringLiteral("https://tandem.invalid/docs/")));
    });
    help->addAction(tr("&About Tandem"), this, [this] {
        QMessageBox::about(this, tr("About Tandem"),
                           tr("Tandem %1\nTrains one PyTorch model across your own machines.\n"
                              "Protocol version %2.")
                               .arg(appVersion())
                               .arg(wire::kProtocolVersion));
    });
}

QString MainWindow::bannerText() const {
    return m_banner->isVisible() ? m_bannerText->text() : QString();
}

void MainWindow::showBanner(BannerKind kind, const QString& text) {
    QPalette p = m_banner->palette();
    const QColor bg = kind == BannerKind::Error     ? QColor(0xfd, 0xe2, 0xe1)
                      : kind == BannerKind::Warning ? QColor(0xff, 0xf4, 0xce)
                                                    : QColor(0xdf, 0xf0, 0xd8);
    p.setColor(QPalette::Window, bg);
    p.setColor(QPalette::WindowText, Qt::black);
    m_banner->setPalette(p);
    m_bannerText->setText(text);
    m_banner->show();
    if (kind == BannerKind::Error)
        log(text);
}

void MainWindow::log(const QString& line) {
    m_log->appendPlainText(QStringLiteral("%1  %2").arg(
        QLocale().toString(QTime::currentTime(), QStringLiteral("HH:mm:ss")), line));
}

QString MainWindow::explainError(const QString& message) const {
    const QString lower = message.toLower();
    if (lower.contains(QLatin1String("out of memory")))
        return tr("A device ran out of memory (%1). Lower the batch size or leave that machine "
                  "out, then start again.")
            .arg(message);
    if (lower.contains(QLatin1String("dataset")) || lower.contains(QLatin1String("idx")) ||
        lower.contains(QLatin1String("csv")) || lower.contains(QLatin1String("cifar")))
        return tr("The dataset cannot be used: %1. Check the folder or file and its format "
                  "(the user guide lists the formats).")
            .arg(message);
    if (lower.contains(QLatin1String("model")) || lower.contains(QLatin1String("torchscript")))
        return tr("The model cannot be used: %1. Save it with torch.jit.save after "
                  "torch.jit.script, and check that it returns class scores.")
            .arg(message);
    if (lower.contains(QLatin1String("not paired")) || lower.contains(QLatin1String("version")))
        return tr("A machine could not join: %1.").arg(message);
    return tr("The run stopped with an error: %1").arg(message);
}

void MainWindow::startRun() {
    if (m_run->active() || m_startPending)
        return;
    m_banner->hide();
    m_startPending = true;
    m_start->setEnabled(false);
    m_progressText->setText(tr("Checking the model and the dataset…"));
    m_form->check();
}

void MainWindow::launch(RunConfig config, const QString& resumeFrom) {
    if (resumeFrom.isEmpty()) {
        const QString stamp =
            QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
        QString folder =
            QDir(m_ctx.settings.effectiveRunsFolder(m_ctx.home))
                .filePath(stamp + QLatin1Char('-') + QFileInfo(config.model).completeBaseName());
        for (int i = 2; QFileInfo::exists(folder); ++i)
            folder = folder.section(QLatin1Char('~'), 0, 0) + QStringLiteral("~%1").arg(i);
        config.outDir = folder;
    }
    config.home = m_ctx.home;
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
    QJsonObject record = startRecord(config);
    if (!resumeFrom.isEmpty()) {
        const QJsonObject old = HistoryModel::readRecord(m_runFolder);
        if (old.contains(QStringLiteral("started")))
            record.insert(QStringLiteral("started"), old.value(QStringLiteral("started")));
    }
    HistoryModel::writeRecord(m_runFolder, record);
    m_history->setActiveFolder(m_runFolder);
    m_history->reload();
    m_charts->reset();
    m_firstStep = -1;
    m_last = StepMetrics{};
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
    auto c = checkpointConfig(checkpoint);
    if (!c) {
        showBanner(BannerKind::Error, tr("Cannot resume: %1").arg(c.error().message));
        return;
    }
    RunConfig config = *c;
    config.maxSteps = 0;
    config.outDir = i.data(HistoryModel::FolderRole).toString();
    launch(config, checkpoint);
}

void MainWindow::updateControls() {
    using S = TrainingRun::State;
    const S s = m_run->state();
    const bool busy = m_run->active() || m_startPending;
    m_start->setEnabled(!busy);
    m_pause->setEnabled(s == S::Running);
    m_resume->setEnabled(s == S::Paused);
    m_stop->setEnabled(s == S::Running || s == S::Paused);
    m_form->setEnabled(!busy);
}

void MainWindow::onStep(const StepMetrics& m) {
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
    m_node->peers()->setRunStats(m.workers, m.stepMs);
    const double fraction = m.totalSteps > 0 ? double(m.step) / double(m.totalSteps) : 0;
    m_progress->setValue(int(1000 * fraction));
    const int64_t done = m.step - m_firstStep;
    const double eta = done > 0 ? m.elapsedS / double(done) * double(m.totalSteps - m.step) : -1;
    const int epochs =
        m.stepsPerEpoch > 0 ? int((m.totalSteps + m.stepsPerEpoch - 1) / m.stepsPerEpoch) : 0;
    if (m_run->state() != TrainingRun::State::Running)
        return; // the paused/stopping text stays
    m_progressText->setText(tr("Epoch %1 of %2 · step %3 of %4 · elapsed %5 · about %6 left · "
                               "%7 samples/s · loss %8")
                                .arg(m.epoch + 1)
                                .arg(epochs)
                                .arg(m.step)
                                .arg(m.totalSteps)
                                .arg(clockText(m.elapsedS), clockText(eta),
                                     QLocale().toString(m.samplesPerS, 'f', 0),
                                     QLocale().toString(m.loss, 'f', 4)));
}

void MainWindow::onFinished(const RunSummary& s) {
    m_node->setBusy(false);
    m_node->peers()->setRunStats({}, 0);
    QJsonObject record = HistoryModel::readRecord(m_runFolder);
    record.insert(QStringLiteral("status"),
                  s.finished ? QStringLiteral("finished") : QStringLiteral("stopped"));
    record.insert(QStringLiteral("summary"), s.toJson());
    record.insert(QStringLiteral("ended"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    HistoryModel::writeRecord(m_runFolder, record);
    m_history->setActiveFolder(QString());
    m_history->reload();
    const QString accuracy =
        s.testAccuracy >= 0 ? QLocale().toString(100 * s.testAccuracy, 'f', 2) + QLatin1Char('%')
                            : tr("not measured yet");
    if (s.finished) {
        m_progress->setValue(1000);
        m_progressText->setText(tr("Finished: test accuracy %1, %2 samples/s.")
                                    .arg(accuracy, QLocale().toString(s.samplesPerS, 'f', 0)));
        showBanner(BannerKind::Info, tr("The run finished with test accuracy %1. Export the "
                                        "model from History.")
                                         .arg(accuracy));
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
    QJsonObject record = HistoryModel::readRecord(m_runFolder);
    record.insert(QStringLiteral("status"), QStringLiteral("failed"));
    record.insert(QStringLiteral("error"), e.message);
    HistoryModel::writeRecord(m_runFolder, record);
    m_history->setActiveFolder(QString());
    m_history->reload();
    m_progressText->setText(tr("The run failed."));
    showBanner(BannerKind::Error, explainError(e.message));
    updateControls();
    if (m_quitAfterRun)
        close();
}

void MainWindow::exportSelected(ExportFormat format) {
    const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        showBanner(BannerKind::Info, tr("Choose a run in History first."));
        return;
    }
    const bool ts = format == ExportFormat::TorchScript;
    const QString suggested =
        QDir(QDir::homePath())
            .filePath(QFileInfo(rows.first().data(HistoryModel::FolderRole).toString()).fileName() +
                      (ts ? QStringLiteral(".pt") : QStringLiteral(".safetensors")));
    const QString path = QFileDialog::getSaveFileName(
        this, ts ? tr("Export as TorchScript") : tr("Export as safetensors"), suggested,
        ts ? tr("TorchScript (*.pt)") : tr("safetensors (*.safetensors)"));
    if (!path.isEmpty())
        exportRun(rows.first().row(), format, path);
}

void MainWindow::exportRun(int row, ExportFormat format, const QString& path) {
    const QString checkpoint =
        m_history->index(row, 0).data(HistoryModel::CheckpointRole).toString();
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
    m_exportThread.reset(QThread::create([self, checkpoint, format, path] {
        const Status st = exportCheckpoint(checkpoint, format, path);
        const QString err = st ? QString() : st.error().message;
        QMetaObject::invokeMethod(
            qApp,
            [self, err, path] {
                if (!self)
                    return;
                if (err.isEmpty()) {
                    const QString m =
                        tr("Exported to %1. In Python: %2")
                            .arg(QDir::toNativeSeparators(path),
                                 path.endsWith(QLatin1String(".pt"))
                                     ? QStringLiteral("torch.jit.load(path)")
                                     : QStringLiteral("safetensors.torch.load_file(path)"));
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

void MainWindow::onPairingQuestion(const PairingQuestion& q) {
    if (m_wizard && m_wizard->handlesPairing())
        return;
    // Another machine started pairing with this one.
    auto* box = new QMessageBox(
        QMessageBox::Question, tr("Pair with %1?").arg(q.peerName),
        tr("%1 (%2) wants to pair with this machine.\n\nDoes it show "
           "this code?\n\n%3 %4")
            .arg(q.peerName, q.peerAddress, pairingCodeFirst(q.code), pairingCodeSecond(q.code)),
        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("pairQuestion"));
    auto* yes = box->addButton(tr("The codes match"), QMessageBox::YesRole);
    box->addButton(tr("The codes differ"), QMessageBox::NoRole);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this,
            [this, box, yes] { m_node->answerPairing(box->clickedButton() == yes); });
    box->open();
}

SetupWizard* MainWindow::wizard() const {
    return m_wizard.data();
}

void MainWindow::showWizard() {
    if (!m_wizard) {
        m_wizard = new SetupWizard(m_node, m_ctx.node.devices,
                                   m_ctx.settings.nodeName.isEmpty() ? QSysInfo::machineHostName()
                                                                     : m_ctx.settings.nodeName,
                                   this);
        m_wizard->setAttribute(Qt::WA_DeleteOnClose);
        connect(m_wizard, &QWizard::accepted, this, [this] {
            const QString name = m_wizard->machineName();
            m_ctx.settings.wizardDone = true;
            if (name != QSysInfo::machineHostName() || !m_ctx.settings.nodeName.isEmpty())
                m_ctx.settings.nodeName = name;
            m_ctx.settings.save(m_ctx.home);
            m_node->setName(name);
            m_node->peers()->setSelf(name, m_ctx.node.devices);
            m_tabs->setCurrentIndex(1);
        });
    }
    m_wizard->show();
    m_wizard->raise();
}

void MainWindow::openSettings() {
    SettingsDialog d(m_ctx.settings, m_ctx.home, this);
    if (d.exec() != QDialog::Accepted)
        return;
    AppSettings s = d.settings();
    if (s.runsFolder == AppSettings{}.effectiveRunsFolder(m_ctx.home))
        s.runsFolder.clear();
    if (s.cacheFolder == AppSettings{}.effectiveCacheFolder(m_ctx.home))
        s.cacheFolder.clear();
    s.save(m_ctx.home);
    m_ctx.settings = s;
    m_node->setName(s.nodeName.isEmpty() ? QSysInfo::machineHostName() : s.nodeName);
    m_node->setAcceptWork(s.acceptWork);
    m_node->setCacheDir(s.effectiveCacheFolder(m_ctx.home));
    m_node->peers()->setSelf(s.nodeName.isEmpty() ? QSysInfo::machineHostName() : s.nodeName,
                             m_ctx.node.devices);
    m_history->setFolder(s.effectiveRunsFolder(m_ctx.home));
}

void MainWindow::saveDescription() {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save run description"), QStringLiteral("run.json"),
                                     tr("Run description (*.json)"));
    if (path.isEmpty())
        return;
    if (auto st = m_form->saveTo(path); !st)
        showBanner(BannerKind::Error, st.error().message);
    else
        log(tr("Saved the run description to %1; train it with: tandem train --config %1")
                .arg(path));
}

void MainWindow::loadDescription() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load run description"), QString(),
                                                      tr("Run description (*.json)"));
    if (path.isEmpty())
        return;
    if (auto st = m_form->loadFrom(path); !st)
        showBanner(BannerKind::Error, st.error().message);
    else
        m_tabs->setCurrentIndex(1);
}

void MainWindow::updateTray() {
    if (!m_tray)
        return;
    using S = TrainingRun::State;
    QString status;
    switch (m_run->state()) {
    case S::Running:
        status = tr("Training");
        break;
    case S::Paused:
        status = tr("Paused");
        break;
    case S::Stopping:
        status = tr("Stopping");
        break;
    case S::Idle:
    case S::Finished:
    case S::Stopped:
    case S::Failed:
        status = tr("Idle");
        break;
    }
    m_tray->setToolTip(QStringLiteral("Tandem: ") + status);
}

bool MainWindow::confirm(const QString& title, const QString& text, const QString& action) {
    // Buttons with our own translated words: Qt has no translation of Yes/No for some of the
    // languages Tandem speaks (Hindi).
    QMessageBox box(QMessageBox::Question, title, text, QMessageBox::NoButton, this);
    QPushButton* yes = box.addButton(action, QMessageBox::AcceptRole);
    box.addButton(tr("Cancel"), QMessageBox::RejectRole);
    box.setDefaultButton(yes);
    box.exec();
    return box.clickedButton() == yes;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!m_run->active()) {
        event->accept();
        return;
    }
    if (!m_quitAfterRun &&
        !confirm(tr("Quit Tandem"),
                 tr("A run is in progress. Stop it (a checkpoint is saved, so it can be resumed) "
                    "and quit?"),
                 tr("Stop and quit"))) {
        event->ignore();
        return;
    }
    m_quitAfterRun = true;
    m_run->stop();
    event->ignore(); // closes when the run has saved its checkpoint
}

} // namespace tandem::ui
