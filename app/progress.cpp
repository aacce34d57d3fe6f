#include "app/progress.h"

#include "app/eventlog.h"

#include "common/clocktext.h"

#include <QString>

#include <QStringList>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <thread>

#if defined(Q_OS_WIN)
#include <io.h>
#define isatty _isatty
#define fileno _fileno
#else
#include <unistd.h>
#endif

namespace tandem::cli {

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_pauseRequests{0};
std::atomic<int> g_resumeRequests{0};

extern "C" void onInterrupt(int) {
    // Only an atomic store here: anything else is not async-signal-safe. The training thread
    // sees the flag at its next step.
    g_interrupted.store(true);
}

#if defined(SIGUSR1)
extern "C" void onPauseSignal(int) {
    g_pauseRequests.fetch_add(1);
}
extern "C" void onResumeSignal(int) {
    g_resumeRequests.fetch_add(1);
}
#endif

} // namespace

ProgressPrinter::ProgressPrinter(RunControl* control)
    : m_control(control)
    , m_tty(isatty(fileno(stderr)) != 0) {
    m_sinceLine.start();
}

SignalWatcher::SignalWatcher(RunControl* control, ProgressPrinter* printer)
    : m_control(control)
    , m_printer(printer) {
    std::signal(SIGINT, onInterrupt);
#if defined(SIGTERM)
    std::signal(SIGTERM, onInterrupt);
#endif
#if defined(SIGUSR1)
    std::signal(SIGUSR1, onPauseSignal);
    std::signal(SIGUSR2, onResumeSignal);
#endif
    // The training thread may be blocked (paused, waiting for workers), so the signals are
    // turned into RunControl calls here, on a thread of their own.
    m_thread = std::thread([this] {
        int pauses = 0, resumes = 0;
        bool stopped = false;
        while (!m_quit.load()) {
            if (g_interrupted.load() && !stopped) {
                stopped = true;
                m_printer->onMessage(
                    QStringLiteral("stopping at the next step; a checkpoint will be written"));
                m_control->stop();
            }
            if (g_pauseRequests.load() != pauses) {
                pauses = g_pauseRequests.load();
                m_control->pause();
            }
            if (g_resumeRequests.load() != resumes) {
                resumes = g_resumeRequests.load();
                m_control->resume();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
}

SignalWatcher::~SignalWatcher() {
    m_quit = true;
    m_thread.join();
}

void ProgressPrinter::onEvent(const RunEvent& e) {
    if (m_events)
        m_events->event(e);
}

void ProgressPrinter::onStart(const RunInfo& info) {
    if (m_events)
        m_events->started(info);
    m_startStep = info.startStep;
    m_totalSteps = info.totalSteps;
    if (info.startStep > 0)
        onMessage(
            QStringLiteral("resuming at step %1 of %2").arg(info.startStep).arg(info.totalSteps));
}

void ProgressPrinter::onStep(const StepMetrics& m) {
    if (m_events)
        m_events->step(m);
    if (m.totalSteps > 0)
        m_totalSteps = m.totalSteps; // an epoch can take more steps than planned
    const double done = m_totalSteps > 0 ? double(m.step) / double(m_totalSteps) : 0;
    const double stepsPerS = m.elapsedS > 0 ? double(m.step - m_startStep) / m.elapsedS : 0;
    const double eta = stepsPerS > 0 ? double(m_totalSteps - m.step) / stepsPerS : -1;
    const QString stats = QStringLiteral("epoch %1 step %2/%3 loss %4 %5 samples/s ETA %6")
                              .arg(m.epoch + 1)
                              .arg(m.epochStep)
                              .arg(m.stepsPerEpoch)
                              .arg(m.loss, 0, 'f', 4)
                              .arg(m.samplesPerS, 0, 'f', 0)
                              .arg(clockText(eta));
    if (m_tty) {
        constexpr int width = 28;
        const int filled = std::clamp(int(done * width), 0, width);
        const QString bar =
            QString(filled, QLatin1Char('=')) + QString(width - filled, QLatin1Char(' '));
        fprintf(stderr, "\r[%s] %3d%% %s\x1b[K", qPrintable(bar), int(done * 100),
                qPrintable(stats));
        fflush(stderr);
        m_lineOpen = true;
    } else if (m_sinceLine.elapsed() >= 5000 || m.step == m_totalSteps ||
               m.step == m_startStep + 1) {
        fprintf(stderr, "%3d%% %s\n", int(done * 100), qPrintable(stats));
        m_sinceLine.restart();
    }
}

void ProgressPrinter::onEpoch(const EpochMetrics& m) {
    if (m_events)
        m_events->evaluated(m);
    const QString trainAccuracy =
        std::isfinite(m.trainAccuracy)
            ? QStringLiteral(", train accuracy %1").arg(m.trainAccuracy, 0, 'f', 4)
            : QString();
    onMessage(QStringLiteral("epoch %1: train loss %2%3, %4")
                  .arg(m.epoch + 1)
                  .arg(m.trainLoss, 0, 'f', 4)
                  .arg(trainAccuracy, testFiguresText(m.test)));
}

QString testFiguresText(const TestMetrics& t) {
    QStringList parts;
    const std::pair<const char*, double> figures[] = {{"test loss", t.loss},
                                                      {"test accuracy", t.accuracy},
                                                      {"test perplexity", t.perplexity},
                                                      {"test R²", t.r2},
                                                      {"test MAE", t.mae}};
    for (const auto& [name, value] : figures)
        if (std::isfinite(value))
            parts << QStringLiteral("%1 %2").arg(QString::fromUtf8(name)).arg(value, 0, 'f', 4);
    return parts.join(QStringLiteral(", "));
}

void ProgressPrinter::onMessage(const QString& text) {
    endLine();
    fprintf(stderr, "%s\n", qPrintable(text));
    fflush(stderr);
}

void ProgressPrinter::endLine() {
    if (m_lineOpen) {
        fputc('\n', stderr);
        m_lineOpen = false;
    }
}

} // namespace tandem::cli
