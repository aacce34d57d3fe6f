#include "engine/worker/events.h"

#include "common/runenums.h"
#include "engine/runhistory.h"
#include "formats/dataset.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QRegularExpression>

#include <algorithm>

namespace tandem {

namespace {
// The coordinator names the run: a folder name only when it is a plain one, else its digest.
QString folderNameOf(const QString& runId) {
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    if (plain.match(runId).hasMatch())
        return runId;
    return QString::fromLatin1(
        QCryptographicHash::hash(runId.toUtf8(), QCryptographicHash::Sha256).toHex().left(32));
}
} // namespace

void WorkerEvents::emitEvent(const QJsonObject& e) const {
    if (m_sink)
        m_sink(e);
}

void WorkerEvents::joined(const QString& runId, TrainMode mode, const QString& device,
                          const QString& data, const DatasetSplits* samples,
                          const MemoryPlanFigures& plan) {
    const int64_t tokensPerSample = samples && samples->train.targets == Dataset::Targets::Ids
                                        ? samples->train.targetSize()
                                        : 0;
    // Joined again after a lost connection, the part goes on; another run starts afresh.
    if (m_lent.value(QStringLiteral("run")).toString() != runId) {
        m_total = 0;
        m_steps = 0;
        m_totalLossSum = m_busyMs = m_share = 0;
        m_folder.clear();
    }
    m_samples = 0;
    m_lossSum = 0;
    m_since.start();
    m_lastSent.invalidate();
    m_data = data;
    m_lent = {{QStringLiteral("coordinator"), m_coordinatorName},
              {QStringLiteral("coordinator_id"), m_coordinatorId},
              {QStringLiteral("run"), runId},
              {QStringLiteral("mode"), nameOf(mode)},
              {QStringLiteral("device"), device}};
    if (!m_home.isEmpty() && m_folder.isEmpty()) {
        QString tag = m_deviceTag;
        tag.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]")), QStringLiteral("-"));
        m_folder = QDir(m_home).filePath(QStringLiteral("lent/") + folderNameOf(runId) +
                                         (tag.isEmpty() ? QString() : QLatin1Char('-') + tag));
        RunConfig c;
        c.home = m_home;
        c.outDir = m_folder;
        c.data = data;
        RunHistory::started(c); // lists the folder in the home's history
    }
    writeRecord(QStringLiteral("running"), {});
    QJsonObject e{{QStringLiteral("event"), QStringLiteral("joined")},
                  {QStringLiteral("coordinator"), m_coordinatorName},
                  {QStringLiteral("coordinator_id"), m_coordinatorId},
                  {QStringLiteral("run"), runId},
                  {QStringLiteral("mode"), nameOf(mode)},
                  {QStringLiteral("device"), device}};
    if (tokensPerSample > 0)
        e.insert(QStringLiteral("tokens_per_sample"), qint64(tokensPerSample));
    if (plan.fixedBytes > 0)
        e.insert(QStringLiteral("memory_plan"), plan.toJson());
    emitEvent(e);
}

void WorkerEvents::paused(bool paused) {
    // The pause is not this machine's speed: the first step after it is reported as the first
    // of the run is, at its compute speed, and the wall time counts from there.
    if (paused) {
        m_samples = 0;
        m_lossSum = 0;
        m_since.invalidate();
        m_lastSent.invalidate();
    }
    emitEvent(
        {{QStringLiteral("event"), paused ? QStringLiteral("paused") : QStringLiteral("resumed")}});
}

void WorkerEvents::stepSent(const wire::Result& r, double share) {
    const bool first = m_total == 0 || !m_since.isValid();
    // The part's wall time: from one result to the next, and for the first after the start or a
    // pause its compute time.
    m_busyMs += m_lastSent.isValid() ? double(m_lastSent.elapsed()) : r.computeMs;
    m_lastSent.start();
    m_steps += 1;
    m_totalLossSum += r.lossSum;
    m_share = share;
    m_total += r.samples;
    m_samples += r.samples;
    m_lossSum += r.lossSum;
    const qint64 ms = first ? 0 : m_since.elapsed();
    if ((!first && ms < 500) || m_samples == 0)
        return;
    // The first step shows at once, at its compute speed (the time before it was the start);
    // then the samples over the wall time between reports.
    const double perS = first ? (r.computeMs > 0 ? double(r.samples) * 1000.0 / r.computeMs : 0)
                              : double(m_samples) * 1000.0 / double(std::max<qint64>(ms, 1));
    emitEvent({{QStringLiteral("event"), QStringLiteral("progress")},
               {QStringLiteral("step"), qint64(r.step + 1)},
               {QStringLiteral("samples"), qint64(m_total)},
               {QStringLiteral("loss"), m_lossSum / double(m_samples)},
               {QStringLiteral("samples_per_s"), perS},
               {QStringLiteral("share"), share}});
    m_samples = 0;
    m_lossSum = 0;
    m_since.restart();
}

void WorkerEvents::ended(const QString& failure) {
    writeRecord(failure.isEmpty() ? QStringLiteral("lent") : QStringLiteral("failed"), failure);
}

void WorkerEvents::writeRecord(const QString& status, const QString& failure) const {
    if (m_folder.isEmpty())
        return;
    QJsonObject record = RunHistory::read(m_folder);
    if (record.isEmpty())
        return;
    QJsonObject part{
        {QStringLiteral("samples"), qint64(m_total)},
        {QStringLiteral("steps"), qint64(m_steps)},
        {QStringLiteral("samples_per_s"), m_busyMs > 0 ? double(m_total) * 1000.0 / m_busyMs : 0.0},
        {QStringLiteral("share"), m_share}};
    if (m_total > 0)
        part.insert(QStringLiteral("loss"), m_totalLossSum / double(m_total));
    record.insert(QStringLiteral("status"), status);
    record.insert(QStringLiteral("lent"), m_lent);
    record.insert(QStringLiteral("config"), QJsonObject{{QStringLiteral("data"), m_data}});
    record.insert(QStringLiteral("part"), part);
    if (status != QLatin1String("running"))
        record.insert(QStringLiteral("ended"),
                      QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    if (!failure.isEmpty())
        record.insert(QStringLiteral("error"), failure);
    RunHistory::write(m_folder, record);
}

} // namespace tandem
