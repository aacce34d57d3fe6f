#include "ui/tables.h"

#include <QHeaderView>
#include <QTableView>

namespace tandem::ui {

QTableView* makeRowTable(QAbstractItemModel* model) {
    auto* t = new QTableView;
    t->setModel(model);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->setWordWrap(false);
    return t;
}

void selectWholeRow(QTableView* table, const QModelIndex& index) {
    table->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect |
                                               QItemSelectionModel::Rows);
}

} // namespace tandem::ui
