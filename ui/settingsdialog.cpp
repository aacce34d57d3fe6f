#include "ui/settingsdialog.h"

#include "ui/language.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace tandem::ui {

namespace {
QWidget* folderRow(QLineEdit* edit, QWidget* parent) {
    auto* w = new QWidget(parent);
    auto* row = new QHBoxLayout(w);
    row->setContentsMargins(0, 0, 0, 0);
    auto* browse = new QPushButton(SettingsDialog::tr("Choose…"), w);
    // Wide enough for the whole path (up to a limit), and showing its start, which tells
    // where the folder is, when it is longer; the tooltip has all of it.
    auto fit = [edit] {
        const int text = edit->fontMetrics().horizontalAdvance(edit->text()) + 24;
        edit->setMinimumWidth(std::clamp(text, 240, 600));
        edit->setToolTip(edit->text());
        if (!edit->hasFocus())
            edit->setCursorPosition(0);
    };
    fit();
    QObject::connect(edit, &QLineEdit::textChanged, w, fit);
    row->addWidget(edit, 1);
    row->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, w, [edit, w] {
        const QString d = QFileDialog::getExistingDirectory(
            w, SettingsDialog::tr("Choose a folder"), edit->text());
        if (!d.isEmpty())
            edit->setText(d);
    });
    return w;
}

QSpinBox* portBox(int value, int minimum) {
    auto* s = new QSpinBox;
    s->setRange(minimum, 65535);
    s->setValue(value);
    return s;
}
} // namespace

SettingsDialog::SettingsDialog(const AppSettings& current, const QString& home, QWidget* parent)
    : QDialog(parent)
    , m_base(current) {
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Settings"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_language = new QComboBox;
    m_language->setObjectName(QStringLiteral("languageCombo"));
    m_language->addItem(tr("System language"), QString());
    for (const Language& l : supportedLanguages())
        m_language->addItem(l.nativeName, l.code);
    m_language->setCurrentIndex(std::max(0, m_language->findData(current.language)));
    form->addRow(tr("Language"), m_language);
    m_name = new QLineEdit(current.nodeName);
    m_name->setObjectName(QStringLiteral("nodeNameEdit"));
    m_name->setPlaceholderText(tr("this computer's host name"));
    form->addRow(tr("Machine name"), m_name);
    m_discoveryPort = portBox(current.discoveryPort, 1);
    form->addRow(tr("Discovery port (UDP)"), m_discoveryPort);
    m_listenPort = portBox(current.listenPort, 1);
    form->addRow(tr("Pairing port (TCP)"), m_listenPort);
    m_runPort = portBox(current.runPort, 0);
    m_runPort->setSpecialValueText(tr("any free port"));
    form->addRow(tr("Training port (TCP)"), m_runPort);
    m_runs = new QLineEdit(current.effectiveRunsFolder(home));
    form->addRow(tr("Runs folder"), folderRow(m_runs, this));
    m_cache = new QLineEdit(current.effectiveCacheFolder(home));
    form->addRow(tr("Dataset cache"), folderRow(m_cache, this));
    m_models = new QLineEdit(current.modelsFolder);
    m_models->setObjectName(QStringLiteral("modelsFolderEdit"));
    m_models->setPlaceholderText(tr("none: base models are received"));
    form->addRow(tr("Models folder"), folderRow(m_models, this));
    m_acceptWork = new QCheckBox(tr("Train for paired machines while this one is idle"));
    m_acceptWork->setObjectName(QStringLiteral("acceptWorkCheck"));
    m_acceptWork->setChecked(current.acceptWork);
    form->addRow(QString(), m_acceptWork);
    layout->addLayout(form);
    auto* note =
        new QLabel(tr("A new language or new ports take effect when Tandem starts again."));
    note->setWordWrap(true);
    layout->addWidget(note);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    // Our own words: Qt has no translation of its buttons for every language here.
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Save"));
    buttons->button(QDialogButtonBox::Cancel)->setText(tr("Cancel"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

AppSettings SettingsDialog::settings() const {
    AppSettings s = m_base;
    s.language = m_language->currentData().toString();
    s.nodeName = m_name->text().trimmed();
    s.discoveryPort = quint16(m_discoveryPort->value());
    s.listenPort = quint16(m_listenPort->value());
    s.runPort = quint16(m_runPort->value());
    s.runsFolder = m_runs->text().trimmed();
    s.cacheFolder = m_cache->text().trimmed();
    s.modelsFolder = m_models->text().trimmed();
    s.acceptWork = m_acceptWork->isChecked();
    return s;
}

} // namespace tandem::ui
