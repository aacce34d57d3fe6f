#pragma once

#include "engine/training.h"
#include "ui/livechart.h"

#include <QHash>
#include <QWidget>

namespace tandem::ui {

// The four live charts of a run: loss per step (raw, faint, and smoothed), test accuracy per
// epoch, samples/s per worker stacked, and each worker's time split.
class ChartPanel : public QWidget {
    Q_OBJECT

public:
    explicit ChartPanel(QWidget* parent = nullptr);

    // Clears the charts for a new run; the second chart shows the test figure of `task`, over
    // the run's `epochs`. With `tokensPerSample` (a language model's), the speed is in tokens.
    void reset(Task task = Task::Classification, int epochs = 1, int64_t tokensPerSample = 0);
    void addStep(const StepMetrics& m);
    void addEpoch(const EpochMetrics& m);
    // Lending this machine to another's run: the loss of the samples it trained up to `step`,
    // and its speed, as the worker reports them.
    void addLentStep(int64_t step, double loss, const QString& machine, double samplesPerS);
    // A lending machine sees no test figures and no time split of the run: those two charts
    // give their room to the loss and the speed.
    void showLentView(bool lent);

    LiveChart* lossChart() const { return m_loss; }
    LiveChart* accuracyChart() const { return m_accuracy; }
    LiveChart* speedChart() const { return m_speed; }
    LiveChart* timeChart() const { return m_time; }

private:
    int workerIndex(const QString& name);
    // The smoothed curve weighs a point by the steps since the last one (a lending machine
    // reports every few steps).
    void appendLoss(double x, double loss);
    // The loss chart's series: the loss per step, smoothed, and with `margin` the reward margin.
    void addLossSeries(bool margin);

    LiveChart* m_loss;
    LiveChart* m_accuracy;
    LiveChart* m_speed;
    LiveChart* m_time;
    int m_rawLoss = 0, m_smoothLoss = 0, m_margin = -1, m_testAcc = 0, m_trainAcc = 0;
    Task m_task = Task::Classification;
    double m_speedScale = 1; // tokens a sample, where the speed is in tokens
    LossSmoother m_smooth;
    QStringList m_workers;
    struct Split {
        double compute = 0, communicate = 0, wait = 0;
    };
    QList<Split> m_split;
};

} // namespace tandem::ui
