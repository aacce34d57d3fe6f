#include "app/eventlog.h"

#include <QJsonDocument>

#include <cstdio>

namespace tandem::cli {

Expected<std::unique_ptr<EventLog>> EventLog::open(const QString& target) {
    std::unique_ptr<EventLog> log(new EventLog);
    log->m_stdout = target == QLatin1String("-");
    const bool ok = target == QLatin1String("-")
                        ? log->m_file.open(stdout, QIODevice::WriteOnly | QIODevice::Unbuffered)
                        : (log->m_file.setFileName(target),
                           log->m_file.open(QIODevice::WriteOnly | QIODevice::Truncate |
                                            QIODevice::Unbuffered));
    if (!ok)
        return makeError(ErrorCode::Io, QStringLiteral("cannot write the events to %1: %2")
                                            .arg(target, log->m_file.errorString()));
    return log;
}

void EventLog::write(const QJsonObject& o) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_stdout)
        fflush(stdout); // what printf put there goes first
    m_file.write(QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n');
    m_file.flush();
}

void EventLog::started(const RunInfo& info) {
    write(QJsonObject{
        {QStringLiteral("event"), QStringLiteral("started")},
        {QStringLiteral("model"), info.model},
        {QStringLiteral("data"), info.datasetDescription},
        {QStringLiteral("loss"), nameOf(info.loss)},
        {QStringLiteral("objective"), nameOf(info.task)},
        {QStringLiteral("total_steps"), static_cast<qint64>(info.totalSteps)},
        {QStringLiteral("start_step"), static_cast<qint64>(info.startStep)},
        {QStringLiteral("trainable_parameters"), static_cast<qint64>(info.parameters)},
        {QStringLiteral("frozen_parameters"), static_cast<qint64>(info.frozenParameters)}});
}

void EventLog::step(const StepMetrics& m) {
    write(QJsonObject{{QStringLiteral("event"), QStringLiteral("step")},
                      {QStringLiteral("step"), static_cast<qint64>(m.step)},
                      {QStringLiteral("epoch"), m.epoch},
                      {QStringLiteral("loss"), m.loss},
                      {QStringLiteral("samples_per_s"), m.samplesPerS}});
}

void EventLog::evaluated(const EpochMetrics& m) {
    QJsonObject o{{QStringLiteral("event"), QStringLiteral("evaluated")},
                  {QStringLiteral("epoch"), m.epoch}};
    m.test.writeTo(o);
    write(o);
}

void EventLog::event(const RunEvent& e) {
    write(e.toJson());
}

void EventLog::finished(const RunSummary& s) {
    QJsonObject o = s.toJson();
    o.insert(QStringLiteral("event"), QStringLiteral("finished"));
    write(o);
}

void EventLog::failed(const Error& e) {
    write(QJsonObject{{QStringLiteral("event"), QStringLiteral("failed")},
                      {QStringLiteral("code"), errorCodeName(e.code)},
                      {QStringLiteral("subject"), errorSubjectName(e.subject)},
                      {QStringLiteral("message"), e.message}});
}

} // namespace tandem::cli
