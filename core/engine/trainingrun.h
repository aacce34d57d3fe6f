#pragma once

#include "engine/training.h"

#include <QMetaType>
#include <QObject>
#include <QThread>

#include <memory>
#include <optional>

namespace tandem {

// One training run on a thread of its own, for a front end that must stay responsive. The
// engine's observer callbacks become signals carrying value types; the owner's thread
// receives them queued. Pause, resume and stop go through RunControl, which the training loop
// checks between steps, so none of them blocks the caller.
class TrainingRun : public QObject {
    Q_OBJECT

public:
    enum class State { Idle, Running, Paused, Stopping, Finished, Stopped, Failed };
    Q_ENUM(State)

    explicit TrainingRun(QObject* parent = nullptr);
    // Asks a running training to stop and waits for it (it checkpoints first).
    ~TrainingRun() override;

    // Returns false (and does nothing) unless the state is Idle, Finished, Stopped or Failed.
    bool start(const RunConfig& config, const QString& resumeFrom = {});
    void pause();
    void resume();
    void stop();

    State state() const { return m_state; }
    bool active() const {
        return m_state == State::Running || m_state == State::Paused || m_state == State::Stopping;
    }

Q_SIGNALS:
    void stateChanged(tandem::TrainingRun::State state);
    void started(const tandem::RunInfo& info);
    void stepped(const tandem::StepMetrics& metrics);
    void epochEnded(const tandem::EpochMetrics& metrics);
    void message(const QString& text);
    void event(const tandem::RunEvent& event);
    // An epoch's end: the test split is being evaluated, `done` of `total` samples.
    void evaluating(qint64 done, qint64 total);
    void finished(const tandem::RunSummary& summary);
    void failed(const tandem::Error& error);

private:
    class Observer;
    void setState(State s);
    void onThreadFinished();

    State m_state = State::Idle;
    std::unique_ptr<RunControl> m_control;
    std::unique_ptr<Observer> m_observer;
    std::unique_ptr<QThread> m_thread;
    std::optional<Expected<RunSummary>> m_result; // written by the thread, read after it ends
};

} // namespace tandem

Q_DECLARE_METATYPE(tandem::RunInfo)
Q_DECLARE_METATYPE(tandem::StepMetrics)
Q_DECLARE_METATYPE(tandem::EpochMetrics)
Q_DECLARE_METATYPE(tandem::RunSummary)
Q_DECLARE_METATYPE(tandem::Error)
Q_DECLARE_METATYPE(tandem::RunEvent)
