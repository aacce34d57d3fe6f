#include "ui/tables.h"

#include <QHeaderView>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTextDocument>

#include <cmath>

namespace tandem::ui {

namespace {
// Measures a wrapped cell with the fonts that draw it: the style's own estimate can count one
// line for a text (Arabic, in a fallback font) that it then draws on two, and elides.
class WrappedCellDelegate : public QStyledItemDelegate {
public:
    WrappedCellDelegate(QTableView* view)
        : QStyledItemDelegate(view)
        , m_view(view) {}
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        QSize size = QStyledItemDelegate::sizeHint(option, index);
        QTextDocument doc;
        doc.setDefaultFont(option.font);
        doc.setDocumentMargin(0);
        doc.setTextWidth(std::max(20, m_view->columnWidth(index.column()) - 12));
        doc.setPlainText(index.data().toString());
        size.setHeight(std::max(size.height(), int(std::ceil(doc.size().height())) + 8));
        return size;
    }

private:
    QTableView* m_view;
};
} // namespace

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
    table->setItemDelegateForColumn(last, new WrappedCellDelegate(table));
    table->setWordWrap(true);
    table->setTextElideMode(Qt::ElideNone);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Rows measure their wrapped text again when the column's width or the rows change.
    auto remeasure = [table] {
        QMetaObject::invokeMethod(table, &QTableView::resizeRowsToContents, Qt::QueuedConnection);
    };
    QObject::connect(h, &QHeaderView::sectionResized, table, [remeasure, last](int section) {
        if (section == last)
            remeasure();
    });
    QAbstractItemModel* model = table->model();
    QObject::connect(model, &QAbstractItemModel::modelReset, table, remeasure);
    QObject::connect(model, &QAbstractItemModel::rowsInserted, table, remeasure);
    QObject::connect(model, &QAbstractItemModel::dataChanged, table, remeasure);
}

void selectWholeRow(QTableView* table, const QModelIndex& index) {
    table->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect |
                                               QItemSelectionModel::Rows);
}

} // namespace tandem::ui
