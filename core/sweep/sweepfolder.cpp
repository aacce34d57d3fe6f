// The sweep folder as a later run of the sweep finds it: the records to continue from, and
// trial processes of an earlier run still saving their checkpoints.

#include "common/files.h"
#include "sweep/sweeprunner.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QThread>

namespace tandem {

Expected<std::pair<SweepConfig, QList<TrialRecord>>> SweepRunner::load(const QString& outDir) {
    const QString descPath = QDir(outDir).filePath(QStringLiteral("sweep.json"));
    auto config = SweepConfig::readFile(descPath);
    if (!config)
        return makeError(config.error().code,
                         QStringLiteral("%1 is not a sweep folder to continue: %2")
                             .arg(outDir, config.error().message));
    QList<TrialRecord> trials;
    const QString recPath = QDir(outDir).filePath(QStringLiteral("sweep.jsonl"));
    if (QFileInfo::exists(recPath)) {
        auto rec = readRegularFile(recPath, qint64(64) << 20);
        if (!rec)
            return rec.error();
        int line = 0;
        for (const QByteArray& l : rec->split('\n')) {
            ++line;
            if (l.trimmed().isEmpty())
                continue;
            auto t = TrialRecord::fromJson(QJsonDocument::fromJson(l).object());
            if (!t || t->id != trials.size() || t->rung >= config->rungs.size() ||
                t->metrics.size() > config->rungs.size())
                return makeError(ErrorCode::InvalidArgument,
                                 QStringLiteral("%1, line %2: not a trial record in order; the "
                                                "sweep cannot continue from it")
                                     .arg(recPath)
                                     .arg(line));
            if (t->status == TrialRecord::Status::Running)
                t->status = TrialRecord::Status::Pending;
            trials << *t;
        }
    }
    return std::pair{*config, trials};
}

void SweepRunner::waitForOldTrials(const QList<TrialRecord>& trials) {
#ifdef Q_OS_LINUX
    // A sweep killed outright sends its trials SIGTERM; each saves a checkpoint before it
    // exits. A resume waits for them (a minute at most), so that it starts from that checkpoint
    // and no two processes train the same trial.
    QElapsedTimer waited;
    waited.start();
    for (const TrialRecord& t : trials) {
        QFile pidFile(QDir(trialDir(t.id)).filePath(QStringLiteral("trial.pid")));
        if (!pidFile.open(QIODevice::ReadOnly))
            continue;
        const QByteArray pid = pidFile.readAll().trimmed();
        const QString cmdline = QStringLiteral("/proc/%1/cmdline").arg(QString::fromLatin1(pid));
        const auto alive = [&] {
            QFile f(cmdline);
            return !pid.isEmpty() && f.open(QIODevice::ReadOnly) &&
                   f.readAll().contains(trialDir(t.id).toUtf8());
        };
        while (alive() && waited.elapsed() < 60000)
            QThread::msleep(100);
    }
#else
    Q_UNUSED(trials);
#endif
}

} // namespace tandem
