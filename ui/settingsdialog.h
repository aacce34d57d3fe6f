#pragma once

#include "ui/appsettings.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace tandem::ui {

// Language, node name, ports, folders, and whether this machine accepts work when idle.
class SettingsDialog : public QDialog {
    Q_OBJECT

public:
    SettingsDialog(const AppSettings& current, const QString& home, QWidget* parent = nullptr);
    AppSettings settings() const;

private:
    AppSettings m_base;
    QComboBox* m_language;
    QLineEdit* m_name;
    QSpinBox* m_discoveryPort;
    QSpinBox* m_listenPort;
    QSpinBox* m_runPort;
    QLineEdit* m_runs;
    QLineEdit* m_cache;
    QLineEdit* m_models;
    QCheckBox* m_acceptWork;
};

} // namespace tandem::ui
