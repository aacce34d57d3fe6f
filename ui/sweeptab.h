#pragma once

#include "sweep/sweeprunner.h"

#include <QHash>
#include <QJsonObject>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace tandem::ui {

class LiveChart;
class PeerModel;

// The Sweep tab: a sweep file, where its results go, and the trials as they run: a table of
// parameters, device, status and the metric at each rung, the metric against the step for
// every trial (the best one drawn over the rest), and the metric against a searched parameter.
// Trials run as `tandem train` processes (SweepRunner), one per device of this machine and of
// each paired machine online that accepts work.
class SweepTab : public QWidget {
    Q_OBJECT

public:
    SweepTab(PeerModel* peers, const QString& home, const QString& sweepsFolder,
             QWidget* parent = nullptr);
    ~SweepTab() override;

    // The program each trial runs (the app's own binary unless set).
    void setProgram(const QString& program) { m_program = program; }
    // Reads a sweep file; says what it searches, or what is wrong with it.
    bool openFile(const QString& path);
    void start();
    // Continues the sweep in the folder field.
    void resume();
    void stop();
    bool running() const { return m_runner && !m_runner->ended(); }
    SweepRunner* runner() const { return m_runner.get(); }
    // The best trial's checkpoint so far; empty before any trial has a result.
    QString bestCheckpoint() const;
    QString statusText() const;
    int bestTrial() const;

Q_SIGNALS:
    void message(const QString& line);
    // The user asked to export the best trial's model.
    void exportRequested(const QString& checkpoint, const QString& suggestedName);
    void finished(const QJsonObject& summary);
    void runningChanged(bool running);

private:
    void chooseFile();
    void launch(const SweepConfig& config, const QList<TrialRecord>& resumed);
    // HOST:PORT of each paired machine online, and in `names` what the cluster calls it.
    QStringList nodes(QStringList* names = nullptr) const;
    void onTrial(const TrialRecord& t);
    void setRow(const TrialRecord& t);
    // Draws what a trial's metrics.jsonl gained: each running trial's once a second, and a
    // trial's own whenever its record changes (its last lines as it ends).
    void readCurve(const TrialRecord& t);
    void readRunningCurves();
    void emphasiseBest();
    void refreshScatter();
    void updateStatus();
    void updateButtons();
    QString statusName(TrialRecord::Status s) const;

    PeerModel* m_peers;
    QString m_home;
    QString m_sweepsFolder;
    QString m_program;
    std::optional<SweepConfig> m_config;
    std::unique_ptr<SweepRunner> m_runner;
    QLineEdit* m_file;
    QLineEdit* m_folder;
    QCheckBox* m_usePeers;
    QPushButton* m_start;
    QPushButton* m_resume;
    QPushButton* m_stop;
    QPushButton* m_export;
    QLabel* m_status;
    QTableWidget* m_table;
    LiveChart* m_curves;
    LiveChart* m_scatter;
    QComboBox* m_param;
    QHash<int, int> m_curveOf;   // trial → series in m_curves
    QHash<int, qint64> m_readTo; // trial → bytes of its metrics.jsonl already drawn
    QHash<int, int64_t> m_lastStep;
    QTimer m_refresh;
};

} // namespace tandem::ui
