#include "engine/runhistory.h"

#include "common/files.h"
#include "common/version.h"
#include "net/identity.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLockFile>

namespace tandem {

namespace {

const QString kLegacyRecord = QStringLiteral("run.json");
const QString kHistoryList = QStringLiteral("history.list");
constexpr qint64 kMaxRecordBytes = 4 << 20;
constexpr qint64 kMaxListBytes = 16 << 20;
constexpr qsizetype kMaxListed = 2000;

QString now() {
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

} // namespace

QJsonObject RunHistory::read(const QString& runFolder) {
    for (const QString& name : {RunFiles::record(), kLegacyRecord}) {
        const QString path = QDir(runFolder).filePath(name);
        if (!QFileInfo(path).isFile())
            continue;
        auto bytes = readRegularFile(path, kMaxRecordBytes);
        const QJsonObject o = bytes ? QJsonDocument::fromJson(*bytes).object() : QJsonObject();
        // A sweep trial's run.json is its run description, not a record.
        if (o.contains(QStringLiteral("status")))
            return o;
    }
    return {};
}

void RunHistory::write(const QString& runFolder, const QJsonObject& record) {
    QDir().mkpath(runFolder);
    // Best effort: a full disk costs the History line, not the run.
    (void)writeFileAtomically(QDir(runFolder).filePath(RunFiles::record()),
                              QJsonDocument(record).toJson());
}

QJsonObject RunHistory::started(const RunConfig& config) {
    QJsonObject record{{QStringLiteral("config"), config.toJson()},
                       {QStringLiteral("started"), now()},
                       {QStringLiteral("status"), QStringLiteral("running")},
                       {QStringLiteral("app_version"), appVersion()}};
    if (config.outDir.isEmpty())
        return record;
    const QJsonObject old = read(config.outDir);
    if (old.contains(QStringLiteral("started")))
        record.insert(QStringLiteral("started"), old.value(QStringLiteral("started")));
    write(config.outDir, record);
    if (config.listInHistory)
        list(config.home, config.outDir);
    return record;
}

void RunHistory::ended(const QString& runFolder, const Expected<RunSummary>& result) {
    if (runFolder.isEmpty())
        return;
    QJsonObject record = read(runFolder);
    if (result) {
        record.insert(QStringLiteral("status"),
                      result->finished ? QStringLiteral("finished") : QStringLiteral("stopped"));
        record.insert(QStringLiteral("summary"), result->toJson());
    } else {
        record.insert(QStringLiteral("status"), QStringLiteral("failed"));
        record.insert(QStringLiteral("error"), result.error().message);
    }
    record.insert(QStringLiteral("ended"), now());
    write(runFolder, record);
}

void RunHistory::list(const QString& home, const QString& runFolder) {
    const QString dir = nodeHome(home);
    QDir().mkpath(dir);
    const QString path = QDir(dir).filePath(kHistoryList);
    const QString folder = QFileInfo(runFolder).absoluteFilePath();
    // Runs may start at once from several processes (a sweep, the app): one writer at a time.
    QLockFile lock(path + QStringLiteral(".lock"));
    if (!lock.tryLock(5000))
        return;
    QStringList lines;
    if (auto bytes = readRegularFile(path, kMaxListBytes); bytes)
        lines = QString::fromUtf8(*bytes).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.contains(folder))
        return;
    // Folders since deleted go, and the list keeps the newest runs only.
    lines.removeIf([](const QString& f) { return !QFileInfo(f).isDir(); });
    lines << folder;
    if (lines.size() > kMaxListed)
        lines = lines.mid(lines.size() - kMaxListed);
    (void)writeFileAtomically(path, lines.join(QLatin1Char('\n')).toUtf8() + '\n');
}

QStringList RunHistory::listed(const QString& home) {
    QStringList out;
    auto bytes = readRegularFile(QDir(nodeHome(home)).filePath(kHistoryList), kMaxListBytes);
    if (!bytes)
        return out;
    for (const QString& line :
         QString::fromUtf8(*bytes).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (QFileInfo(line).isDir())
            out << line;
    return out;
}

} // namespace tandem
