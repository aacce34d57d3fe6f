#include "ui/gui.h"

#include "engine/devices.h"
#include "net/identity.h"
#include "ui/appsettings.h"
#include "ui/language.h"
#include "ui/mainwindow.h"

#include <QApplication>
#include <QSysInfo>

namespace tandem::ui {

int runGui(QApplication& app, const GuiOptions& options) {
    WindowContext ctx;
    ctx.home = nodeHome(options.home);
    ctx.settings = AppSettings::load(ctx.home);
    applyLanguage(app, options.language.isEmpty() ? ctx.settings.language : options.language);
    app.setWindowIcon(QIcon(QStringLiteral(":/icons/tandem.png")));

    ctx.node.home = ctx.home;
    ctx.node.name = ctx.settings.nodeName;
    ctx.node.devices = detectDevices();
    ctx.node.listenPort = ctx.settings.listenPort;
    ctx.node.discoveryPort = ctx.settings.discoveryPort;
    ctx.node.acceptWork = ctx.settings.acceptWork;
    ctx.node.cacheDir = ctx.settings.effectiveCacheFolder(ctx.home);
    ctx.node.modelsDir = ctx.settings.modelsFolder;

    MainWindow window(ctx);
    window.show();
    if (!ctx.settings.wizardDone)
        window.showWizard();
    return app.exec();
}

} // namespace tandem::ui
