#pragma once

// `tandem train --events FILE|-`: what happens in a run as typed JSON lines, written and
// flushed as it happens, for a program that drives tandem (the sweep runner) to read instead
// of the English log on stderr. One object a line, with "event" naming its kind:
//   started      model, data, loss, objective, steps, parameters
//   step         step, epoch, loss, samples_per_s
//   evaluated    epoch and the test figures (test_loss, test_accuracy, …)
//   worker_joined, worker_dropped, worker_left_out, worker_back, invite_declined  worker,
//                reason, step (RunEvent)
//   paused, resumed, workers_gone, checkpoint_written   step
//   mode_chosen  reason: what automatic mode chose, and why
//   finished     the summary's fields (finished: false when stopped early)
//   failed       code (ErrorCode's name: "out-of-memory", …), subject, message
// With "-" the lines go to stdout before the summary, which stays the last line.

#include "common/expected.h"
#include "engine/training.h"

#include <QFile>
#include <QJsonObject>

#include <memory>
#include <mutex>

namespace tandem::cli {

class EventLog {
public:
    static Expected<std::unique_ptr<EventLog>> open(const QString& target);

    void started(const RunInfo& info);
    void step(const StepMetrics& m);
    void evaluated(const EpochMetrics& m);
    void event(const RunEvent& e);
    void finished(const RunSummary& s);
    void failed(const Error& e);
    // An event of `tandem worker --events` (WorkerOptions::events), as it is.
    void write(const QJsonObject& o);

private:
    EventLog() = default;

    std::mutex m_mutex;
    QFile m_file;
    bool m_stdout = false;
};

} // namespace tandem::cli
