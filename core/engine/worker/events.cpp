#include "engine/worker/events.h"

#include "common/runenums.h"

#include <algorithm>

namespace tandem {

void WorkerEvents::emitEvent(const QJsonObject& e) const {
    if (m_sink)
        m_sink(e);
}

void WorkerEvents::joined(const QString& runId, TrainMode mode, const QString& device) {
    m_total = m_samples = 0;
    m_lossSum = 0;
    m_since.start();
    emitEvent({{QStringLiteral("event"), QStringLiteral("joined")},
               {QStringLiteral("coordinator"), m_coordinatorName},
               {QStringLiteral("coordinator_id"), m_coordinatorId},
               {QStringLiteral("run"), runId},
               {QStringLiteral("mode"), nameOf(mode)},
               {QStringLiteral("device"), device}});
}

void WorkerEvents::paused(bool paused) {
    // The pause is not this machine's speed: the first step after it is reported as the first
    // of the run is, at its compute speed, and the wall time counts from there.
    if (paused) {
        m_samples = 0;
        m_lossSum = 0;
        m_since.invalidate();
    }
    emitEvent(
        {{QStringLiteral("event"), paused ? QStringLiteral("paused") : QStringLiteral("resumed")}});
}

void WorkerEvents::stepSent(const wire::Result& r, double share) {
    const bool first = m_total == 0 || !m_since.isValid();
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

} // namespace tandem
