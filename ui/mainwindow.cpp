#include "ui/mainwindow.h"

#include "common/version.h"
#include "engine/trainingrun.h"
#include "model/modelsource.h"
#include "ui/chartpanel.h"
#include "ui/comparedialog.h"
#include "ui/format.h"
#include "ui/historymodel.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/runform.h"
#include "ui/settingsdialog.h"
#include "ui/setupwizard.h"
#include "ui/sweeptab.h"
#include "ui/tables.h"

#include <QCloseEvent>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
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
#include <QScrollArea>
#include <QSplitter>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

namespace tandem::ui {

MainWindow::MainWindow(const WindowContext& context, QWidget* parent)
    : QMainWindow(parent)
    , m_ctx(context)
    , m_node(new NodeBridge(context.node, this))
    , m_run(new TrainingRun(this)) {
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("Tandem"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/tandem.png")));
    m_node->peers()->setSelf(shownName(), context.node.devices);
    m_history = new HistoryModel(this);
    m_history->setFolder(context.settings.effectiveRunsFolder(context.home));
    m_history->setHome(context.home);

    buildBanner();

    buildTabs();

    QWidget* right = buildRunPanel();
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_tabs);
    split->addWidget(right);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    // Halves: on a 1024-pixel window the New run form fits beside the charts in every language.
    split->setSizes({720, 720});
    // A sweep's table and charts are the left side's; the run panel gives them room while the
    // Sweep tab is open, and gives back what the left side had before (the other tabs keep
    // whatever width the user gave them).
    connect(m_tabs, &QTabWidget::currentChanged, this, [this, split, before = -1](int) mutable {
        const int total = split->sizes().value(0) + split->sizes().value(1);
        const bool sweep = m_tabs->currentWidget() == static_cast<QWidget*>(m_sweep);
        if (sweep && before < 0) {
            before = split->sizes().value(0);
            split->setSizes({total * 2 / 3, total - total * 2 / 3});
        } else if (!sweep && before >= 0) {
            split->setSizes({before, total - before});
            before = -1;
        }
    });

    m_log = new QPlainTextEdit;
    m_log->setObjectName(QStringLiteral("logView"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setPlaceholderText(tr("Log"));
    auto* vsplit = new QSplitter(Qt::Vertical);
    vsplit->addWidget(split);
    vsplit->addWidget(m_log);
    vsplit->setStretchFactor(0, 4);
    vsplit->setStretchFactor(1, 1);
    // The log opens seven lines high; the splitter's handle gives it more.
    const int logHeight = 7 * m_log->fontMetrics().lineSpacing() + 2 * m_log->frameWidth() + 8;
    vsplit->setSizes({std::max(400, 700 - logHeight), logHeight});

    auto* central = new QWidget;
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->addWidget(m_banner);
    centralLayout->addWidget(vsplit, 1);
    setCentralWidget(central);
    buildMenus();

    m_progressTimer.setSingleShot(true);
    m_progressTimer.setInterval(100);
    connect(&m_progressTimer, &QTimer::timeout, this, &MainWindow::showProgress);
    connectRun();
    connectNode();
    buildTray();
    updateControls();
    updateTray();
    resize(1280, 800);
    restoreUiState();
    if (m_history->rowCount() > 0)
        showRunCharts(m_history->index(0, 0).data(HistoryModel::FolderRole).toString());
    m_node->start();
}

void MainWindow::buildBanner() {
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
}

void MainWindow::buildTabs() {
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
    // The form is taller than a laptop's screen leaves the tab: it scrolls instead of holding
    // the window's height.
    auto* runScroll = new QScrollArea;
    runScroll->setObjectName(QStringLiteral("runScroll"));
    runScroll->setWidgetResizable(true);
    runScroll->setFrameShape(QFrame::NoFrame);
    runScroll->setWidget(runTab);
    m_tabs->addTab(runScroll, tr("New run"));
    m_tabs->addTab(buildHistoryTab(), tr("History"));
    m_tabs->addTab(buildSweepTab(), tr("Sweep"));
    m_tabs->setCurrentIndex(1);
}

QWidget* MainWindow::buildRunPanel() {
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
    m_stopLending = new QPushButton(tr("Stop lending"));
    m_stopLending->setObjectName(QStringLiteral("stopLendingButton"));
    m_stopLending->setToolTip(tr("End this machine's part in the other machine's run; the run "
                                 "goes on without it."));
    m_stopLending->hide();
    connect(m_stopLending, &QPushButton::clicked, this, [this] {
        m_stopLending->setEnabled(false);
        m_node->stopLending();
    });
    auto* controls = new QHBoxLayout;
    for (QPushButton* b : {m_start, m_pause, m_resume, m_stop, m_stopLending})
        controls->addWidget(b);
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("progressBar"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    controls->addWidget(m_progress, 1);
    m_progressText = new QLabel(demoReadyText());
    m_progressText->setObjectName(QStringLiteral("progressText"));
    m_progressText->setWordWrap(true);
    m_modeText = new QLabel;
    m_modeText->setObjectName(QStringLiteral("modeText"));
    m_modeText->setWordWrap(true);
    m_modeText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modeText->hide();
    m_charts = new ChartPanel;
    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addLayout(controls);
    rightLayout->addWidget(m_progressText);
    rightLayout->addWidget(m_modeText);
    rightLayout->addWidget(m_charts, 1);
    return right;
}

void MainWindow::connectNode() {
    connect(m_node, &NodeBridge::message, this, &MainWindow::log);
    connect(m_node, &NodeBridge::unpairedBy, this, [this](const QString& name) {
        showBanner(BannerKind::Info, tr("%1 unpaired this machine. To train together again, pair "
                                        "the two (Machines → Set up pairing).")
                                         .arg(name));
    });
    connect(m_node, &NodeBridge::failed, this, [this](const QString& m) {
        showBanner(BannerKind::Error,
                   tr("This machine cannot join the network: %1. Another program may use the "
                      "same ports; change them in Settings.")
                       .arg(m));
    });
    connect(m_node, &NodeBridge::started, this, [this](const QString& id, quint16 port) {
        m_node->peers()->setSelfId(id);
        log(tr("This machine is %1 (device %2), listening on port %3")
                .arg(shownName(), shortDeviceId(id))
                .arg(port));
    });
    connect(m_node, &NodeBridge::pairingQuestion, this, &MainWindow::onPairingQuestion);
    connect(m_node, &NodeBridge::pairingFinished, this,
            [this](bool paired, PairFailure, const QString& message) {
                log(message);
                if (paired && !(m_wizard && m_wizard->isVisible()))
                    showBanner(BannerKind::Info, tr("Paired: %1").arg(message));
            });
    connect(m_node, &NodeBridge::workerChanged, this, &MainWindow::onLendingChanged);
    connect(m_node, &NodeBridge::lendingEvent, this, &MainWindow::onLendingEvent);
}

void MainWindow::buildTray() {
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
    wrapLastColumn(m_clusterView);
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
    // Several runs to compare; a run's name is edited in place.
    m_historyView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_historyView->setEditTriggers(QAbstractItemView::DoubleClicked |
                                   QAbstractItemView::EditKeyPressed);
    layout->addWidget(m_historyView, 1);
    // The chosen run's folder (a long path takes no width from the window), and a new run
    // from its settings.
    m_historyFolder = new QLabel;
    m_historyFolder->setObjectName(QStringLiteral("historyFolder"));
    m_historyFolder->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_historyFolder->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(m_historyFolder, 1);
    addNotesAndCompare(folderRow);
    layout->addLayout(folderRow);
    auto* row = new QHBoxLayout;
    // One button for the formats, so that the row fits a laptop's window: TorchScript and
    // safetensors for any run, and for a Hugging Face model's run its folder (adapters
    // merged), PEFT's adapter folder, or one GGUF file for Ollama, LM Studio and llama.cpp.
    auto* exportButton = new QPushButton(tr("Export"));
    exportButton->setObjectName(QStringLiteral("exportButton"));
    auto* exportMenu = new QMenu(exportButton);
    QAction* exportTs = exportMenu->addAction(tr("Export TorchScript…"));
    QAction* exportSt = exportMenu->addAction(tr("Export safetensors…"));
    QAction* exportHf = exportMenu->addAction(tr("Export Hugging Face folder…"));
    QAction* exportPeft = exportMenu->addAction(tr("Export adapters (PEFT)…"));
    QAction* exportGguf = exportMenu->addAction(tr("Export for Ollama / llama.cpp…"));
    exportButton->setMenu(exportMenu);
    auto* resume = new QPushButton(tr("Resume run"));
    auto* open = new QPushButton(tr("Open folder"));
    open->setObjectName(QStringLiteral("openFolderButton"));
    auto* tryIt = new QPushButton(tr("Try it…"));
    auto* like = new QPushButton(tr("New run like this"));
    like->setObjectName(QStringLiteral("likeThisButton"));
    like->setToolTip(tr("Puts this run's settings in the New run form."));
    resume->setObjectName(QStringLiteral("resumeRunButton"));
    tryIt->setObjectName(QStringLiteral("tryButton"));
    tryIt->setToolTip(tr("Let a language model continue a prompt of yours."));
    for (QPushButton* b : {exportButton, resume, open, tryIt})
        row->addWidget(b);
    folderRow->addWidget(like);
    row->addStretch();
    layout->addLayout(row);
    connect(exportTs, &QAction::triggered, this,
            [this] { exportSelected(ExportFormat::TorchScript); });
    connect(exportSt, &QAction::triggered, this,
            [this] { exportSelected(ExportFormat::Safetensors); });
    connect(exportHf, &QAction::triggered, this, [this] { exportSelected(ExportFormat::Hf); });
    connect(exportPeft, &QAction::triggered, this, [this] { exportSelected(ExportFormat::Peft); });
    connect(exportGguf, &QAction::triggered, this, [this] { exportSelected(ExportFormat::Gguf); });
    connect(resume, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            resumeRun(rows.first().row());
    });
    connect(tryIt, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            tryRun(rows.first().row());
    });
    connect(like, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            newRunLike(rows.first().row());
    });
    connect(m_historyView->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            showRunCharts(rows.first().data(HistoryModel::FolderRole).toString());
    });
    // Only a language model's run (a sequence task) can continue a text, and only a run that
    // ended before its last step (stopped, failed, interrupted) with a checkpoint can resume.
    const auto selectedCan = [this, tryIt, resume, like, exportButton, exportTs, exportSt, exportHf,
                              exportPeft, exportGguf] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        const QModelIndex row = rows.isEmpty() ? QModelIndex() : rows.first();
        m_historyFolder->setText(
            row.isValid()
                ? tr("Folder: %1")
                      .arg(QDir::toNativeSeparators(row.data(HistoryModel::FolderRole).toString()))
                : QString());
        // A run this machine lent its device to left its model on the machine that ran it.
        const bool lent = row.isValid() && row.data(HistoryModel::LentRole).toBool();
        exportButton->setEnabled(!lent);
        exportButton->setToolTip(lent ? tr("This machine lent its device to that run; its "
                                           "model is on the machine that ran it.")
                                      : QString());
        // The export menu offers what the run's model can be written as: TorchScript and
        // safetensors for a TorchScript model, a folder, GGUF and (with adapters) PEFT's
        // folder for a Hugging Face one.
        const bool hf = row.isValid() &&
                        ModelSource::parse(row.data(HistoryModel::ModelRole).toString()).isHf();
        for (QAction* a : {exportTs, exportSt})
            a->setVisible(!hf);
        for (QAction* a : {exportHf, exportGguf})
            a->setVisible(hf);
        exportPeft->setVisible(hf && row.data(HistoryModel::AdaptersRole).toBool());
        tryIt->setEnabled(row.isValid() &&
                          row.data(HistoryModel::TaskRole).toString() ==
                              QLatin1String("sequence") &&
                          !row.data(HistoryModel::CheckpointRole).toString().isEmpty());
        resume->setEnabled(row.isValid() && row.data(HistoryModel::ResumableRole).toBool());
        like->setEnabled(row.isValid() && !row.data(HistoryModel::LentRole).toBool());
        m_notesButton->setEnabled(rows.size() == 1);
        m_compareButton->setEnabled(rows.size() >= 2);
    };
    connect(m_historyView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            selectedCan);
    connect(m_history, &QAbstractItemModel::modelReset, this, selectedCan);
    selectedCan();
    connect(open, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (rows.isEmpty())
            return;
        const QString folder = rows.first().data(HistoryModel::FolderRole).toString();
        if (!QDesktopServices::openUrl(QUrl::fromLocalFile(folder)))
            showBanner(BannerKind::Info,
                       tr("No file manager opened the folder. The run's files are in %1")
                           .arg(QDir::toNativeSeparators(folder)));
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

void MainWindow::onPairingQuestion(const PairingQuestion& q) {
    if (m_wizard && m_wizard->handlesPairing())
        return;
    // Another machine started pairing with this one.
    auto* box = new QMessageBox(QMessageBox::Question, tr("Pair with %1?").arg(q.peerName),
                                tr("%1 (%2) wants to pair with this machine.\n\nDoes it show "
                                   "this code?\n\n%3 %4")
                                    .arg(q.peerName, tr("device %1").arg(shortDeviceId(q.peerId)),
                                         pairingCodeFirst(q.code), pairingCodeSecond(q.code)),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("pairQuestion"));
    // Names repeat (two machines called "vm"); the device ID tells them apart, and the address
    // is a detail for whoever needs it.
    box->setDetailedText(tr("Device ID: %1\nAddress: %2").arg(q.peerId, q.peerAddress));
    auto* yes = box->addButton(tr("The codes match"), QMessageBox::YesRole);
    box->addButton(tr("The codes differ"), QMessageBox::NoRole);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this,
            [this, box, yes] { m_node->answerPairing(box->clickedButton() == yes); });
    box->open();
}

QString MainWindow::shownName() const {
    return m_ctx.settings.nodeName.isEmpty() ? QSysInfo::machineHostName()
                                             : m_ctx.settings.nodeName;
}

// Other machines see the new name at once: the node announces it, and pairing and the runs
// this machine joins use it. A name other than the host's is kept in the settings.
void MainWindow::applyName(const QString& name) {
    if (name.isEmpty())
        return;
    if (name != QSysInfo::machineHostName() || !m_ctx.settings.nodeName.isEmpty())
        m_ctx.settings.nodeName = name;
    m_ctx.settings.save(m_ctx.home);
    m_node->setName(name);
    m_node->peers()->setSelf(name, m_ctx.node.devices);
}

SetupWizard* MainWindow::wizard() const {
    return m_wizard.data();
}

void MainWindow::showWizard() {
    if (!m_wizard) {
        m_wizard = new SetupWizard(m_node, m_ctx.node.devices, shownName(), this);
        m_wizard->setAttribute(Qt::WA_DeleteOnClose);
        connect(m_wizard, &SetupWizard::nameChosen, this, &MainWindow::applyName);
        connect(m_wizard, &QWizard::accepted, this, [this] {
            m_ctx.settings.wizardDone = true;
            applyName(m_wizard->machineName());
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
    m_node->setAcceptWork(s.acceptWork);
    m_node->setCacheDir(s.effectiveCacheFolder(m_ctx.home));
    m_node->setModelsDir(s.modelsFolder);
    applyName(shownName());
    m_history->setFolder(s.effectiveRunsFolder(m_ctx.home));
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
        status = m_lending.active ? tr("Training for %1").arg(m_lending.coordinator) : tr("Idle");
        break;
    }
    m_tray->setToolTip(QStringLiteral("Tandem: ") + status);
}

} // namespace tandem::ui
