#pragma once

// History's Compare: two or more runs side by side. Their curves overlay on one chart each
// (the smoothed training loss per step, the held-out figure per epoch, the speed per step, in
// tokens for a language model), read from each run's folder, and their settings and results
// stand in a table, a column per run, with the rows where they differ in bold.

#include "engine/runhistory.h"

#include <QDialog>
#include <QList>

class QTableWidget;

namespace tandem::ui {

class HistoryModel;
class LiveChart;

class CompareDialog : public QDialog {
    Q_OBJECT

public:
    CompareDialog(const HistoryModel* history, const QList<int>& rows, QWidget* parent = nullptr);

    LiveChart* lossChart() const { return m_loss; }
    LiveChart* figureChart() const { return m_figure; }
    LiveChart* speedChart() const { return m_speed; }
    QTableWidget* table() const { return m_table; }

private:
    // Each run's loss and speed; its held-out figure once every run's task is known (`task`:
    // theirs when they share one, else the test loss that every task has).
    void addCurves(const RunCurves& c, int series);
    void addFigure(const RunCurves& c, int series, Task task);
    void fillTable(const HistoryModel* history, const QList<int>& rows);

    LiveChart* m_loss;
    LiveChart* m_figure;
    LiveChart* m_speed;
    QTableWidget* m_table;
    bool m_tokens = false;  // some run's speed is in tokens
    bool m_samples = false; // and some run's in samples
};

} // namespace tandem::ui
