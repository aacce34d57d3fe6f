#pragma once

#include <QColor>
#include <QList>
#include <QPointF>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <memory>

namespace tandem::ui {

// The one place that knows which chart library draws: the rest of the UI appends points and
// sets bars through this. Points are buffered and drawn at most ten times a second, and old
// points are thinned (pairs averaged) once a series holds kMaxPoints, so a run of any length
// at any step rate costs the UI thread a bounded amount of work.
// An axis over [lo, hi] with round ticks, about `intervals` of them: 1, 2, 2.5 or 5 times a power
// of ten (whole numbers only for `integers`), ends on ticks, never below zero when `lo` is not, and
// labels with just the decimals the step needs (0, 1, 2 rather than 0, 0, 1, 1).
struct NiceAxis {
    double min = 0;
    double max = 1;
    int ticks = 2;
    int decimals = 0;
};
// `intervals`: about how many; never more than one over it.
NiceAxis niceAxis(double lo, double hi, bool integers, int intervals = 5);

// The colours series take in turn (a worker's, a run's): six that tell apart on white.
QColor seriesColor(int i);

// The smoothed training loss the dashboard and Compare draw: an exponential moving average
// keeping 0.9 a step (0.9^k across a gap of k steps: a lending machine reports every few
// steps), started at the first value so that it does not rise from 0.
struct LossSmoother {
    double add(double x, double loss);
    double ema = 0, x = 0;
    bool set = false;
};

class LiveChart : public QWidget {
    Q_OBJECT

public:
    enum class Kind {
        Lines,       // independent curves
        StackedArea, // curves stacked on each other (one value per series per x)
        StackedBars, // horizontal bars per category, segments per series
        Points,      // unconnected points (a scatter), appended as Lines are
    };
    static constexpr int kMaxPoints = 600;

    explicit LiveChart(Kind kind, QWidget* parent = nullptr);
    ~LiveChart() override;

    void setTitles(const QString& title, const QString& xTitle, const QString& yTitle);
    QString title() const;
    QString yTitle() const; // empty for bars
    // Returns the series' number. A faint series is drawn thin and translucent.
    int addSeries(const QString& name, const QColor& color, bool faint = false);
    void setLegendVisible(bool visible);
    // Marks each point (for charts with few points, such as one per epoch).
    void setPointsVisible(bool visible);
    // The ranges an empty chart shows (its unit's: 0 to 100 for a percentage).
    void setEmptyRange(double x0, double x1, double y0, double y1);
    // The x axis always covers [lo, hi] (an epoch chart: every epoch of the run, with room
    // after the last point).
    void setXSpan(double lo, double hi);
    // The x axis counts in whole numbers (steps, epochs).
    void setIntegerX(bool integers);
    int seriesCount() const { return int(m_series.size()); }

    void append(int series, double x, double y);               // Lines
    void appendStack(double x, const QList<double>& values);   // StackedArea
    void setBars(const QStringList& categories,                // StackedBars:
                 const QList<QList<double>>& valuesPerSeries); // [series][category]
    void clear();
    // Draws the series emphasised (full colour, thick) or faint.
    void setFaint(int series, bool faint);
    // Removes every series (Lines and Points).
    void removeAllSeries();

    // What is kept for drawing (after thinning) and what was appended in all.
    int pointCount(int series) const;
    // The axes as last drawn (the value axis of bars is `x`).
    NiceAxis xAxis() const { return m_xAxis; }
    NiceAxis yAxis() const { return m_yAxis; }
    // Whether the legend names `series` (it does once the series has a point).
    bool legendShows(int series) const;
    qint64 appendedCount(int series) const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    // How many intervals the value axis's labels have room for at the chart's height.
    int rowsOfLabels() const;
    struct Series {
        QString name;
        QColor color;
        bool faint = false;
        QList<QPointF> points;
        qint64 appended = 0;
    };
    static void thin(QList<QPointF>& points);
    void style(int series);
    void scheduleDraw();
    void draw();

    struct Chart;
    Kind m_kind;
    QList<Series> m_series;
    QList<double> m_stackX;
    QList<QList<double>> m_stackValues; // per x, one per series
    QStringList m_categories;
    QList<QList<double>> m_bars;
    QTimer m_drawTimer;
    bool m_dirty = false;
    bool m_pointsVisible = false;
    double m_empty[4] = {0, 10, 0, 1};  // x0, x1, y0, y1
    double m_spanLo = 0, m_spanHi = -1; // none while lo > hi
    bool m_integerX = false;
    NiceAxis m_xAxis, m_yAxis;
    std::unique_ptr<Chart> m_chart;
};

} // namespace tandem::ui
