#pragma once

#include "engine/training.h"

#include <QElapsedTimer>

#include <atomic>
#include <cstdio>
#include <thread>

namespace tandem::cli {

class EventLog;

// "test loss 0.3120, test accuracy 0.8812": the figures an evaluation defined, for the log.
QString testFiguresText(const TestMetrics& t);

// Human-readable progress on stderr: a redrawn bar on a terminal, a line every few seconds
// otherwise (logs, CI). stdout stays free for the machine-readable summary.
class ProgressPrinter final : public RunObserver {
public:
    explicit ProgressPrinter(RunControl* control);

    void onStart(const RunInfo& info) override;
    void onStep(const StepMetrics& m) override;
    void onEpoch(const EpochMetrics& m) override;
    void onMessage(const QString& text) override;
    void onEvent(const RunEvent& e) override;
    // Also writes every start, step, evaluation and event there (--events).
    void setEventLog(EventLog* log) { m_events = log; }

private:
    void endLine();

    RunControl* m_control;
    EventLog* m_events = nullptr;
    bool m_tty;
    bool m_lineOpen = false;
    int64_t m_startStep = 0;
    int64_t m_totalSteps = 0;
    QElapsedTimer m_sinceLine;
};

// Turns process signals into run control: Ctrl+C (SIGINT) and SIGTERM stop the run at the
// next step with a checkpoint; SIGUSR1 pauses and SIGUSR2 resumes it (POSIX), so a headless
// run can be driven from a shell or a service manager.
class SignalWatcher {
public:
    SignalWatcher(RunControl* control, ProgressPrinter* printer);
    ~SignalWatcher();

private:
    RunControl* m_control;
    ProgressPrinter* m_printer;
    std::atomic<bool> m_quit{false};
    std::thread m_thread;
};

} // namespace tandem::cli
