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

void wrapLastColumn(QTableView* table) {
    QHeaderView* h = table->horizontalHeader();
    const int last = table->model()->columnCount() - 1;
    h->setSectionResizeMode(last, QHeaderView::Stretch);
    table->setWordWrap(true);
    table->setTextElideMode(Qt::ElideNone);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Rows measure their wrapped text again when the column's width changes.
    QObject::connect(h, &QHeaderView::sectionResized, table, [table, last](int section) {
        if (section == last)
            QMetaObject::invokeMethod(table, &QTableView::resizeRowsToContents,
                                      Qt::QueuedConnection);
    });
}

void selectWholeRow(QTableView* table, const QModelIndex& index) {
    table->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect |
                                               QItemSelectionModel::Rows);
}

} // namespace tandem::ui
