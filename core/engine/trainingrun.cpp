#include "engine/trainingrun.h"

namespace tandem {

// Runs on the training thread: every callback only emits, and the signals reach the owner's
// thread queued. onWaiting lets a stop requested while waiting for workers take effect.
class TrainingRun::Observer : public RunObserver {
public:
    explicit Observer(TrainingRun* run)
        : m_run(run) {}
    void onStart(const RunInfo& i) override { Q_EMIT m_run->started(i); }
    void onStep(const StepMetrics& m) override { Q_EMIT m_run->stepped(m); }
    void onEpoch(const EpochMetrics& m) override { Q_EMIT m_run->epochEnded(m); }
    void onMessage(const QString& s) override { Q_EMIT m_run->message(s); }
    void onEvent(const RunEvent& e) override { Q_EMIT m_run->event(e); }
    void onEvaluating(int64_t done, int64_t total) override {
        Q_EMIT m_run->evaluating(qint64(done), qint64(total));
    }

private:
    TrainingRun* m_run;
};

TrainingRun::TrainingRun(QObject* parent)
    : QObject(parent) {
    qRegisterMetaType<tandem::RunInfo>();
    qRegisterMetaType<tandem::StepMetrics>();
    qRegisterMetaType<tandem::EpochMetrics>();
    qRegisterMetaType<tandem::RunSummary>();
    qRegisterMetaType<tandem::Error>();
    qRegisterMetaType<tandem::RunEvent>();
    qRegisterMetaType<tandem::TrainingRun::State>();
}

TrainingRun::~TrainingRun() {
    if (m_thread) {
        m_control->stop();
        m_thread->wait();
    }
}

bool TrainingRun::start(const RunConfig& config, const QString& resumeFrom) {
    if (active() || m_thread)
        return false;
    m_result.reset();
    m_control = std::make_unique<RunControl>();
    m_observer = std::make_unique<Observer>(this);
    RunControl* control = m_control.get();
    Observer* observer = m_observer.get();
    m_thread.reset(QThread::create([this, config, resumeFrom, control, observer] {
        m_result = runTraining(config, resumeFrom, observer, control);
    }));
    m_thread->setObjectName(QStringLiteral("training"));
    connect(m_thread.get(), &QThread::finished, this, &TrainingRun::onThreadFinished,
            Qt::QueuedConnection);
    setState(State::Running);
    m_thread->start();
    return true;
}

void TrainingRun::pause() {
    if (m_state != State::Running)
        return;
    m_control->pause();
    setState(State::Paused);
}

void TrainingRun::resume() {
    if (m_state != State::Paused)
        return;
    m_control->resume();
    setState(State::Running);
}

void TrainingRun::stop() {
    if (m_state != State::Running && m_state != State::Paused)
        return;
    m_control->stop();
    // A paused loop waits in waitWhilePaused; stop wakes it.
    setState(State::Stopping);
}

void TrainingRun::onThreadFinished() {
    m_thread->wait();
    m_thread.reset();
    Expected<RunSummary> result =
        m_result ? *m_result
                 : Expected<RunSummary>(
                       makeError(ErrorCode::Runtime, QStringLiteral("the training thread ended "
                                                                    "without a result")));
    if (!result) {
        setState(State::Failed);
        Q_EMIT failed(result.error());
        return;
    }
    setState(result->finished ? State::Finished : State::Stopped);
    Q_EMIT finished(*result);
}

void TrainingRun::setState(State s) {
    if (s == m_state)
        return;
    m_state = s;
    Q_EMIT stateChanged(s);
}

} // namespace tandem
