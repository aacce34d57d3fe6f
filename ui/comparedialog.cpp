#include "ui/comparedialog.h"

#include "engine/runhistory.h"
#include "ui/format.h"
#include "ui/historymodel.h"
#include "ui/livechart.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QHeaderView>
#include <QJsonObject>
#include <QLocale>
#include <QPushButton>
#include <QSet>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <functional>

namespace tandem::ui {

CompareDialog::CompareDialog(const HistoryModel* history, const QList<int>& rows, QWidget* parent)
    : QDialog(parent)
    , m_loss(new LiveChart(LiveChart::Kind::Lines))
    , m_figure(new LiveChart(LiveChart::Kind::Lines))
    , m_speed(new LiveChart(LiveChart::Kind::Lines))
    , m_table(new QTableWidget) {
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare %n run(s)", nullptr, int(rows.size())));
    m_loss->setObjectName(QStringLiteral("compareLoss"));
    m_figure->setObjectName(QStringLiteral("compareFigure"));
    m_speed->setObjectName(QStringLiteral("compareSpeed"));
    m_table->setObjectName(QStringLiteral("compareTable"));
    for (LiveChart* c : {m_loss, m_figure, m_speed}) {
        c->setIntegerX(true);
        c->setLegendVisible(true);
    }
    m_figure->setPointsVisible(true);
    QList<RunCurves> curves;
    QSet<Task> tasks;
    for (int i = 0; i < rows.size(); ++i) {
        const QModelIndex name = history->index(rows[i], HistoryModel::Name);
        for (LiveChart* c : {m_loss, m_figure, m_speed})
            c->addSeries(name.data().toString(), seriesColor(i));
        // A run without metrics: its name in the legends, no curve.
        auto read = RunHistory::curves(name.data(HistoryModel::FolderRole).toString());
        curves << (read ? *read : RunCurves{});
        if (!curves.last().steps.isEmpty() || !curves.last().epochEnds.isEmpty())
            tasks.insert(curves.last().task);
        addCurves(curves.last(), i);
    }
    const Task task = tasks.size() == 1 ? *tasks.begin() : Task::Custom;
    for (int i = 0; i < curves.size(); ++i)
        addFigure(curves[i], i, task);
    m_loss->setTitles(tr("Training loss (smoothed)"), tr("Step"), tr("Loss"));
    m_figure->setTitles(tr("Held-out figure per epoch"), tr("Epoch"), testFigureAxis(task));
    m_speed->setTitles(tr("Speed"), tr("Step"),
                       m_tokens && m_samples ? tr("Tokens or samples/s")
                       : m_tokens            ? tr("Tokens/s")
                                             : tr("Samples/s"));
    fillTable(history, rows);

    auto* charts = new QWidget;
    auto* grid = new QGridLayout(charts);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(m_loss, 0, 0);
    grid->addWidget(m_figure, 0, 1);
    grid->addWidget(m_speed, 1, 0);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(charts);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    // Qt ships no translation of its own buttons for every language here.
    buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addWidget(buttons);
    resize(1000, 720);
}

void CompareDialog::addCurves(const RunCurves& c, int series) {
    LossSmoother smooth; // as the dashboard smooths
    const double tokens = double(std::max<int64_t>(c.tokensPerSample, 1));
    for (const StepMetrics& m : c.steps) {
        if (!std::isfinite(m.loss))
            continue;
        m_loss->append(series, double(m.step), smooth.add(double(m.step), m.loss));
        if (m.samplesPerS > 0)
            m_speed->append(series, double(m.step), m.samplesPerS * tokens);
    }
    if (!c.steps.isEmpty())
        (c.tokensPerSample > 0 ? m_tokens : m_samples) = true;
}

void CompareDialog::addFigure(const RunCurves& c, int series, Task task) {
    for (const EpochMetrics& e : c.epochEnds) {
        const double v = testFigureValue(e.test, task);
        if (std::isfinite(v))
            m_figure->append(series, double(e.epoch + 1), v);
    }
}

void CompareDialog::fillTable(const HistoryModel* history, const QList<int>& rows) {
    // A row per setting: the run description's own fields, then History's columns.
    struct Row {
        QString label;
        std::function<QString(int)> value;
    };
    const auto config = [history](int row) {
        return history->index(row, 0).data(HistoryModel::ConfigRole).toJsonObject();
    };
    const auto field = [config](const char* key) {
        return [config, key](int row) {
            const QJsonValue v = config(row).value(QLatin1String(key));
            return v.isDouble() ? QLocale().toString(v.toDouble(), 'g', 4)
                   : v.isBool() ? (v.toBool() ? tr("yes") : tr("no"))
                                : v.toString();
        };
    };
    const auto column = [history](HistoryModel::Column c) {
        return [history, c](int row) { return history->index(row, c).data().toString(); };
    };
    const QList<Row> table = {
        {tr("Name"), column(HistoryModel::Name)},
        {tr("Started"), column(HistoryModel::Started)},
        {tr("Model"), column(HistoryModel::Model)},
        {tr("Dataset"), column(HistoryModel::Dataset)},
        {tr("Learning rate"), field("lr")},
        {tr("Schedule"), field("schedule")},
        {tr("Optimizer"), field("optimizer")},
        {tr("Epochs"), field("epochs")},
        {tr("Batch"), field("batch")},
        {tr("Adapters (LoRA)"), field("lora")},
        {tr("Loss"), field("loss")},
        {tr("Mode"), field("mode")},
        {tr("Machines"),
         [config](int row) { return QString::number(HistoryModel::machinesOf(config(row))); }},
        {tr("Status"), column(HistoryModel::Status)},
        {tr("Result"), column(HistoryModel::Accuracy)},
        {tr("Duration"), column(HistoryModel::Duration)},
        {tr("Speed"), column(HistoryModel::Speed)},
        {tr("Notes"),
         [history](int row) {
             return history->index(row, 0).data(HistoryModel::NotesRole).toString();
         }},
    };
    m_table->setRowCount(int(table.size()));
    m_table->setColumnCount(int(rows.size()));
    QStringList labels;
    for (const Row& r : table)
        labels << r.label;
    m_table->setVerticalHeaderLabels(labels);
    QStringList names;
    for (int row : rows)
        names << history->index(row, HistoryModel::Name).data().toString();
    m_table->setHorizontalHeaderLabels(names);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int r = 0; r < table.size(); ++r) {
        QSet<QString> values;
        for (int c = 0; c < rows.size(); ++c) {
            const QString v = table[r].value(rows[c]);
            values.insert(v);
            m_table->setItem(r, c, new QTableWidgetItem(v));
        }
        if (values.size() > 1) // where the runs differ
            for (int c = 0; c < rows.size(); ++c) {
                QFont f = m_table->item(r, c)->font();
                f.setBold(true);
                m_table->item(r, c)->setFont(f);
            }
    }
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
}

} // namespace tandem::ui
