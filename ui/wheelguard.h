#pragma once

// A drop-down or spin box takes the mouse wheel only once it has focus (a click or Tab): over
// a long form, the wheel scrolls the form instead of changing whatever setting passes under
// the pointer.

class QWidget;

namespace tandem::ui {

// Every QComboBox and QAbstractSpinBox inside `root` (as it is now): focus by click or Tab
// only, and the wheel passed on to what holds them while they do not have it.
void guardWheel(QWidget* root);

} // namespace tandem::ui
