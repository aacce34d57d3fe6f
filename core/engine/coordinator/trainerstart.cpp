// What the Trainer does as a run starts: a resumed run's place and optimizer state taken from
// its checkpoint; the run's figures for a front end (RunInfo), the log's line, and a warning
// where a language model would make too few steps to learn.

#include "engine/coordinator/trainer.h"
#include "engine/step/modelcheck.h"
#include "model/tensors.h"

namespace tandem {

Status Trainer::restore() {
    if (!m_ckpt)
        return success();
    const RunState& s = m_ckpt->state;
    if (!m_sampler->seek(s.epoch, s.position))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: sampler position %2 is outside the dataset")
                             .arg(m_resumeFrom)
                             .arg(s.position));
    // A sharded run's owners take the state, each its range, read from the checkpoint as the
    // ranges are cut (setUpShards()): here, the count of steps alone.
    const bool toOwners = m_cfg.shard && m_ckpt->optimizerSteps > 0;
    // Otherwise a tensor at a time from the checkpoint, each held once: the optimizer takes them
    // as they are.
    NamedTensors state;
    for (const LazyTensor& l : toOwners ? QList<LazyTensor>{} : m_ckpt->optimizerState) {
        auto t = readLazy(l);
        if (!t)
            return makeError(t.error().code,
                             QStringLiteral("%1: %2").arg(m_resumeFrom, t.error().message));
        state.emplace_back(l.name.toStdString(), std::move(*t));
    }
    if (!toOwners)
        m_ckpt->optimizerState.clear(); // and the file goes
    if (auto st = m_optimizer->restore(m_ckpt->optimizerSteps, state); !st)
        return makeError(st.error().code,
                         QStringLiteral("%1: %2").arg(m_resumeFrom, st.error().message));
    m_state.step = s.step;
    m_state.completedEpochs = s.completedEpochs;
    m_state.lastTest = s.lastTest;
    m_epochAcc =
        Accum{s.epochLossSum, s.epochCorrect, s.epochCounted, s.epochSamples, s.epochSteps};
    return success();
}

void Trainer::announceStart() {
    m_stepsPerEpoch = m_sampler->stepsPerEpoch(m_policy->samplesPerStep(m_cfg));
    m_totalSteps = m_stepsPerEpoch * m_cfg.epochs;
    RunInfo info;
    info.model = m_cfg.model;
    info.loss = m_objective.loss;
    info.task = m_objective.task;
    info.datasetDescription = m_data->description;
    info.trainSamples = m_data->train.count();
    info.testSamples = m_data->test.count();
    info.parameters = m_parameterCount;
    info.frozenParameters = m_frozenCount;
    info.stepsPerEpoch = m_stepsPerEpoch;
    info.totalSteps = m_totalSteps;
    info.startStep = m_state.step;
    if (m_objective.task == Task::Sequence || m_objective.task == Task::Preference)
        info.tokensPerSample = m_data->train.targetSize();
    info.devices = m_devices;
    m_obs.onStart(info);
    m_obs.onMessage(QStringLiteral("training %1 (%2) on %3: %4 training and %5 test samples, "
                                   "%6 thread(s), %7 worker(s)")
                        .arg(m_cfg.model, describeParameters(m_master), m_data->description)
                        .arg(m_data->train.count())
                        .arg(m_data->test.count())
                        .arg(m_threads)
                        .arg(m_pool.size()));
    if (m_data->train.targets == Dataset::Targets::Ids && m_state.step == 0)
        if (const QString w =
                fewStepsWarning(m_data->train.count(), m_cfg.batch, m_cfg.epochs, m_cfg.maxSteps);
            !w.isEmpty())
            m_obs.onMessage(QStringLiteral("warning: ") + w);
}

} // namespace tandem
