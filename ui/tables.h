#pragma once

class QAbstractItemModel;
class QModelIndex;
class QTableView;

namespace tandem::ui {

// A read-only table of whole-row, single selections, as every list in the app is.
QTableView* makeRowTable(QAbstractItemModel* model);

// The last column takes the width left and wraps its text onto more lines rather than being
// cut behind a sideways scroll (the Devices of a machine); the view scrolls sideways only when
// the other columns alone are wider than it.
void wrapLastColumn(QTableView* table);

// Selects the row of `index`. Not QTableView::selectRow(): in right-to-left layouts it looks
// for a column at the viewport's edge, finds none when the columns end short of it, and
// selects nothing.
void selectWholeRow(QTableView* table, const QModelIndex& index);

} // namespace tandem::ui
