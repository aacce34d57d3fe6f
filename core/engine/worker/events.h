#pragma once

// What a worker tells a program that shows its part of a run (WorkerOptions::events): whose
// run it joined, its progress at most twice a second, pauses and resumptions.

#include "wire/messages.h"

#include <QElapsedTimer>
#include <QJsonObject>

#include <functional>

namespace tandem {

class WorkerEvents {
public:
    explicit WorkerEvents(std::function<void(const QJsonObject&)> sink)
        : m_sink(std::move(sink)) {}

    void coordinatorId(const QString& deviceId) { m_coordinatorId = deviceId; }
    void coordinatorName(const QString& name) { m_coordinatorName = name; }
    void joined(const QString& runId, TrainMode mode, const QString& device);
    void paused(bool paused);
    // A result went to the coordinator; `share` is its part of the step's samples.
    void stepSent(const wire::Result& r, double share);

private:
    void emitEvent(const QJsonObject& e) const;

    std::function<void(const QJsonObject&)> m_sink;
    QString m_coordinatorId, m_coordinatorName;
    // Since the last progress event: samples and their loss, and when it began.
    int64_t m_total = 0, m_samples = 0;
    double m_lossSum = 0;
    QElapsedTimer m_since;
};

} // namespace tandem
