#include "ui/appsettings.h"

#include <QDir>
#include <QSettings>

namespace tandem::ui {

namespace {
QString fileIn(const QString& home) {
    return QDir(home).filePath(QStringLiteral("settings.ini"));
}

quint16 port(const QSettings& s, const char* key, quint16 fallback) {
    bool ok = false;
    const uint v = s.value(QLatin1String(key)).toUInt(&ok);
    return ok && v <= 65535 ? quint16(v) : fallback;
}
} // namespace

AppSettings AppSettings::load(const QString& home) {
    QSettings s(fileIn(home), QSettings::IniFormat);
    AppSettings a;
    a.language = s.value(QStringLiteral("language")).toString();
    a.nodeName = s.value(QStringLiteral("node_name")).toString();
    a.discoveryPort = port(s, "discovery_port", a.discoveryPort);
    a.listenPort = port(s, "listen_port", a.listenPort);
    a.runPort = port(s, "run_port", a.runPort);
    a.runsFolder = s.value(QStringLiteral("runs_folder")).toString();
    a.cacheFolder = s.value(QStringLiteral("cache_folder")).toString();
    a.modelsFolder = s.value(QStringLiteral("models_folder")).toString();
    a.acceptWork = s.value(QStringLiteral("accept_work"), true).toBool();
    a.wizardDone = s.value(QStringLiteral("wizard_done"), false).toBool();
    return a;
}

void AppSettings::save(const QString& home) const {
    QDir().mkpath(home);
    QSettings s(fileIn(home), QSettings::IniFormat);
    s.setValue(QStringLiteral("language"), language);
    s.setValue(QStringLiteral("node_name"), nodeName);
    s.setValue(QStringLiteral("discovery_port"), discoveryPort);
    s.setValue(QStringLiteral("listen_port"), listenPort);
    s.setValue(QStringLiteral("run_port"), runPort);
    s.setValue(QStringLiteral("runs_folder"), runsFolder);
    s.setValue(QStringLiteral("cache_folder"), cacheFolder);
    s.setValue(QStringLiteral("models_folder"), modelsFolder);
    s.setValue(QStringLiteral("accept_work"), acceptWork);
    s.setValue(QStringLiteral("wizard_done"), wizardDone);
    s.sync();
}

QString AppSettings::effectiveRunsFolder(const QString& home) const {
    return runsFolder.isEmpty() ? QDir(home).filePath(QStringLiteral("runs")) : runsFolder;
}

QString AppSettings::effectiveCacheFolder(const QString& home) const {
    return cacheFolder.isEmpty() ? QDir(home).filePath(QStringLiteral("cache")) : cacheFolder;
}

} // namespace tandem::ui
