#pragma once

#include <QString>

class QApplication;

namespace tandem::ui {

struct GuiOptions {
    QString home;     // --home; empty: the platform's application-data folder
    QString language; // --lang; empty: the one in Settings
};

// Opens the dashboard (and the setup wizard on first start) and runs the event loop.
int runGui(QApplication& app, const GuiOptions& options);

} // namespace tandem::ui
