#pragma once

// What a worker tells a program that shows its part of a run (WorkerOptions::events): whose
// run it joined, its progress at most twice a second, pauses and resumptions. With a node home
// it also records that part for the machine's History (RunHistory): a run it lent its device
// to, with the samples it computed, their loss and its speed.

#include "engine/training.h"
#include "wire/messages.h"

#include <QElapsedTimer>
#include <QJsonObject>

#include <functional>

namespace tandem {

struct DatasetSplits;

class WorkerEvents {
public:
    explicit WorkerEvents(std::function<void(const QJsonObject&)> sink)
        : m_sink(std::move(sink)) {}

    void coordinatorId(const QString& deviceId) { m_coordinatorId = deviceId; }
    void coordinatorName(const QString& name) { m_coordinatorName = name; }
    // Where the part is recorded: <home>/lent/<run>-<device> (`device` as LibTorch names it:
    // one worker process may lend several), listed in the home's history; an empty home (the
    // default): not recorded.
    void recordIn(const QString& home, const QString& device) {
        m_home = home;
        m_deviceTag = device;
    }
    // `data` is the run's dataset as its coordinator names it, and `samples` what this machine
    // holds of it: a language model's samples are windows of tokens, and its speed is told in
    // tokens, as on the coordinator. `plan` is what the memory plan counts on for this
    // machine's replica, as the run summary gives it for the coordinator's own worker.
    void joined(const QString& runId, TrainMode mode, const QString& device,
                const QString& data = {}, const DatasetSplits* samples = nullptr,
                const MemoryPlanFigures& plan = {});
    void paused(bool paused);
    // A result went to the coordinator; `share` is its part of the step's samples.
    void stepSent(const wire::Result& r, double share);
    // The work for the run ended: the coordinator ended the run or let this machine go
    // (`failure` empty), or it failed.
    void ended(const QString& failure);
    // The folder of the record (empty before the run was joined, or without a home).
    QString recordFolder() const { return m_folder; }

private:
    void emitEvent(const QJsonObject& e) const;
    void writeRecord(const QString& status, const QString& failure) const;

    std::function<void(const QJsonObject&)> m_sink;
    QString m_coordinatorId, m_coordinatorName;
    // Since the last progress event: samples and their loss, and when it began.
    int64_t m_total = 0, m_samples = 0;
    double m_lossSum = 0;
    QElapsedTimer m_since;
    // The whole part: its steps, the loss over all of its samples, the last step's share, and
    // the wall time it computed (pauses left out).
    int64_t m_steps = 0;
    double m_totalLossSum = 0, m_share = 0, m_busyMs = 0;
    QElapsedTimer m_lastSent;
    QString m_home, m_deviceTag, m_folder, m_data;
    QJsonObject m_lent; // coordinator, coordinator_id, run, mode, device
};

} // namespace tandem
