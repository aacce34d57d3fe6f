#include "ui/livechart.h"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFontMetrics>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tandem::ui {

struct LiveChart::Chart {
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
    QList<QXYSeries*> lines; // Lines, Points: one per series; StackedArea: the upper edges
    QList<QLineSeries*> lowers;
    QList<QAreaSeries*> areas;
    QHorizontalStackedBarSeries* bars = nullptr;
    QBarCategoryAxis* categories = nullptr;
    QValueAxis* barValues = nullptr;
};

QColor seriesColor(int i) {
    static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                     QColor(0x2c, 0xa0, 0x2c), QColor(0x94, 0x67, 0xbd),
                                     QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2)};
    return palette[i % 6];
}

double LossSmoother::add(double at, double loss) {
    const double keep = std::pow(0.9, std::clamp(at - x, 1.0, 1000.0));
    ema = set ? keep * ema + (1 - keep) * loss : loss;
    set = true;
    x = at;
    return ema;
}

NiceAxis niceAxis(double lo, double hi, bool integers, int intervals) {
    NiceAxis n;
    if (!std::isfinite(lo) || !std::isfinite(hi))
        return n;
    if (hi < lo)
        std::swap(lo, hi);
    intervals = std::max(intervals, 1);
    const bool nonNegative = lo >= 0;
    if (hi - lo < (integers ? 1.0 : std::max(std::abs(hi) * 1e-6, 1e-9))) {
        const double w = integers ? 1.0 : std::max(std::abs(lo) * 0.1, 1e-3);
        lo -= integers ? 0 : w;
        hi += w;
    }
    const double rough = (hi - lo) / intervals;
    double mag = std::pow(10.0, std::floor(std::log10(rough)));
    // The round steps from the first at least `rough`; the ends, on ticks, may add an interval
    // each, so a larger step is taken while the axis would have more than one interval over.
    static constexpr double kSteps[] = {1.0, 2.0, 2.5, 5.0};
    int k = 0;
    while (k < 4 && kSteps[k] * mag < rough * (1 - 1e-9))
        ++k;
    for (int tries = 0;; ++k, ++tries) {
        if (k == 4) {
            k = 0;
            mag *= 10;
        }
        if (integers && kSteps[k] == 2.5)
            continue;
        const double step = integers ? std::max(1.0, std::round(kSteps[k] * mag)) : kSteps[k] * mag;
        n.min = std::floor(lo / step + 1e-9) * step;
        n.max = std::ceil(hi / step - 1e-9) * step;
        if (nonNegative && n.min < 0)
            n.min = 0;
        if (n.max <= n.min)
            n.max = n.min + step;
        n.ticks = int(std::lround((n.max - n.min) / step)) + 1;
        // (at most a few tries: a range near the largest double runs out of steps)
        if (n.ticks - 1 <= intervals + 1 || n.ticks <= 3 || tries > 40) {
            n.decimals = 0;
            while (n.decimals < 6) {
                const double scaled = step * std::pow(10.0, n.decimals);
                if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled))
                    break;
                ++n.decimals;
            }
            return n;
        }
    }
}

namespace {
void applyAxis(QValueAxis* axis, const NiceAxis& n) {
    axis->setRange(n.min, n.max);
    axis->setTickCount(n.ticks);
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(n.decimals));
}
} // namespace

LiveChart::LiveChart(Kind kind, QWidget* parent)
    : QWidget(parent)
    , m_kind(kind)
    , m_chart(std::make_unique<Chart>()) {
    auto* c = new QChart;
    c->legend()->setAlignment(Qt::AlignBottom);
    c->setMargins(QMargins(4, 4, 4, 4));
    c->setBackgroundRoundness(0);
    m_chart->chart = c;
    m_chart->view = new QChartView(c, this);
    m_chart->view->setRenderHint(QPainter::Antialiasing);
    // Four charts share the right half of a 1024-pixel-wide window.
    m_chart->view->setMinimumSize(200, 150);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_chart->view);
    if (kind == Kind::StackedBars) {
        m_chart->bars = new QHorizontalStackedBarSeries;
        c->addSeries(m_chart->bars);
        m_chart->categories = new QBarCategoryAxis;
        m_chart->barValues = new QValueAxis;
        m_chart->barValues->setLabelFormat(QStringLiteral("%.0f"));
        c->addAxis(m_chart->categories, Qt::AlignLeft);
        c->addAxis(m_chart->barValues, Qt::AlignBottom);
        m_chart->bars->attachAxis(m_chart->categories);
        m_chart->bars->attachAxis(m_chart->barValues);
    } else {
        m_chart->x = new QValueAxis;
        m_chart->y = new QValueAxis;
        m_chart->x->setLabelFormat(QStringLiteral("%g"));
        m_chart->y->setLabelFormat(QStringLiteral("%g"));
        c->addAxis(m_chart->x, Qt::AlignBottom);
        c->addAxis(m_chart->y, Qt::AlignLeft);
    }
    m_drawTimer.setSingleShot(true);
    m_drawTimer.setInterval(100);
    connect(&m_drawTimer, &QTimer::timeout, this, &LiveChart::draw);
}

LiveChart::~LiveChart() = default;

void LiveChart::setTitles(const QString& title, const QString& xTitle, const QString& yTitle) {
    m_chart->chart->setTitle(title);
    if (m_chart->x) {
        m_chart->x->setTitleText(xTitle);
        m_chart->y->setTitleText(yTitle);
    } else {
        m_chart->barValues->setTitleText(xTitle);
    }
}

QString LiveChart::title() const {
    return m_chart->chart->title();
}

QString LiveChart::yTitle() const {
    return m_chart->y ? m_chart->y->titleText() : QString();
}

int LiveChart::addSeries(const QString& name, const QColor& color, bool faint) {
    Series s;
    s.name = name;
    s.color = color;
    s.faint = faint;
    m_series << s;
    QChart* c = m_chart->chart;
    if (m_kind == Kind::Lines || m_kind == Kind::Points) {
        QXYSeries* line = nullptr;
        if (m_kind == Kind::Points) {
            auto* points = new QScatterSeries;
            points->setMarkerSize(8);
            line = points;
        } else {
            line = new QLineSeries;
            line->setPointsVisible(m_pointsVisible);
        }
        line->setName(name);
        c->addSeries(line);
        m_chart->lines << line;
        line->attachAxis(m_chart->x);
        line->attachAxis(m_chart->y);
        style(int(m_series.size()) - 1);
    } else if (m_kind == Kind::StackedArea) {
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        auto* area = new QAreaSeries(upper, lower);
        area->setName(name);
        area->setColor(color);
        area->setBorderColor(color.darker(120));
        c->addSeries(area);
        area->attachAxis(m_chart->x);
        area->attachAxis(m_chart->y);
        m_chart->lines << upper;
        m_chart->lowers << lower;
        m_chart->areas << area;
        for (QList<double>& row : m_stackValues)
            row << 0.0;
    } else {
        auto* set = new QBarSet(name);
        set->setColor(color);
        m_chart->bars->append(set);
    }
    return int(m_series.size()) - 1;
}

void LiveChart::setLegendVisible(bool visible) {
    m_chart->chart->legend()->setVisible(visible);
}

bool LiveChart::legendShows(int series) const {
    if (series < 0 || series >= m_chart->lines.size())
        return false;
    const auto markers = m_chart->chart->legend()->markers(m_chart->lines[series]);
    return !markers.isEmpty() && markers.first()->isVisible();
}

void LiveChart::setEmptyRange(double x0, double x1, double y0, double y1) {
    m_empty[0] = x0;
    m_empty[1] = x1;
    m_empty[2] = y0;
    m_empty[3] = y1;
    scheduleDraw();
}

void LiveChart::setXSpan(double lo, double hi) {
    m_spanLo = lo;
    m_spanHi = hi;
    scheduleDraw();
}

void LiveChart::setIntegerX(bool integers) {
    m_integerX = integers;
    scheduleDraw();
}

void LiveChart::setPointsVisible(bool visible) {
    for (QXYSeries* line : std::as_const(m_chart->lines))
        line->setPointsVisible(visible);
    m_pointsVisible = visible;
}

void LiveChart::style(int series) {
    const Series& s = m_series[series];
    const QColor& c = s.color;
    QXYSeries* line = m_chart->lines[series];
    if (m_kind == Kind::Points) {
        auto* points = static_cast<QScatterSeries*>(line);
        points->setColor(s.faint ? QColor(c.red(), c.green(), c.blue(), 110) : c);
        points->setBorderColor(s.faint ? QColor(Qt::transparent) : c.darker(140));
        points->setMarkerSize(s.faint ? 7 : 11);
        return;
    }
    QPen pen(s.faint ? QColor(c.red(), c.green(), c.blue(), 70) : c);
    pen.setWidthF(s.faint ? 1.0 : 2.0);
    line->setPen(pen);
}

void LiveChart::setFaint(int series, bool faint) {
    if ((m_kind != Kind::Lines && m_kind != Kind::Points) || series < 0 ||
        series >= m_series.size() || m_series[series].faint == faint)
        return;
    m_series[series].faint = faint;
    style(series);
    // The emphasised series is drawn last, over the faint ones.
    QXYSeries* line = m_chart->lines[series];
    if (!faint) {
        m_chart->chart->removeSeries(line);
        m_chart->chart->addSeries(line);
        line->attachAxis(m_chart->x);
        line->attachAxis(m_chart->y);
    }
}

void LiveChart::removeAllSeries() {
    if (m_kind != Kind::Lines && m_kind != Kind::Points)
        return;
    for (QXYSeries* line : std::as_const(m_chart->lines)) {
        m_chart->chart->removeSeries(line);
        delete line;
    }
    m_chart->lines.clear();
    m_series.clear();
    scheduleDraw();
}

void LiveChart::thin(QList<QPointF>& points) {
    // Average pairs in the older half; the newest half keeps full detail.
    const qsizetype half = points.size() / 2;
    QList<QPointF> out;
    out.reserve(points.size());
    for (qsizetype i = 0; i + 1 < half; i += 2)
        out << (points[i] + points[i + 1]) / 2.0;
    for (qsizetype i = half - (half % 2); i < points.size(); ++i)
        out << points[i];
    points = std::move(out);
}

void LiveChart::append(int series, double x, double y) {
    if ((m_kind != Kind::Lines && m_kind != Kind::Points) || series < 0 ||
        series >= m_series.size() || !std::isfinite(x) || !std::isfinite(y))
        return;
    Series& s = m_series[series];
    s.points << QPointF(x, y);
    ++s.appended;
    if (s.points.size() > kMaxPoints)
        thin(s.points);
    scheduleDraw();
}

void LiveChart::appendStack(double x, const QList<double>& values) {
    if (m_kind != Kind::StackedArea)
        return;
    QList<double> row(m_series.size(), 0.0);
    for (qsizetype i = 0; i < values.size() && i < row.size(); ++i)
        row[i] = std::isfinite(values[i]) ? values[i] : 0.0;
    m_stackX << x;
    m_stackValues << row;
    for (Series& s : m_series)
        ++s.appended;
    if (m_stackX.size() > kMaxPoints) {
        const qsizetype half = m_stackX.size() / 2;
        QList<double> xs;
        QList<QList<double>> vs;
        for (qsizetype i = 0; i + 1 < half; i += 2) {
            xs << (m_stackX[i] + m_stackX[i + 1]) / 2;
            QList<double> r(row.size(), 0.0);
            for (qsizetype k = 0; k < r.size(); ++k)
                r[k] = (m_stackValues[i][k] + m_stackValues[i + 1][k]) / 2;
            vs << r;
        }
        for (qsizetype i = half - (half % 2); i < m_stackX.size(); ++i) {
            xs << m_stackX[i];
            vs << m_stackValues[i];
        }
        m_stackX = std::move(xs);
        m_stackValues = std::move(vs);
    }
    scheduleDraw();
}

void LiveChart::setBars(const QStringList& categories, const QList<QList<double>>& values) {
    if (m_kind != Kind::StackedBars)
        return;
    m_categories = categories;
    m_bars = values;
    for (qsizetype i = 0; i < m_series.size() && i < values.size(); ++i)
        ++m_series[i].appended;
    scheduleDraw();
}

void LiveChart::clear() {
    for (Series& s : m_series) {
        s.points.clear();
        s.appended = 0;
    }
    m_stackX.clear();
    m_stackValues.clear();
    m_categories.clear();
    m_bars.clear();
    scheduleDraw();
}

int LiveChart::pointCount(int series) const {
    if (series < 0 || series >= m_series.size())
        return 0;
    if (m_kind == Kind::StackedArea)
        return int(m_stackX.size());
    if (m_kind == Kind::StackedBars)
        return series < m_bars.size() ? int(m_bars[series].size()) : 0;
    return int(m_series[series].points.size());
}

qint64 LiveChart::appendedCount(int series) const {
    return series >= 0 && series < m_series.size() ? m_series[series].appended : 0;
}

int LiveChart::rowsOfLabels() const {
    // QtCharts elides a value axis's labels to "…" where a label is taller than the space
    // between two ticks: a short chart (Compare's) gets fewer ticks, a tall one up to five
    // intervals.
    const double plot = m_chart->chart->plotArea().height();
    if (!isVisible() || plot <= 0) // not laid out at its size yet
        return 5;
    const int line = QFontMetrics(m_chart->y->labelsFont()).height();
    return std::clamp(int(plot / (1.8 * line)), 2, 5);
}

void LiveChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    scheduleDraw(); // the ticks that fit the new height
}

void LiveChart::scheduleDraw() {
    m_dirty = true;
    if (!m_drawTimer.isActive())
        m_drawTimer.start();
}

void LiveChart::draw() {
    if (!m_dirty)
        return;
    m_dirty = false;
    double x0 = std::numeric_limits<double>::max(), x1 = std::numeric_limits<double>::lowest();
    double y0 = std::numeric_limits<double>::max(), y1 = std::numeric_limits<double>::lowest();
    auto extend = [&](const QPointF& p) {
        x0 = std::min(x0, p.x());
        x1 = std::max(x1, p.x());
        y0 = std::min(y0, p.y());
        y1 = std::max(y1, p.y());
    };
    if (m_kind == Kind::Lines || m_kind == Kind::Points) {
        for (qsizetype i = 0; i < m_series.size(); ++i) {
            m_chart->lines[i]->replace(m_series[i].points);
            for (const QPointF& p : m_series[i].points)
                extend(p);
            // The legend names only what is drawn (a run may never report a series).
            for (QLegendMarker* marker : m_chart->chart->legend()->markers(m_chart->lines[i]))
                marker->setVisible(!m_series[i].points.isEmpty());
        }
    } else if (m_kind == Kind::StackedArea) {
        QList<double> base(m_stackX.size(), 0.0);
        for (qsizetype s = 0; s < m_series.size(); ++s) {
            QList<QPointF> lower, upper;
            lower.reserve(m_stackX.size());
            upper.reserve(m_stackX.size());
            for (qsizetype i = 0; i < m_stackX.size(); ++i) {
                lower << QPointF(m_stackX[i], base[i]);
                base[i] += m_stackValues[i][s];
                upper << QPointF(m_stackX[i], base[i]);
                extend(upper.last());
                extend(lower.last());
            }
            m_chart->lowers[s]->replace(lower);
            m_chart->lines[s]->replace(upper);
        }
    } else {
        m_chart->categories->clear();
        m_chart->categories->append(m_categories);
        double maxTotal = 0;
        QList<double> totals(m_categories.size(), 0.0);
        const QList<QBarSet*> sets = m_chart->bars->barSets();
        for (qsizetype s = 0; s < sets.size(); ++s) {
            QList<qreal> v;
            for (qsizetype c = 0; c < m_categories.size(); ++c) {
                const double val = s < m_bars.size() && c < m_bars[s].size() ? m_bars[s][c] : 0;
                v << val;
                totals[c] += val;
            }
            sets[s]->remove(0, sets[s]->count());
            sets[s]->append(v);
        }
        for (double t : totals)
            maxTotal = std::max(maxTotal, t);
        m_xAxis = niceAxis(0, maxTotal > 0 ? maxTotal : 1, false);
        applyAxis(m_chart->barValues, m_xAxis);
        return;
    }
    if (x0 > x1) { // nothing drawn yet
        x0 = m_empty[0];
        x1 = m_empty[1];
        y0 = m_empty[2];
        y1 = m_empty[3];
    }
    if (m_spanLo <= m_spanHi) {
        x0 = std::min(x0, m_spanLo);
        x1 = std::max(x1, m_spanHi);
    }
    if (m_kind == Kind::StackedArea)
        y0 = 0;
    m_xAxis = niceAxis(x0, x1, m_integerX);
    m_yAxis = niceAxis(y0, y1, false, rowsOfLabels());
    applyAxis(m_chart->x, m_xAxis);
    applyAxis(m_chart->y, m_yAxis);
}

} // namespace tandem::ui
