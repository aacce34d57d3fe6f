#include "ui/language.h"

#include <QApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace tandem::ui {

QList<Language> supportedLanguages() {
    return {{QStringLiteral("en"), QStringLiteral("English")},
            {QStringLiteral("de"), QStringLiteral("Deutsch")},
            {QStringLiteral("fr"), QStringLiteral("Français")},
            {QStringLiteral("zh_CN"), QStringLiteral("简体中文")},
            {QStringLiteral("hi"), QStringLiteral("हिन्दी")},
            {QStringLiteral("ar"), QStringLiteral("العربية")}};
}

QString applyLanguage(QApplication& app, const QString& requested) {
    static QTranslator* own = nullptr;
    static QTranslator* qt = nullptr;
    for (QTranslator** t : {&own, &qt})
        if (*t) {
            app.removeTranslator(*t);
            delete *t;
            *t = nullptr;
        }

    QString code = requested;
    if (code.isEmpty()) {
        const QLocale system;
        for (const Language& l : supportedLanguages())
            if (system.name() == l.code || system.name().section(QLatin1Char('_'), 0, 0) == l.code)
                code = l.code;
        if (code.isEmpty())
            code = QStringLiteral("en");
    }
    const QLocale locale(code);
    QLocale::setDefault(locale);
    // English too: its file holds the plural forms of the source strings.
    own = new QTranslator(&app);
    if (own->load(QStringLiteral(":/i18n/tandem_%1.qm").arg(code)))
        app.installTranslator(own);
    if (code != QLatin1String("en")) {
        // Qt's own strings (standard buttons, file dialogs), where Qt ships them.
        qt = new QTranslator(&app);
        if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                     QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
            app.installTranslator(qt);
    }
    app.setLayoutDirection(locale.textDirection());
    return code;
}

} // namespace tandem::ui
