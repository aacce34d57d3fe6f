#pragma once

#include <QList>
#include <QString>

class QApplication;

namespace tandem::ui {

struct Language {
    QString code;       // "de", "zh_CN"
    QString nativeName; // "Deutsch", shown in that language so anyone can find their own
};

// English plus the translations shipped in translations/.
QList<Language> supportedLanguages();

// Installs the app's and Qt's own translations for `code` (empty: the system's language,
// falling back to English) and sets the layout direction the language reads in. Returns the
// code in force.
QString applyLanguage(QApplication& app, const QString& code);

} // namespace tandem::ui
