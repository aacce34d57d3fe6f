// What the window keeps and reopens: the New run form and the window's geometry across
// restarts (ui-state.ini in the node's home, apart from the Settings dialog's file), run
// descriptions, a past run's charts from its folder, and the question before quitting during
// a run.

#include "engine/runhistory.h"
#include "engine/trainingrun.h"
#include "ui/chartpanel.h"
#include "ui/comparedialog.h"
#include "ui/historymodel.h"
#include "ui/mainwindow.h"
#include "ui/ollama.h"
#include "ui/runform.h"

#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>

#include <algorithm>

namespace tandem::ui {

namespace {
const QString kGeometry = QStringLiteral("window/geometry");
const QString kForm = QStringLiteral("form/config");
const QString kExportFolder = QStringLiteral("export/folder");
} // namespace

QString MainWindow::uiStatePath() const {
    return QDir(m_ctx.home).filePath(QStringLiteral("ui-state.ini"));
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
    saveUiState();
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

void MainWindow::restoreUiState() {
    QSettings s(uiStatePath(), QSettings::IniFormat);
    const QByteArray geometry = s.value(kGeometry).toByteArray();
    if (!geometry.isEmpty())
        restoreGeometry(geometry);
    // The form as the last run started, or as it was when the window closed.
    const QJsonObject form = QJsonDocument::fromJson(s.value(kForm).toByteArray()).object();
    if (!form.isEmpty())
        if (auto c = RunForm::fromDescription(form))
            m_form->setConfig(*c);
}

void MainWindow::saveUiState() const {
    QSettings s(uiStatePath(), QSettings::IniFormat);
    s.setValue(kGeometry, saveGeometry());
    s.setValue(kForm, QJsonDocument(m_form->description()).toJson(QJsonDocument::Compact));
}

QString MainWindow::exportFolder() const {
    const QString kept =
        QSettings(uiStatePath(), QSettings::IniFormat).value(kExportFolder).toString();
    return !kept.isEmpty() && QFileInfo(kept).isDir() ? kept : QDir::homePath();
}

void MainWindow::rememberExportFolder(const QString& path) const {
    QSettings(uiStatePath(), QSettings::IniFormat)
        .setValue(kExportFolder, QFileInfo(path).absolutePath());
}

void MainWindow::showRunCharts(const QString& folder) {
    if (folder.isEmpty() || folder == m_chartsFolder || m_run->active() || m_lending.active)
        return;
    auto curves = RunHistory::curves(folder);
    if (!curves)
        return;
    m_chartsFolder = folder;
    m_charts->showLentView(false);
    m_charts->reset(curves->task, curves->epochs, curves->tokensPerSample);
    for (const StepMetrics& m : curves->steps)
        m_charts->addStep(m);
    for (const EpochMetrics& e : curves->epochEnds)
        m_charts->addEpoch(e);
}

void MainWindow::newRunLike(int row) {
    const QModelIndex i = m_history->index(row, 0);
    const QString folder = i.data(HistoryModel::FolderRole).toString();
    const QJsonObject config = i.data(HistoryModel::ConfigRole).toJsonObject();
    auto c = RunConfig::fromJson(config);
    if (config.isEmpty() || !c) {
        showBanner(BannerKind::Error, tr("That run's record has no settings to start from: %1")
                                          .arg(config.isEmpty() ? folder : c.error().message));
        return;
    }
    // A new run: its own folder, from the start.
    c->outDir.clear();
    m_form->setConfig(*c);
    m_tabs->setCurrentIndex(1);
}

void MainWindow::addNotesAndCompare(QHBoxLayout* row) {
    m_notesButton = new QPushButton(tr("Notes…"));
    m_notesButton->setObjectName(QStringLiteral("notesButton"));
    m_compareButton = new QPushButton(tr("Compare"));
    m_compareButton->setObjectName(QStringLiteral("compareButton"));
    m_compareButton->setToolTip(tr("Choose two or more runs (Ctrl+click) to see their curves "
                                   "and settings side by side."));
    row->addWidget(m_notesButton);
    row->addWidget(m_compareButton);
    connect(m_notesButton, &QPushButton::clicked, this, [this] {
        const QModelIndexList rows = m_historyView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            editNotes(rows.first().row());
    });
    connect(m_compareButton, &QPushButton::clicked, this, [this] {
        QList<int> rows;
        for (const QModelIndex& i : m_historyView->selectionModel()->selectedRows())
            rows << i.row();
        std::sort(rows.begin(), rows.end());
        if (rows.size() >= 2)
            compareRuns(rows)->show();
    });
}

void MainWindow::handOnGguf(const QString& path) {
    const QFileInfo f(path);
    const QString byHand = QStringLiteral("ollama create %1 -f %2")
                               .arg(f.completeBaseName().toLower(),
                                    QDir::toNativeSeparators(f.absoluteDir().filePath(
                                        f.completeBaseName() + QStringLiteral(".Modelfile"))));
    const QString exported = tr("Exported to %1.").arg(QDir::toNativeSeparators(path));
    if (OllamaRegistrar::program().isEmpty()) {
        const QString m = exported + QLatin1Char(' ') +
                          tr("Ollama is not installed on this machine; where it is: %1. LM "
                             "Studio and llama.cpp open the file as it is.")
                              .arg(byHand);
        showBanner(BannerKind::Info, m);
        Q_EMIT exportFinished(true, m);
        return;
    }
    auto* ollama = new OllamaRegistrar(this);
    connect(ollama, &OllamaRegistrar::finished, this,
            [this, ollama, exported, byHand](bool ok, const QString& name, const QString& out) {
                ollama->deleteLater();
                if (ok)
                    showBanner(BannerKind::Info,
                               exported + QLatin1Char(' ') +
                                   tr("Added to Ollama as %1: ollama run %1").arg(name));
                else
                    showBanner(
                        BannerKind::Error,
                        exported + QLatin1Char(' ') +
                            tr("Ollama could not add it (%1). By hand: %2").arg(out, byHand));
                Q_EMIT ollamaFinished(ok, name);
            });
    ollama->add(path);
    const QString m =
        exported + QLatin1Char(' ') +
        tr("Adding it to Ollama as %1…").arg(QFileInfo(path).completeBaseName().toLower());
    showBanner(BannerKind::Info, m);
    Q_EMIT exportFinished(true, m);
}

void MainWindow::editNotes(int row) {
    const QModelIndex i = m_history->index(row, HistoryModel::Name);
    bool ok = false;
    const QString notes = QInputDialog::getMultiLineText(
        this, tr("Notes on %1").arg(i.data().toString()),
        tr("What to remember of this run (shown in History and when comparing runs):"),
        i.data(HistoryModel::NotesRole).toString(), &ok);
    if (ok)
        m_history->setData(i, notes, HistoryModel::NotesRole);
}

CompareDialog* MainWindow::compareRuns(const QList<int>& rows) {
    auto* dialog = new CompareDialog(m_history, rows, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    return dialog;
}

} // namespace tandem::ui
