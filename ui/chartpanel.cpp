#include "ui/chartpanel.h"

#include "ui/format.h"
#include "ui/livechart.h"

#include <QGridLayout>

#include <algorithm>
#include <cmath>

namespace tandem::ui {

namespace {
QString workerLabel(const QString& name) {
    // Remote workers are "NAME (device 1F65 EBAE)"; the legend has room for the name.
    return name == QLatin1String("local") ? ChartPanel::tr("this machine")
                                          : name.section(QStringLiteral(" (device "), 0, 0);
}
} // namespace

ChartPanel::ChartPanel(QWidget* parent)
    : QWidget(parent)
    , m_loss(new LiveChart(LiveChart::Kind::Lines, this))
    , m_accuracy(new LiveChart(LiveChart::Kind::Lines, this))
    , m_speed(new LiveChart(LiveChart::Kind::StackedArea, this))
    , m_time(new LiveChart(LiveChart::Kind::StackedBars, this)) {
    m_loss->setObjectName(QStringLiteral("lossChart"));
    m_accuracy->setObjectName(QStringLiteral("accuracyChart"));
    m_speed->setObjectName(QStringLiteral("speedChart"));
    m_time->setObjectName(QStringLiteral("timeChart"));
    addLossSeries(false);
    m_accuracy->setTitles(tr("Accuracy"), tr("Epoch"), tr("Accuracy (%)"));
    m_accuracy->setPointsVisible(true);
    for (LiveChart* c : {m_loss, m_accuracy, m_speed})
        c->setIntegerX(true); // steps and epochs
    m_testAcc = m_accuracy->addSeries(tr("Test"), QColor(0x2c, 0xa0, 0x2c));
    m_trainAcc = m_accuracy->addSeries(tr("Training"), QColor(0x7f, 0x7f, 0x7f));
    m_speed->setTitles(tr("Throughput per worker"), tr("Step"), tr("Samples/s"));
    m_time->setTitles(tr("Where each worker's time goes"), tr("Seconds"), QString());
    m_time->addSeries(tr("Compute"), QColor(0x2c, 0xa0, 0x2c));
    m_time->addSeries(tr("Communicate"), QColor(0x1f, 0x77, 0xb4));
    m_time->addSeries(tr("Wait"), QColor(0xc7, 0xc7, 0xc7));
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(m_loss, 0, 0);
    grid->addWidget(m_accuracy, 0, 1);
    grid->addWidget(m_speed, 1, 0);
    grid->addWidget(m_time, 1, 1);
    reset(); // the empty charts already show their units' ranges
}

void ChartPanel::addLossSeries(bool margin) {
    m_loss->removeAllSeries();
    m_loss->setTitles(tr("Training loss"), tr("Step"),
                      margin ? tr("Loss, reward margin") : tr("Loss"));
    m_rawLoss = m_loss->addSeries(tr("Loss per step"), QColor(0x1f, 0x77, 0xb4), true);
    m_smoothLoss = m_loss->addSeries(tr("Smoothed"), QColor(0x1f, 0x77, 0xb4));
    // Preference tuning: TRL's rewards/margins, the chosen answer's reward less the rejected
    // one's, on each step's batch.
    m_margin = margin ? m_loss->addSeries(tr("Reward margin"), QColor(0xff, 0x7f, 0x0e)) : -1;
}

void ChartPanel::reset(Task task, int epochs, int64_t tokensPerSample) {
    m_task = task;
    addLossSeries(task == Task::Preference);
    // Preference tuning's accuracy is TRL's rewards/accuracies: how often the chosen answer's
    // reward is the higher.
    const bool accuracy = task == Task::Classification || task == Task::MultiLabel;
    m_accuracy->setTitles(accuracy                   ? tr("Accuracy")
                          : task == Task::Preference ? tr("Reward accuracy")
                          : task == Task::Sequence   ? tr("Held-out perplexity")
                          : task == Task::Regression ? tr("Held-out R²")
                                                     : tr("Held-out loss"),
                          tr("Epoch"), testFigureAxis(task));
    m_speedScale = tokensPerSample > 0 ? double(tokensPerSample) : 1;
    m_speed->setTitles(tr("Throughput per worker"), tr("Step"),
                       tokensPerSample > 0 ? tr("Tokens/s") : tr("Samples/s"));
    // Every epoch of the run, with the first and last points off the edges; an accuracy axis
    // starts on its unit's full scale.
    m_accuracy->setXSpan(0, epochs + 1);
    m_accuracy->setEmptyRange(0, epochs + 1, 0, accuracy ? 100 : 1);
    m_loss->clear();
    m_accuracy->clear();
    m_speed->clear();
    m_time->clear();
    m_smooth = LossSmoother{};
    // Worker series stay (a chart cannot drop a series cheaply); they restart at zero.
    for (Split& s : m_split)
        s = Split{};
}

int ChartPanel::workerIndex(const QString& name) {
    qsizetype i = m_workers.indexOf(name);
    if (i >= 0)
        return int(i);
    m_workers << name;
    m_split << Split{};
    m_speed->addSeries(workerLabel(name), seriesColor(int(m_workers.size()) - 1));
    return int(m_workers.size()) - 1;
}

void ChartPanel::appendLoss(double x, double loss) {
    m_loss->append(m_rawLoss, x, loss);
    m_loss->append(m_smoothLoss, x, m_smooth.add(x, loss));
}

void ChartPanel::addLentStep(int64_t step, double loss, const QString& machine,
                             double samplesPerS) {
    const double x = double(step);
    appendLoss(x, loss);
    const int i = workerIndex(machine);
    QList<double> speeds(m_workers.size(), 0.0);
    speeds[i] = samplesPerS * m_speedScale;
    m_speed->appendStack(x, speeds);
}

void ChartPanel::showLentView(bool lent) {
    m_accuracy->setVisible(!lent);
    m_time->setVisible(!lent);
}

void ChartPanel::addStep(const StepMetrics& m) {
    const double x = double(m.step);
    appendLoss(x, m.loss);
    if (m_margin >= 0 && m.pairs.pairs > 0)
        m_loss->append(m_margin, x, m.pairs.sums[2] / double(m.pairs.pairs));

    for (const WorkerStepStats& w : m.workers)
        workerIndex(w.name);
    QList<double> speeds(m_workers.size(), 0.0);
    for (const WorkerStepStats& w : m.workers) {
        const int i = workerIndex(w.name);
        speeds[i] = m.stepMs > 0 ? double(w.samples) * m_speedScale * 1000.0 / m.stepMs : 0;
        Split& s = m_split[i];
        // The coordinator's view of one step: compute is the worker's own, wait is the time
        // it sat finished while others worked, and the rest of its round trip is transfer.
        s.compute += w.computeMs / 1e3;
        s.wait += w.waitMs / 1e3;
        s.communicate += std::max(0.0, m.stepMs - w.computeMs - w.waitMs) / 1e3;
    }
    m_speed->appendStack(x, speeds);
    QStringList names;
    QList<QList<double>> values(3);
    for (qsizetype i = 0; i < m_workers.size(); ++i) {
        names << workerLabel(m_workers[i]);
        values[0] << m_split[i].compute;
        values[1] << m_split[i].communicate;
        values[2] << m_split[i].wait;
    }
    m_time->setBars(names, values);
}

void ChartPanel::addEpoch(const EpochMetrics& m) {
    const double test = testFigureValue(m.test, m_task);
    if (std::isfinite(test))
        m_accuracy->append(m_testAcc, m.epoch + 1, test);
    // Training accuracy sits on the same axis only where the figure is an accuracy.
    if ((m_task == Task::Classification || m_task == Task::MultiLabel ||
         m_task == Task::Preference) &&
        std::isfinite(m.trainAccuracy))
        m_accuracy->append(m_trainAcc, m.epoch + 1, 100.0 * m.trainAccuracy);
}

} // namespace tandem::ui
