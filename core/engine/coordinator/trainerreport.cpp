// The Trainer's reports on its steps: their figures, read off the device when one is due, the
// traffic ledger's and the step split's lines (RunConfig::trafficLedger, stepSplit), the run's
// summary, and where the run stands for a checkpoint.

#include "engine/coordinator/trainer.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>

#include <cmath>
#include <limits>

namespace tandem {

void Trainer::noteEpochState() {
    m_state.epoch = m_sampler->epoch();
    m_state.position = m_sampler->position();
    m_state.epochLossSum = m_epochAcc.lossSum;
    m_state.epochCorrect = m_epochAcc.correct;
    m_state.epochCounted = m_epochAcc.counted;
    m_state.epochSamples = m_epochAcc.samples;
    m_state.epochSteps = m_epochAcc.steps;
}

// The steps applied since the last report: their figures read off the device in one go, then
// each step checked (a diverged loss ends the run, with a checkpoint), counted into the epoch's
// figures, recorded and shown.
Status Trainer::reportSteps() {
    std::vector<PendingStep> steps = std::move(m_pendingSteps);
    m_pendingSteps.clear();
    m_sinceFigures.restart();
    std::vector<at::Tensor> losses, counts, pairs;
    for (const PendingStep& p : steps)
        if (p.figures.defined()) {
            losses.push_back(p.figures.lossSum.reshape({1}));
            if (p.figures.correct.defined())
                counts.push_back(at::stack({p.figures.correct, p.figures.counted}));
            if (p.figures.pairSums.defined())
                pairs.push_back(p.figures.pairSums.to(at::kFloat));
        }
    at::Tensor lossValues, countValues, pairValues;
    if (!losses.empty()) {
        // The one wait on the device for all of them, counted as training time.
        QElapsedTimer waited;
        waited.start();
        LedgerScope purpose(LedgerPurpose::Figures);
        lossValues = at::cat(losses).to(at::kCPU).to(at::kDouble);
        if (!counts.empty())
            countValues = at::stack(counts).to(at::kCPU);
        if (!pairs.empty())
            pairValues = at::stack(pairs).to(at::kCPU).to(at::kDouble);
        m_trainSeconds += double(waited.nsecsElapsed()) / 1e9;
    }
    int64_t li = 0, ci = 0, pi = 0;
    for (PendingStep& p : steps) {
        if (p.figures.defined()) {
            p.lossSum += lossValues[li++].item<double>();
            if (p.figures.correct.defined()) {
                p.correct += countValues[ci][0].item<int64_t>();
                p.counted += countValues[ci][1].item<int64_t>();
                ++ci;
            }
            // A preference batch counts its pairs (objective.h's batchLoss).
            if (p.figures.pairSums.defined())
                p.pairs.add(
                    pairFiguresOf(pairValues[pi++], countValues[ci - 1][1].item<int64_t>()));
        }
        m_epochAcc.lossSum += p.lossSum;
        m_epochAcc.correct += p.correct;
        m_epochAcc.counted += p.counted;
        StepMetrics& sm = p.metrics;
        sm.pairs = p.pairs;
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

void Trainer::SplitSum::add(const StepSplit& s, double ms) {
    phases.localMs += s.localMs;
    phases.wireMs += s.wireMs;
    phases.waitMs += s.waitMs;
    phases.optimizerMs += s.optimizerMs;
    stepMs += ms;
    ++steps;
}

// The log's line on where a step's time goes: every 100 steps after the first (which sets up),
// averaged over them.
void Trainer::noteSplit(const StepOutcome* step) {
    if (step && m_stepsThisRun > 1) {
        m_splitWindow.add(step->split, step->stepMs);
        m_splitRun.add(step->split, step->stepMs);
    }
    const SplitSum& w = m_splitWindow;
    if (w.steps == 0 || (step && w.steps < 100))
        return;
    const double n = double(w.steps);
    const auto ms = [n](double v) { return QString::number(v / n, 'f', 2); };
    const double rest = std::max(0.0, w.stepMs - w.phases.localMs - w.phases.wireMs -
                                          w.phases.waitMs - w.phases.optimizerMs);
    m_obs.onMessage(QStringLiteral("time per step, steps %1-%2: %3 ms: local pass %4, wire %5, "
                                   "waiting for other workers %6, optimizer %7, the rest %8 "
                                   "(each phase timed to the device's end of it)")
                        .arg(m_state.step - w.steps + 1)
                        .arg(m_state.step)
                        .arg(ms(w.stepMs), ms(w.phases.localMs), ms(w.phases.wireMs),
                             ms(w.phases.waitMs), ms(w.phases.optimizerMs), ms(rest)));
    m_splitWindow = SplitSum{};
}

void Trainer::summarizeSplit(RunSummary& sum) const {
    const SplitSum& r = m_splitRun;
    const double n = double(std::max<int64_t>(1, r.steps));
    sum.stepSplit = QJsonObject{{QStringLiteral("local_pass_ms"), r.phases.localMs / n},
                                {QStringLiteral("wire_ms"), r.phases.wireMs / n},
                                {QStringLiteral("waiting_ms"), r.phases.waitMs / n},
                                {QStringLiteral("optimizer_ms"), r.phases.optimizerMs / n},
                                {QStringLiteral("step_ms"), r.stepMs / n},
                                {QStringLiteral("steps"), qint64(r.steps)}};
}

// The run as it ended, for the summary.
RunSummary Trainer::summarize(bool stopped) {
    RunSummary sum;
    sum.model = m_cfg.model;
    sum.mode = m_cfg.mode;
    sum.data = m_cfg.data;
    sum.datasetHash = QString::fromLatin1(m_data->contentHash);
    sum.outDir = QDir(m_cfg.outDir).absolutePath();
    sum.checkpoint = QFileInfo(m_recorder.checkpointPath()).absoluteFilePath();
    sum.finished = !stopped;
    sum.epochs = m_state.completedEpochs;
    sum.steps = m_state.step;
    sum.samples = m_samplesThisRun;
    const Accum& reported = m_epochAcc.steps > 0 ? m_epochAcc : m_lastEpoch;
    sum.trainLoss = reported.loss();
    sum.trainAccuracy = reported.accuracy();
    sum.test = m_state.lastTest;
    sum.loss = m_objective.loss;
    sum.task = m_objective.task;
    sum.trainSeconds = m_trainSeconds;
    sum.trainableParameters = m_parameterCount;
    sum.frozenParameters = m_frozenCount;
    sum.samplesPerS = m_trainSeconds > 0 ? double(m_samplesThisRun) / m_trainSeconds : 0;
    if (m_objective.task == Task::Sequence || m_objective.task == Task::Preference)
        sum.tokensPerS = sum.samplesPerS * double(m_data->train.targetSize());
    sum.workers = m_pool.summaries();
    // Per step and remote worker that took part in it: a worker the balancer gave nothing in a
    // step moved nothing in it either.
    const auto [remoteBytes, served] = m_pool.remoteBytes();
    sum.staleDropped = m_ctx ? m_ctx->staleDropped : 0;
    sum.wireBytesPerStep = served > 0 ? double(remoteBytes) / double(served) : 0;
    sum.memoryPlan = m_localPlan;
    if (m_cfg.trafficLedger)
        summarizeTraffic(sum);
    if (m_splitRun.steps > 0)
        summarizeSplit(sum);
    if (m_shards)
        summarizeShards(sum);
    return sum;
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
