#pragma once

#include "engine/training.h"
#include "node/nodeservice.h"
#include "ui/appsettings.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <memory>

class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSystemTrayIcon;
class QTableView;
class QTabWidget;
class QThread;

namespace tandem {
class TrainingRun;
struct Error;
} // namespace tandem

namespace tandem::ui {

class ChartPanel;
class CompareDialog;
class HistoryModel;
class NodeBridge;
class RunForm;
class SetupWizard;
class SweepTab;

// What the window needs to know at start.
struct WindowContext {
    QString home;
    AppSettings settings;
    NodeSettings node; // filled from settings by the caller; tests point it at loopback
};

// The dashboard: the cluster, a new run, its controls and live charts, past runs, the log.
// It only shows models and sends commands: the node and the training run on threads of
// their own and report through queued signals.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(const WindowContext& context, QWidget* parent = nullptr);
    ~MainWindow() override;

    NodeBridge* node() const { return m_node; }
    RunForm* runForm() const { return m_form; }
    ChartPanel* charts() const { return m_charts; }
    TrainingRun* run() const { return m_run; }
    HistoryModel* history() const { return m_history; }
    SweepTab* sweep() const { return m_sweep; }
    QString bannerText() const;

    // Starts a run of what the form describes, after checking its model and dataset.
    void startRun();
    // Exports the history row's checkpoint; emits exportFinished.
    // `quant`: how a GGUF export stores the weights.
    void exportRun(int historyRow, ExportFormat format, const QString& path,
                   GgufQuant quant = GgufQuant::F16);
    // Exports a run checkpoint (a sweep's best trial); emits exportFinished.
    void exportCheckpointFile(const QString& checkpoint, ExportFormat format, const QString& path,
                              GgufQuant quant = GgufQuant::F16);
    QString exportFolder() const;
    // After a GGUF export: added to Ollama where it is installed (OllamaRegistrar), else how to
    // add it by hand; emits exportFinished (and ollamaFinished where it ran).
    void handOnGguf(const QString& path);
    // History's Compare: the chosen runs' curves and settings side by side (CompareDialog).
    CompareDialog* compareRuns(const QList<int>& historyRows);
    // Continues the history row's stopped run from its checkpoint.
    void resumeRun(int historyRow);
    void showWizard();
    SetupWizard* wizard() const;

Q_SIGNALS:
    void exportFinished(bool ok, const QString& message);
    // Ollama was asked to add an exported GGUF file as `name`.
    void ollamaFinished(bool ok, const QString& name);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    enum class BannerKind { Info, Warning, Error };
    void buildMenus();
    void buildBanner();
    void buildTabs();
    QWidget* buildRunPanel();
    void buildTray();
    void connectRun();
    void connectNode();
    QWidget* buildClusterTab();
    QWidget* buildHistoryTab();
    void showBanner(BannerKind kind, const QString& text);
    void log(const QString& line);
    void launch(RunConfig config, const QString& resumeFrom);
    void updateControls();
    void onStep(const StepMetrics& m);
    void showProgress();
    void onFinished(const RunSummary& s);
    void onFailed(const Error& e);
    void onPairingQuestion(const PairingQuestion& q);
    void exportSelected(ExportFormat format);
    void exportGgufSelected(int historyRow);
    // "Try it…": a language model run continues a prompt (TryDialog).
    void tryRun(int historyRow);
    void exportSweepBest(const QString& checkpoint, const QString& suggestedName);
    QWidget* buildSweepTab();
    void openSettings();
    void saveDescription();
    void loadDescription();
    void updateTray();
    QString explainError(const Error& error) const;
    static QString demoReadyText() {
        return tr("Ready. The demo is set up in New run: press Start.");
    }
    void onRunEvent(const RunEvent& e);
    void onEvaluating(qint64 done, qint64 total);
    bool confirm(const QString& title, const QString& text, const QString& action);
    // Lending this machine to another machine's run (mainwindowlend.cpp): the dashboard shows
    // that run as this machine sees it, and Stop lending ends its part.
    void onLendingChanged(bool running, const QString& coordinator);
    void onLendingEvent(const QJsonObject& e);
    void showLending();
    // This machine's name: the one chosen in the wizard or Settings, or the host's.
    QString shownName() const;
    // What the window keeps between restarts (the New run form, its geometry, the playground's
    // settings): an INI file in the node's home, apart from the Settings dialog's.
    QString uiStatePath() const;
    void restoreUiState();
    // Where the export dialogs open: the folder last exported to, else the home folder.
    void rememberExportFolder(const QString& path) const;
    void saveUiState() const;
    // A past run's charts, read from its folder: shown when History's selection changes, and
    // the newest run's at start, but never over a run in progress or lent to.
    void showRunCharts(const QString& runFolder);
    // History's "New run like this": the run's settings in the New run form.
    void newRunLike(int historyRow);
    // History's Notes…: what a person writes of the run, kept in its record.
    void editNotes(int historyRow);
    void addNotesAndCompare(QHBoxLayout* row);

    void applyName(const QString& name);

    WindowContext m_ctx;
    NodeBridge* m_node;
    TrainingRun* m_run;
    RunForm* m_form;
    ChartPanel* m_charts;
    HistoryModel* m_history;
    SweepTab* m_sweep = nullptr;
    QTabWidget* m_tabs;
    QTableView* m_clusterView;
    QTableView* m_historyView;
    QLabel* m_historyFolder; // the chosen run's folder, to copy
    QPushButton* m_notesButton = nullptr;
    QPushButton* m_compareButton = nullptr;
    QPushButton* m_start;
    QPushButton* m_pause;
    QPushButton* m_resume;
    QPushButton* m_stop;
    QPushButton* m_stopLending;
    QProgressBar* m_progress;
    QLabel* m_progressText;
    QLabel* m_modeText; // automatic mode's choice, for the run's length
    QWidget* m_banner;
    QLabel* m_bannerText;
    QPlainTextEdit* m_log;
    QSystemTrayIcon* m_tray = nullptr;
    QTimer m_progressTimer;
    QPointer<SetupWizard> m_wizard;
    std::unique_ptr<QThread> m_exportThread;
    QString m_runFolder;
    QString m_chartsFolder; // whose curves the charts show
    bool m_startPending = false;
    bool m_quitAfterRun = false;
    int64_t m_firstStep = -1;
    Task m_task = Task::Classification; // the running run's, for its figures
    int64_t m_tokensPerSample = 0;      // its speed's unit: tokens where it is a language model
    StepMetrics m_last;
    // The test split's evaluation at each epoch's end: its size, how long the last one took
    // (-1: none yet), and when the one under way began (invalid: none is).
    int64_t m_testSamples = 0;
    double m_evalS = -1;
    QElapsedTimer m_evalClock;
    struct Lending {
        bool active = false;
        bool started = false; // the worker has joined and reports steps
        bool paused = false;
        QString coordinator, coordinatorId, device;
        int64_t step = 0, samples = 0, tokensPerSample = 0;
        double loss = 0, samplesPerS = 0, share = 0;
    } m_lending;
};

} // namespace tandem::ui
