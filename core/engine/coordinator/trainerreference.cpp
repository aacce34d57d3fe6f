// DPO on every weight: the reference's log-probabilities of every pair, computed before training
// from the model the run started from.

#include "engine/coordinator/trainer.h"
#include "model/openmodel.h"

#include <QElapsedTimer>

namespace tandem {

// DPO on every weight: the reference is the model the run started from, whose log-probabilities
// of every pair's answers are computed once, before training (again when a run resumes, from the
// model it names: the checkpoint holds the trained weights). Eight bytes a pair, where keeping a
// frozen copy would cost the model's weights again on every machine.
Status Trainer::computeReference() {
    Model start = m_module;
    if (m_ckpt) {
        auto m = openModel(ModelSource::parse(m_cfg.model),
                           {m_cfg.lora, m_cfg.checkpointActivations, m_cfg.seed});
        if (!m)
            return m.error();
        start = *m;
    }
    const int64_t pairs = m_data->train.count() + m_data->test.count();
    m_obs.onMessage(QStringLiteral("DPO on every weight: the reference's log-probabilities of "
                                   "%1 pair(s), from %2 as the run starts, before training")
                        .arg(pairs)
                        .arg(m_cfg.model));
    QElapsedTimer clock;
    clock.start();
    try {
        onComputeThread([&] {
            m_objective.reference = std::make_shared<const std::vector<float>>(referenceLogps(
                start, m_data->train, m_cfg.evalBatch,
                [this, pairs](int64_t done, int64_t) { m_obs.onEvaluating(done, pairs); }));
            const int64_t trained = m_data->train.count();
            m_objective.testReference = std::make_shared<const std::vector<float>>(
                referenceLogps(start, m_data->test, m_cfg.evalBatch,
                               [this, pairs, trained](int64_t done, int64_t) {
                                   m_obs.onEvaluating(trained + done, pairs);
                               }));
        });
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("computing DPO's reference failed: %1").arg(firstLine(e)));
    }
    m_obs.onMessage(QStringLiteral("the reference is computed (%1 s)")
                        .arg(clock.elapsed() / 1000.0, 0, 'f', 1));
    return success();
}

} // namespace tandem
