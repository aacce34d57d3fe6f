#pragma once

#include "common/expected.h"
#include "sweep/scheduler.h"
#include "sweep/sweepconfig.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <memory>

class QLockFile;
class QProcess;

namespace tandem {

// Where a sweep runs and where it keeps its results.
struct SweepOptions {
    QString outDir;          // sweep.json, sweep.jsonl and trials/NNN, one run folder a trial
    QString home;            // this node's identity and trust store (for invitations)
    QStringList invites;     // paired nodes running `tandem serve`, HOST[:PORT]: one device each
    QStringList inviteNames; // what to call each (its machine name); empty: HOST[:PORT]
    // This machine's devices for trials: empty for every accelerator (or the CPU when there is
    // none), "none" for no local trials, or a list such as "cuda:0,cuda:1".
    QString devices;
    QString program;       // the `tandem` binary that trains a trial
    int joinTimeoutS = 60; // an invited node that has not joined by then is passed over
    int retryS = 60;       // a node that failed a trial is asked again after this long
};

// One device that runs trials, one at a time.
struct SweepDevice {
    QString name;   // "cpu", "cuda:0", or the invited node's HOST:PORT
    QString device; // this machine's device spec; empty for an invited node
    QString host;   // the invited node; empty for this machine
};

// Runs a sweep: hands each free device the next trial or promotion, each as a `tandem train`
// process of its own (a trial that crashes takes nothing else with it), records every result
// in sweep.jsonl as it comes, and requeues a trial whose device left from its last checkpoint.
// Every trial trains in local-SGD on one device: its weights come back to this machine, the
// one that keeps the checkpoint, once every local_steps steps, whichever device trains it.
class SweepRunner : public QObject {
    Q_OBJECT

public:
    SweepRunner(SweepConfig config, SweepOptions options, QObject* parent = nullptr);
    ~SweepRunner() override;

    // A sweep folder's description and records, to continue it. Running trials become
    // pending: they resume from their checkpoints.
    static Expected<std::pair<SweepConfig, QList<TrialRecord>>> load(const QString& outDir);

    // Creates the folder (or continues the records given), and starts the first trials.
    Status start(const QList<TrialRecord>& resumed = {});
    // Stops every trial (each checkpoints first); `finished` follows with the records kept
    // for a resume.
    void stop();

    const SweepConfig& config() const { return m_config; }
    // The sweep finished, or stopped (`finished` was emitted).
    bool ended() const { return m_ended; }
    const QList<TrialRecord>& trials() const { return m_trials; }
    const QList<SweepDevice>& devices() const { return m_devices; }
    QString trialDir(int trial) const;
    QString checkpointOf(int trial) const;
    // The trial with the best metric so far (at the highest rung reached); -1 before any.
    int best() const { return m_scheduler.best(m_trials); }
    QJsonObject summary() const;

Q_SIGNALS:
    void trialChanged(const tandem::TrialRecord& trial);
    // One line per finished job, for the log.
    void message(const QString& text);
    void finished(const QJsonObject& summary);

private:
    struct Slot;
    void fill();
    void launch(Slot& slot, const TrialJob& job);
    Expected<QStringList> trainArguments(const Slot& slot, const TrialJob& job);
    void onExited(Slot& slot, int exitCode, bool crashed);
    void onOutput(Slot& slot);
    // Reads the trial's typed events (tandem train --events -) from its stdout as they come.
    void onEvents(Slot& slot);
    void requeue(Slot& slot, const QString& why);
    bool fast(const Slot& slot) const;
    void waitForOldTrials(const QList<TrialRecord>& trials);
    void save();
    void end();

    SweepConfig m_config;
    SweepOptions m_options;
    TrialScheduler m_scheduler;
    QList<TrialRecord> m_trials;
    QList<SweepDevice> m_devices;
    std::vector<std::unique_ptr<Slot>> m_slots;
    std::unique_ptr<QLockFile> m_lock;
    QElapsedTimer m_clock;
    QTimer m_retry;            // asks a device resting after a failure again
    qint64 m_tailStartMs = -1; // when a device first found nothing to start
    bool m_stopping = false;
    bool m_ended = false;
};

} // namespace tandem
