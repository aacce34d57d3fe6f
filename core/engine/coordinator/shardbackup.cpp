// A sharded run that goes on without a machine it loses (shardconductor.h): the coordinator logs
// what each step adds to every range (shardlog.h), and rebuilds the whole run's state after the
// last step every machine finished, for a setup on the machines left.

#include "engine/coordinator/shardconductor.h"

#include "engine/coordinator/hub.h"

#include <QDir>

namespace tandem {

ShardConductor::~ShardConductor() {
    m_logs.clear();
    if (!m_backupDir.isEmpty())
        QDir(m_backupDir).removeRecursively();
}

bool ShardConductor::backedUp() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return !m_backupDir.isEmpty() && m_logFailure.isEmpty() && !m_logs.empty();
}

QString ShardConductor::logFailure() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_logFailure;
}

qint64 ShardConductor::logBytes() const {
    return m_logBytes.load();
}

QStringList ShardConductor::lost() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_lost;
}

std::vector<QByteArray> ShardConductor::setupBases(const std::vector<QByteArray>& states,
                                                   int64_t steps) const {
    const ShardLayout layout = ShardLayout::of(*m_replica);
    std::vector<QByteArray> out;
    for (size_t r = 0; r < m_ranges.size(); ++r) {
        // A resumed run's range state holds its weights already; a new run's range starts from
        // the replica's weights and no state.
        if (steps > 0 && r < states.size() && !states[r].isEmpty()) {
            out.push_back(states[r]);
            continue;
        }
        out.push_back(ShardOwner::fromParams(layout, m_ranges[r].begin, m_ranges[r].end, *m_replica,
                                             m_optimizer)
                          .rangeStateBytes());
    }
    return out;
}

Status ShardConductor::startLogs(int64_t firstStep, int64_t steps,
                                 const std::vector<QByteArray>& bases) {
    m_logs.clear();
    m_logBytes = 0;
    m_logs.resize(m_ranges.size());
    if (!QDir().mkpath(m_backupDir))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot make the folder %1 for the sharded run's logs")
                             .arg(m_backupDir));
    for (size_t r = 0; r < m_ranges.size(); ++r)
        if (auto st = restartLog(r, firstStep, steps, bases[r]); !st) {
            m_logs.clear();
            m_logBytes = 0;
            return st;
        }
    return success();
}

Status ShardConductor::restartLog(size_t r, int64_t firstStep, int64_t steps,
                                  const QByteArray& base) {
    const ShardLayout layout = ShardLayout::of(*m_replica);
    const ShardOwner shape(layout, m_ranges[r].begin, m_ranges[r].end,
                           at::zeros({m_ranges[r].end - m_ranges[r].begin}, at::kFloat),
                           m_optimizer);
    if (m_logs[r])
        m_logBytes -= m_logs[r]->bytes();
    m_logs[r].reset();
    auto log =
        ShardLog::create(QDir(m_backupDir).filePath(QStringLiteral("range-%1.log").arg(r + 1)),
                         shape, firstStep, steps, base);
    if (!log)
        return log.error();
    m_logs[r] = std::move(*log);
    return success();
}

void ShardConductor::noteLog(const Status& st) {
    // The run goes on; a machine it loses now would stop it.
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!st && m_logFailure.isEmpty())
        m_logFailure =
            QStringLiteral("the log of the ranges' steps stopped: %1").arg(st.error().message);
}

void ShardConductor::onSummed(size_t range, const ShardLog::Span& span) {
    if (range >= m_logs.size() || !m_logs[range])
        return;
    const qint64 before = m_logs[range]->bytes();
    noteLog(m_logs[range]->append(span));
    m_logBytes += m_logs[range]->bytes() - before;
}

void ShardConductor::stop() {
    if (!m_hub)
        return;
    m_hub->runOnNetwork([this] {
        delete m_machine;
        m_machine = nullptr;
    });
}

Expected<ShardConductor::Rebuilt> ShardConductor::rebuild(int64_t throughStep) const {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_logFailure.isEmpty())
            return makeError(ErrorCode::Runtime, m_logFailure);
    }
    if (m_logs.size() != m_ranges.size())
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("the sharded run keeps no log of its ranges"));
    const ShardLayout layout = ShardLayout::of(*m_replica);
    std::vector<std::unique_ptr<ShardOwner>> owners;
    std::vector<const ShardOwner*> all;
    for (const auto& log : m_logs) {
        auto owner = ShardLog::rebuild(log->path(), layout, m_optimizer, throughStep);
        if (!owner)
            return owner.error();
        owners.push_back(std::move(*owner));
        all.push_back(owners.back().get());
    }
    Rebuilt out;
    out.steps = owners.front()->stepCount();
    for (const ShardOwner* o : all)
        if (o->stepCount() != out.steps)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the logs of the run's ranges rebuild %1 and %2 steps")
                                 .arg(out.steps)
                                 .arg(o->stepCount()));
    auto masters = ShardOwner::gatherMasters(all);
    if (!masters)
        return masters.error();
    auto state = ShardOwner::gatherState(all);
    if (!state)
        return state.error();
    out.masters = std::move(*masters);
    out.state = std::move(*state);
    return out;
}

} // namespace tandem
