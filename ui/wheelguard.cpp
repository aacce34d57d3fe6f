#include "ui/wheelguard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QWheelEvent>
#include <QWidget>

namespace tandem::ui {

namespace {

class WheelGuard : public QObject {
public:
    using QObject::QObject;

    bool eventFilter(QObject* watched, QEvent* e) override {
        if (e->type() != QEvent::Wheel)
            return false;
        const auto* w = static_cast<QWidget*>(watched);
        if (w->hasFocus())
            return false;
        // Not seen by the field: the scroll area around it takes it. (Qt hands an ignored
        // wheel event to the parents only when it came from the system.)
        for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
            if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
                const auto* we = static_cast<QWheelEvent*>(e);
                QWidget* viewport = area->viewport();
                QWheelEvent passed(viewport->mapFromGlobal(we->globalPosition()),
                                   we->globalPosition(), we->pixelDelta(), we->angleDelta(),
                                   we->buttons(), we->modifiers(), we->phase(), we->inverted(),
                                   we->source());
                QCoreApplication::sendEvent(viewport, &passed);
                return true;
            }
        e->ignore();
        return true;
    }
};

} // namespace

void guardWheel(QWidget* root) {
    auto* guard = new WheelGuard(root);
    QList<QWidget*> fields;
    for (QComboBox* c : root->findChildren<QComboBox*>())
        fields << c;
    for (QAbstractSpinBox* s : root->findChildren<QAbstractSpinBox*>())
        fields << s;
    for (QWidget* w : fields) {
        w->setFocusPolicy(Qt::StrongFocus);
        w->installEventFilter(guard);
    }
}

} // namespace tandem::ui
