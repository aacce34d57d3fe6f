// A sharded sync run (RunConfig::shard) as the Trainer drives it: the conductor the hub reports
// to, the setup of every machine's range once the workers have joined, and the optimizer's state
// gathered for a checkpoint (shardconductor.h).

#include "engine/coordinator/trainer.h"

#include <QElapsedTimer>

namespace tandem {

Status Trainer::shardHub(HubConfig& hc) {
    if (m_frozenCount > 0)
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("--shard is for a model whose every weight trains; %1 "
                                        "has %2 frozen values: leave out --shard")
                             .arg(m_cfg.model)
                             .arg(m_frozenCount));
    m_shards = std::make_unique<ShardConductor>();
    hc.sharded = true;
    hc.shardReport = [c = m_shards.get()](const QString& id, const wire::ShardReport& r) {
        c->onReport(id, r);
    };
    hc.shardLost = [c = m_shards.get()](const QString& id, const QString& why) {
        c->onLost(id, why);
    };
    hc.shardState = [c = m_shards.get()](const QString& id, int64_t steps,
                                         const QByteArray& state) { c->onState(id, steps, state); };
    return success();
}

Status Trainer::startShards() {
    std::vector<QString> workers;
    for (size_t w : m_pool.live())
        if (m_pool.at(w).remote)
            workers.push_back(m_pool.at(w).link->deviceId());
    if (workers.empty())
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("no worker joined the sharded run; it needs at least one "
                                        "beside this machine"));
    QElapsedTimer clock;
    clock.start();
    if (auto st = m_shards->start(m_hub.get(), workers, &m_master.params, storageDtype(m_cfg.wire),
                                  m_runOptimizer, m_state.step, m_optimizer.get(), kShardSetupMs);
        !st)
        return st;
    // The owners hold the state from now on (a resumed run's, cut into their ranges). Emptying
    // it cannot fail: there is nothing to check.
    (void)m_optimizer->restore(m_optimizer->stepCount(), {});
    QStringList held;
    for (const ShardRange& r : m_shards->ranges())
        held << QStringLiteral("%1: values %2 to %3")
                    .arg(r.owner == m_shards->selfId() ? QStringLiteral("this machine")
                                                       : QStringLiteral("device %1").arg(r.owner))
                    .arg(r.begin)
                    .arg(r.end);
    m_obs.onMessage(QStringLiteral("sharded the optimizer across %1 machines in %2 s (%3)")
                        .arg(workers.size() + 1)
                        .arg(clock.elapsed() / 1000.0, 0, 'f', 1)
                        .arg(held.join(QStringLiteral("; "))));
    return success();
}

Status Trainer::gatherShardState() {
    if (!m_shards)
        return success();
    // The owners hold the optimizer's state: it comes here for the checkpoint, in the
    // one-owner run's names, so that the run resumes on any set of machines, and goes again
    // once written.
    auto gathered = m_shards->gatherState(kShardSetupMs);
    if (!gathered)
        return gathered.error();
    QList<TensorRecord> records;
    for (const auto& [name, t] : gathered->second)
        records << toRecord(name, t);
    return m_optimizer->restore(gathered->first, records);
}

} // namespace tandem
