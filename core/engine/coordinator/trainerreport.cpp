// The Trainer's reports on its steps: their figures, read off the device when one is due, and
// the traffic ledger's lines (RunConfig::trafficLedger).

#include "engine/coordinator/trainer.h"

#include <QElapsedTimer>

#include <cmath>
#include <limits>

namespace tandem {

// The steps applied since the last report: their figures read off the device in one go, then
// each step checked (a diverged loss ends the run, with a checkpoint), counted into the epoch's
// figures, recorded and shown.
Status Trainer::reportSteps() {
    std::vector<PendingStep> steps = std::move(m_pendingSteps);
    m_pendingSteps.clear();
    m_sinceFigures.restart();
    std::vector<at::Tensor> losses, counts;
    for (const PendingStep& p : steps)
        if (p.figures.defined()) {
            losses.push_back(p.figures.lossSum.reshape({1}));
            if (p.figures.correct.defined())
                counts.push_back(at::stack({p.figures.correct, p.figures.counted}));
        }
    at::Tensor lossValues, countValues;
    if (!losses.empty()) {
        // The one wait on the device for all of them, counted as training time.
        QElapsedTimer waited;
        waited.start();
        LedgerScope purpose(LedgerPurpose::Figures);
        lossValues = at::cat(losses).to(at::kCPU).to(at::kDouble);
        if (!counts.empty())
            countValues = at::stack(counts).to(at::kCPU);
        m_trainSeconds += double(waited.nsecsElapsed()) / 1e9;
    }
    int64_t li = 0, ci = 0;
    for (PendingStep& p : steps) {
        if (p.figures.defined()) {
            p.lossSum += lossValues[li++].item<double>();
            if (p.figures.correct.defined()) {
                p.correct += countValues[ci][0].item<int64_t>();
                p.counted += countValues[ci][1].item<int64_t>();
                ++ci;
            }
        }
        m_epochAcc.lossSum += p.lossSum;
        m_epochAcc.correct += p.correct;
        m_epochAcc.counted += p.counted;
        StepMetrics& sm = p.metrics;
        sm.loss = sm.samples ? p.lossSum / double(sm.samples) : 0;
        sm.accuracy = p.counted ? double(p.correct) / double(p.counted)
                                : std::numeric_limits<double>::quiet_NaN();
        if (!std::isfinite(sm.loss)) {
            (void)saveCheckpoint();
            shutdown(QStringLiteral("the run failed"));
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("the loss became %1 at step %2; lower the learning "
                                            "rate (now %3) and start again")
                                 .arg(sm.loss)
                                 .arg(sm.step)
                                 .arg(m_cfg.lr));
        }
        if (const QString e = m_recorder.step(sm); !e.isEmpty())
            m_obs.onMessage(QStringLiteral("%1; training goes on, but metrics.jsonl misses the "
                                           "steps from %2 on")
                                .arg(e)
                                .arg(sm.step));
        m_obs.onStep(sm);
    }
    return success();
}

// The log's line on what crossed between host and device: after the first step, which moves
// the model and sets up, and then every 100 steps, averaged over them.
// `last`: the run's steps are over, and those since the last line are reported too.
void Trainer::noteTraffic(bool last) {
    const int64_t steps = m_state.step - m_trafficFromStep;
    if (last ? steps == 0 || m_stepsThisRun <= steps : m_stepsThisRun != 1 && steps < 100)
        return;
    const TrafficLedger now = trafficLedger();
    const TrafficLedger d = now - m_trafficMark - m_trafficAside;
    if (m_stepsThisRun == 1) {
        m_obs.onMessage(QStringLiteral("traffic in step %1 (the first: it sets up): %2")
                            .arg(m_state.step)
                            .arg(d.summary(1)));
    } else {
        m_obs.onMessage(QStringLiteral("traffic per step, steps %1-%2: %3")
                            .arg(m_trafficFromStep + 1)
                            .arg(m_state.step)
                            .arg(d.summary(steps)));
        for (size_t i = 0; i < kLedgerPurposes; ++i)
            m_trafficSteady.by[i] += d.by[i];
        m_trafficSteadySteps += steps;
    }
    m_trafficMark = now;
    m_trafficAside = TrafficLedger{};
    m_trafficFromStep = m_state.step;
}

// The ledger's figures per step after the first, for the summary.
void Trainer::summarizeTraffic(RunSummary& sum) const {
    const int64_t n = std::max<int64_t>(1, m_trafficSteadySteps);
    sum.trafficPerStep = m_trafficSteady.summary(n);
    for (size_t i = 0; i < kLedgerPurposes; ++i) {
        const TrafficCounts& c = m_trafficSteady.by[i];
        const auto per = [n](int64_t v) { return double(v) / double(n); };
        QJsonObject o{{QStringLiteral("copies_in"), per(c.copiesIn)},
                      {QStringLiteral("bytes_in"), per(c.bytesIn)},
                      {QStringLiteral("copies_out"), per(c.copiesOut)},
                      {QStringLiteral("bytes_out"), per(c.bytesOut)},
                      {QStringLiteral("copies_between_devices"), per(c.copiesAcross)},
                      {QStringLiteral("bytes_between_devices"), per(c.bytesAcross)},
                      {QStringLiteral("syncs"), per(c.syncs)}};
        if (LedgerPurpose(i) == LedgerPurpose::Optimizer) {
            o.insert(QStringLiteral("kernels"), per(c.kernels));
            o.insert(QStringLiteral("optimizer_steps"), per(c.steps));
        }
        sum.traffic.insert(purposeName(LedgerPurpose(i)), o);
    }
    sum.traffic.insert(QStringLiteral("steps"), qint64(m_trafficSteadySteps));
}

} // namespace tandem
