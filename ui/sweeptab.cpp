#include "ui/sweeptab.h"

#include "common/ports.h"
#include "engine/runhistory.h"
#include "ui/livechart.h"
#include "ui/peermodel.h"
#include "ui/wheelguard.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace tandem::ui {

namespace {

enum Column { TrialCol, ParamsCol, DeviceCol, StatusCol, FirstRungCol };

QColor trialColor(int trial) {
    // Hues spread by the golden angle, so neighbouring trials differ.
    return QColor::fromHsv(int(std::fmod(trial * 137.508, 360.0)), 170, 200);
}

} // namespace

SweepTab::SweepTab(PeerModel* peers, const QString& home, const QString& sweepsFolder,
                   QWidget* parent)
    : QWidget(parent)
    , m_peers(peers)
    , m_home(home)
    , m_sweepsFolder(sweepsFolder)
    , m_program(QCoreApplication::applicationFilePath()) {
    m_file = new QLineEdit;
    m_file->setObjectName(QStringLiteral("sweepFile"));
    m_file->setPlaceholderText(tr("A sweep description (JSON): a run with a \"sweep\" object"));
    auto* browse = new QPushButton(tr("Open…"));
    m_folder = new QLineEdit;
    m_folder->setObjectName(QStringLiteral("sweepFolder"));
    m_folder->setToolTip(tr("Where the trials' run folders and sweep.jsonl go"));
    m_usePeers = new QCheckBox(tr("Paired machines run trials too"));
    m_usePeers->setObjectName(QStringLiteral("sweepUsePeers"));
    m_usePeers->setChecked(true);
    m_start = new QPushButton(tr("Start sweep"));
    m_resume = new QPushButton(tr("Continue"));
    m_resume->setToolTip(tr("Continue the sweep in this folder: finished trials are kept, "
                            "interrupted ones resume from their checkpoints"));
    m_stop = new QPushButton(tr("Stop"));
    m_export = new QPushButton(tr("Export best…"));
    m_start->setObjectName(QStringLiteral("sweepStart"));
    m_resume->setObjectName(QStringLiteral("sweepResume"));
    m_stop->setObjectName(QStringLiteral("sweepStop"));
    m_export->setObjectName(QStringLiteral("sweepExport"));
    m_status = new QLabel(tr("Open a sweep file to start."));
    m_status->setObjectName(QStringLiteral("sweepStatus"));
    m_status->setWordWrap(true);

    m_table = new QTableWidget(0, FirstRungCol);
    m_table->setObjectName(QStringLiteral("sweepTable"));
    m_table->setHorizontalHeaderLabels({tr("Trial"), tr("Parameters"), tr("Device"), tr("Status")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(ParamsCol, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);

    m_curves = new LiveChart(LiveChart::Kind::Lines);
    m_curves->setObjectName(QStringLiteral("sweepCurves"));
    m_curves->setPointsVisible(true);
    m_curves->setLegendVisible(false); // one series a trial: the table says which is which
    m_scatter = new LiveChart(LiveChart::Kind::Points);
    m_scatter->setObjectName(QStringLiteral("sweepScatter"));
    m_param = new QComboBox;
    m_param->setObjectName(QStringLiteral("sweepParam"));

    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(new QLabel(tr("Sweep file")));
    fileRow->addWidget(m_file, 2);
    fileRow->addWidget(browse);
    fileRow->addWidget(new QLabel(tr("Folder")));
    fileRow->addWidget(m_folder, 2);
    // The choice of machines on a line of its own: beside the buttons, its sentence held the
    // window wider than a laptop's.
    auto* buttons = new QHBoxLayout;
    buttons->addStretch();
    for (QPushButton* b : {m_start, m_resume, m_stop, m_export})
        buttons->addWidget(b);
    auto* scatterBox = new QWidget;
    auto* scatterLayout = new QVBoxLayout(scatterBox);
    scatterLayout->setContentsMargins(0, 0, 0, 0);
    auto* paramRow = new QHBoxLayout;
    paramRow->addWidget(new QLabel(tr("Parameter")));
    paramRow->addWidget(m_param, 1);
    scatterLayout->addLayout(paramRow);
    scatterLayout->addWidget(m_scatter, 1);
    auto* charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(m_curves);
    charts->addWidget(scatterBox);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(charts);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(fileRow);
    layout->addWidget(m_usePeers);
    layout->addLayout(buttons);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    connect(browse, &QPushButton::clicked, this, &SweepTab::chooseFile);
    connect(m_file, &QLineEdit::editingFinished, this, [this] {
        if (!m_file->text().isEmpty() && !running())
            openFile(m_file->text());
    });
    connect(m_start, &QPushButton::clicked, this, &SweepTab::start);
    connect(m_resume, &QPushButton::clicked, this, &SweepTab::resume);
    connect(m_stop, &QPushButton::clicked, this, &SweepTab::stop);
    connect(m_export, &QPushButton::clicked, this, [this] {
        if (const QString c = bestCheckpoint(); !c.isEmpty())
            Q_EMIT exportRequested(c, QFileInfo(m_folder->text()).fileName() +
                                          QStringLiteral("-best"));
    });
    connect(m_param, &QComboBox::currentIndexChanged, this, &SweepTab::refreshScatter);
    m_refresh.setInterval(1000);
    connect(&m_refresh, &QTimer::timeout, this, &SweepTab::readRunningCurves);
    guardWheel(this);
    updateButtons();
}

SweepTab::~SweepTab() = default;

void SweepTab::chooseFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a sweep description"),
                                                      QDir::homePath(), tr("JSON (*.json)"));
    if (!path.isEmpty())
        openFile(path);
}

bool SweepTab::openFile(const QString& path) {
    m_file->setText(path);
    auto c = SweepConfig::readFile(path);
    if (!c) {
        m_config.reset();
        m_status->setText(tr("This sweep file cannot be used: %1").arg(c.error().message));
        updateButtons();
        return false;
    }
    m_config = *c;
    QStringList keys;
    for (const SearchParam& p : c->space)
        keys << p.key;
    m_status->setText(
        tr("%n trial(s), %1, searching %2. Results go to the folder above.", "", c->trialCount())
            .arg(nameOf(c->scheduler), keys.join(QStringLiteral(", "))));
    if (!running())
        m_folder->setText(QDir(m_sweepsFolder)
                              .filePath(QDateTime::currentDateTime().toString(
                                            QStringLiteral("yyyyMMdd-HHmmss-")) +
                                        QFileInfo(c->baseRun.model).completeBaseName()));
    updateButtons();
    return true;
}

QStringList SweepTab::nodes(QStringList* names) const {
    QStringList out;
    if (!m_usePeers->isChecked() || !m_peers)
        return out;
    for (int row = 0; row < m_peers->rowCount(); ++row) {
        const QModelIndex i = m_peers->index(row, PeerModel::Machine);
        if (i.data(PeerModel::SelfRole).toBool() || !i.data(PeerModel::PairedRole).toBool() ||
            !i.data(PeerModel::OnlineRole).toBool())
            continue;
        out << hostPort(i.data(PeerModel::AddressRole).toString(),
                        quint16(i.data(PeerModel::PortRole).toUInt()));
        if (names)
            *names << i.data().toString();
    }
    return out;
}

void SweepTab::start() {
    if (running() || !m_config)
        return;
    if (QFileInfo::exists(QDir(m_folder->text()).filePath(QStringLiteral("sweep.json")))) {
        m_status->setText(tr("That folder already holds a sweep: press Continue to go on with "
                             "it, or choose another folder."));
        return;
    }
    launch(*m_config, {});
}

void SweepTab::resume() {
    if (running())
        return;
    auto loaded = SweepRunner::load(m_folder->text());
    if (!loaded) {
        m_status->setText(tr("Cannot continue: %1").arg(loaded.error().message));
        return;
    }
    m_config = loaded->first;
    launch(loaded->first, loaded->second);
}

void SweepTab::launch(const SweepConfig& config, const QList<TrialRecord>& resumed) {
    SweepOptions o;
    o.outDir = QDir(m_folder->text()).absolutePath();
    o.home = m_home;
    o.invites = nodes(&o.inviteNames);
    o.program = m_program;
    m_runner = std::make_unique<SweepRunner>(config, o);
    m_table->setRowCount(0);
    m_table->setColumnCount(FirstRungCol + int(config.rungs.size()));
    for (int r = 0; r < config.rungs.size(); ++r)
        m_table->setHorizontalHeaderItem(
            FirstRungCol + r, new QTableWidgetItem(tr("%n epoch(s)", "", config.rungs[r])));
    m_curves->removeAllSeries();
    m_curveOf.clear();
    m_readTo.clear();
    m_lastStep.clear();
    const QString metric =
        config.metric == QLatin1String("test_loss") ? tr("test loss") : tr("test accuracy");
    m_curves->setTitles(tr("Every trial"), tr("step"), metric);
    m_param->blockSignals(true);
    m_param->clear();
    for (const SearchParam& p : config.space)
        m_param->addItem(p.key);
    m_param->blockSignals(false);
    connect(m_runner.get(), &SweepRunner::message, this, &SweepTab::message);
    connect(m_runner.get(), &SweepRunner::trialChanged, this, &SweepTab::onTrial);
    connect(m_runner.get(), &SweepRunner::finished, this, [this](const QJsonObject& summary) {
        m_refresh.stop();
        updateStatus();
        updateButtons();
        Q_EMIT runningChanged(false);
        Q_EMIT finished(summary);
    });
    if (auto st = m_runner->start(resumed); !st) {
        m_status->setText(tr("The sweep did not start: %1").arg(st.error().message));
        m_runner.reset();
        updateButtons();
        return;
    }
    for (const TrialRecord& t : resumed)
        onTrial(t);
    m_refresh.start();
    updateStatus();
    updateButtons();
    Q_EMIT runningChanged(true);
}

void SweepTab::stop() {
    if (running())
        m_runner->stop();
}

QString SweepTab::bestCheckpoint() const {
    const int best = bestTrial();
    return best < 0 ? QString() : m_runner->checkpointOf(best);
}

int SweepTab::bestTrial() const {
    return m_runner ? m_runner->best() : -1;
}

QString SweepTab::statusText() const {
    return m_status->text();
}

QString SweepTab::statusName(TrialRecord::Status s) const {
    switch (s) {
    case TrialRecord::Status::Pending:
        return tr("queued");
    case TrialRecord::Status::Running:
        return tr("running");
    case TrialRecord::Status::Waiting:
        return tr("waiting for promotion");
    case TrialRecord::Status::Done:
        return tr("finished");
    case TrialRecord::Status::Stopped:
        return tr("stopped early");
    case TrialRecord::Status::Failed:
        return tr("failed");
    }
    return {};
}

void SweepTab::onTrial(const TrialRecord& t) {
    setRow(t);
    if (!m_curveOf.contains(t.id))
        m_curveOf.insert(t.id,
                         m_curves->addSeries(tr("trial %1").arg(t.id), trialColor(t.id), true));
    readCurve(t);
    emphasiseBest();
    refreshScatter();
    updateStatus();
    updateButtons();
}

void SweepTab::setRow(const TrialRecord& t) {
    if (m_table->rowCount() <= t.id)
        m_table->setRowCount(t.id + 1);
    auto set = [&](int col, const QString& text, const QString& tip = {}) {
        auto* item = new QTableWidgetItem(text);
        if (!tip.isEmpty())
            item->setToolTip(tip);
        m_table->setItem(t.id, col, item);
    };
    set(TrialCol, QString::number(t.id));
    set(ParamsCol, SweepConfig::paramsText(t.params));
    set(DeviceCol, t.device);
    set(StatusCol, statusName(t.status), t.error);
    for (int r = 0; r < m_table->columnCount() - FirstRungCol; ++r)
        set(FirstRungCol + r, r < t.metrics.size() && std::isfinite(t.metrics[r])
                                  ? QString::number(t.metrics[r], 'f', 4)
                                  : QString());
}

void SweepTab::readCurve(const TrialRecord& t) {
    // Only what the trial's metrics.jsonl gained since the last read.
    QFile f(QDir(m_runner->trialDir(t.id)).filePath(RunFiles::metrics()));
    if (!m_curveOf.contains(t.id) || !f.open(QIODevice::ReadOnly) ||
        f.size() <= m_readTo.value(t.id))
        return;
    f.seek(m_readTo.value(t.id));
    const QByteArray chunk = f.readAll();
    const qsizetype end = chunk.lastIndexOf('\n');
    if (end < 0)
        return;
    m_readTo[t.id] += end + 1;
    // Step lines carry the step; epoch lines the test metric at that step.
    const QString metric = m_runner->config().metric;
    for (const QByteArray& line : chunk.left(end).split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        const QString type = o.value(QStringLiteral("type")).toString();
        if (type == QLatin1String("step"))
            m_lastStep[t.id] = o.value(QStringLiteral("step")).toInteger();
        else if (type == QLatin1String("epoch"))
            m_curves->append(m_curveOf.value(t.id), double(m_lastStep.value(t.id)),
                             o.value(metric).toDouble());
    }
}

void SweepTab::readRunningCurves() {
    if (!m_runner)
        return;
    for (const TrialRecord& t : m_runner->trials())
        if (t.status == TrialRecord::Status::Running)
            readCurve(t);
}

void SweepTab::emphasiseBest() {
    const int best = bestTrial();
    for (auto it = m_curveOf.constBegin(); it != m_curveOf.constEnd(); ++it)
        m_curves->setFaint(it.value(), it.key() != best);
}

void SweepTab::refreshScatter() {
    if (!m_runner || m_param->currentIndex() < 0)
        return;
    const SearchParam& p = m_runner->config().space.at(m_param->currentIndex());
    const bool log = p.kind == SearchParam::Kind::LogUniform;
    QString xTitle = log ? tr("%1 (log10)").arg(p.key) : p.key;
    if (p.kind == SearchParam::Kind::Choice && !p.choices.first().isDouble()) {
        QStringList names;
        for (int i = 0; i < p.choices.size(); ++i)
            names << QStringLiteral("%1 = %2").arg(i).arg(p.choices[i].toString());
        xTitle = QStringLiteral("%1 (%2)").arg(p.key, names.join(QStringLiteral(", ")));
    }
    const QString metric = m_runner->config().metric == QLatin1String("test_loss")
                               ? tr("test loss")
                               : tr("test accuracy");
    m_scatter->removeAllSeries();
    m_scatter->setTitles(tr("%1 against %2").arg(metric, p.key), xTitle, metric);
    const int all = m_scatter->addSeries(tr("trials"), QColor(60, 120, 200), true);
    const int top = m_scatter->addSeries(tr("best"), QColor(220, 90, 30), false);
    const int best = bestTrial();
    for (const TrialRecord& t : m_runner->trials()) {
        if (t.metrics.isEmpty() || !std::isfinite(t.metrics.last()))
            continue;
        const QJsonValue v = t.params.value(p.key);
        double x = v.toDouble();
        if (v.isString())
            x = double(p.choices.toVariantList().indexOf(v.toString()));
        if (log)
            x = std::log10(x);
        m_scatter->append(t.id == best ? top : all, x, t.metrics.last());
    }
}

void SweepTab::updateStatus() {
    if (!m_runner)
        return;
    const QJsonObject s = m_runner->summary();
    int running = 0;
    for (const TrialRecord& t : m_runner->trials())
        running += t.status == TrialRecord::Status::Running;
    QString text = m_runner->ended()
                       ? (s.value(QStringLiteral("complete")).toBool()
                              ? tr("Finished: %n trial(s) in %1 s.", "",
                                   s.value(QStringLiteral("trials")).toInt())
                                    .arg(s.value(QStringLiteral("wall_s")).toDouble(), 0, 'f', 0)
                              : tr("Stopped; Continue resumes it from the checkpoints."))
                       : tr("%1 of %n trial(s) started; running: %2; devices: %3.", "",
                            m_runner->config().trialCount())
                             .arg(m_runner->trials().size())
                             .arg(running)
                             .arg(m_runner->devices().size());
    const QJsonObject best = s.value(QStringLiteral("best")).toObject();
    if (!best.isEmpty())
        text += QLatin1Char(' ') +
                tr("Best: trial %1 (%2), %3.")
                    .arg(best.value(QStringLiteral("trial")).toInt())
                    .arg(SweepConfig::paramsText(best.value(QStringLiteral("params")).toObject()))
                    .arg(best.value(m_runner->config().metric).toDouble(), 0, 'f', 4);
    m_status->setText(text);
}

void SweepTab::updateButtons() {
    m_start->setEnabled(!running() && m_config.has_value());
    m_resume->setEnabled(!running());
    m_stop->setEnabled(running());
    m_export->setEnabled(!bestCheckpoint().isEmpty());
    m_file->setEnabled(!running());
    m_folder->setEnabled(!running());
}

} // namespace tandem::ui
