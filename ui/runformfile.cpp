// The New run form's description on disk: the JSON a run description file holds (the same as
// `tandem train --config` reads), saved atomically and read with a size cap.

#include "ui/runform.h"

#include "common/files.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace tandem::ui {

QJsonObject RunForm::description() const {
    RunConfig c = config();
    c.outDir.clear(); // each run gets its own folder
    // The machines are the invites; how many to wait for, and on which address, a run decides
    // as it starts (MainWindow::launch).
    c.workers = 0;
    c.listen.clear();
    return c.toJson();
}

Expected<RunConfig> RunForm::fromDescription(QJsonObject o) {
    // One kept with the workers it waited for but not its address (as the form wrote them
    // before) reads as its machines.
    if (o.value(QStringLiteral("listen")).toString().isEmpty())
        o.remove(QStringLiteral("workers"));
    return RunConfig::fromJson(o);
}

Status RunForm::saveTo(const QString& path) const {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return makeError(ErrorCode::Io, tr("Cannot write %1: %2").arg(path, f.errorString()));
    f.write(QJsonDocument(description()).toJson());
    if (!f.commit())
        return makeError(ErrorCode::Io, tr("Cannot write %1: %2").arg(path, f.errorString()));
    return success();
}

Status RunForm::loadFrom(const QString& path) {
    // A FIFO would block the window on open; a device would pour bytes.
    if (auto st = checkRegularFile(path); !st)
        return makeError(st.error().code, tr("Cannot read %1: %2").arg(path, st.error().message));
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::NotFound, tr("Cannot read %1: %2").arg(path, f.errorString()));
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.read(1 << 20), &err);
    if (!doc.isObject())
        return makeError(ErrorCode::InvalidArgument,
                         tr("%1 is not a run description: %2").arg(path, err.errorString()));
    auto c = fromDescription(doc.object());
    if (!c)
        return makeError(c.error().code, tr("%1: %2").arg(path, c.error().message));
    setConfig(*c);
    return success();
}

} // namespace tandem::ui
