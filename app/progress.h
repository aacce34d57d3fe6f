#pragma once

#include "training.h"

#include <QElapsedTimer>

#include <cstdio>

namespace tandem::cli {

// Human-readable progress on stderr: a redrawn bar on a terminal, a line every few seconds
// otherwise (logs, CI). stdout stays free for the machine-readable summary.
class ProgressPrinter final : public RunObserver {
public:
    explicit ProgressPrinter(RunControl* control);

    void onStart(const RunInfo& info) override;
    void onStep(const StepMetrics& m) override;
    void onEpoch(const EpochMetrics& m) override;
    void onMessage(const QString& text) override;
    void onWaiting() override;

    // Ctrl+C asks the run to stop at the next step boundary, with a checkpoint.
    static void installInterruptHandler();

private:
    void endLine();

    RunControl* m_control;
    bool m_tty;
    bool m_lineOpen = false;
    int64_t m_startStep = 0;
    int64_t m_totalSteps = 0;
    QElapsedTimer m_sinceLine;
};

} // namespace tandem::cli
