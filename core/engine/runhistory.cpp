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
    for (const char* kept : {"started", "title", "notes"})
        if (old.contains(QLatin1String(kept)))
            record.insert(QLatin1String(kept), old.value(QLatin1String(kept)));
    write(config.outDir, record);
    if (config.listInHistory)
        list(config.home, config.outDir);
    return record;
}

void RunHistory::describe(const QString& runFolder, const QString& title, const QString& notes) {
    QJsonObject record = read(runFolder);
    if (record.isEmpty())
        return;
    for (const auto& [key, value] : {std::pair{QStringLiteral("title"), title.trimmed()},
                                     std::pair{QStringLiteral("notes"), notes.trimmed()}})
        if (value.isEmpty())
            record.remove(key);
        else
            record.insert(key, value);
    write(runFolder, record);
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

Expected<RunCurves> RunHistory::curves(const QString& runFolder) {
    QFile f(QDir(runFolder).filePath(RunFiles::metrics()));
    if (!f.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("%1 has no %2 to chart: %3")
                             .arg(runFolder, RunFiles::metrics(), f.errorString()));
    RunCurves c;
    const QJsonObject record = read(runFolder);
    const QJsonObject config = record.value(QStringLiteral("config")).toObject();
    const QJsonObject summary = record.value(QStringLiteral("summary")).toObject();
    c.epochs = std::max(1, config.value(QStringLiteral("epochs")).toInt(1));
    if (auto task = parse<Task>(summary.value(QStringLiteral("objective")).toString()))
        c.task = *task;
    const double samplesPerS = summary.value(QStringLiteral("samples_per_s")).toDouble();
    if (samplesPerS > 0)
        c.tokensPerSample =
            qRound64(summary.value(QStringLiteral("tokens_per_s")).toDouble() / samplesPerS);
    while (!f.atEnd()) {
        const QJsonObject o = QJsonDocument::fromJson(f.readLine()).object();
        const QString type = o.value(QStringLiteral("type")).toString();
        if (type == QLatin1String("step")) {
            const StepMetrics m = StepMetrics::fromJson(o);
            // A resumed run repeats the steps after its checkpoint: the later lines hold.
            while (!c.steps.isEmpty() && c.steps.last().step >= m.step)
                c.steps.removeLast();
            c.steps.append(m);
        } else if (type == QLatin1String("epoch")) {
            const EpochMetrics e = EpochMetrics::fromJson(o);
            while (!c.epochEnds.isEmpty() && c.epochEnds.last().epoch >= e.epoch)
                c.epochEnds.removeLast();
            c.epochEnds.append(e);
        } else if (type == QLatin1String("summary") &&
                   !summary.contains(QStringLiteral("objective"))) {
            if (auto task = parse<Task>(o.value(QStringLiteral("objective")).toString()))
                c.task = *task;
        }
    }
    // A run stopped before its summary: its steps' task is told by their figures.
    if (!summary.contains(QStringLiteral("objective")) && !c.steps.isEmpty() &&
        c.steps.last().pairs.pairs > 0)
        c.task = Task::Preference;
    return c;
}

} // namespace tandem
