#include "engine/shard/shardstep.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <limits>
#include <set>

namespace tandem {

ShardRoute::ShardRoute(std::vector<std::pair<int64_t, int64_t>> ranges, DType wire)
    : m_ranges(std::move(ranges))
    , m_element(dtypeSize(wire)) {}

std::pair<qint64, qint64> ShardRoute::bytesOf(size_t r) const {
    const auto [begin, end] = m_ranges[r];
    return {begin * m_element, (end - begin) * m_element};
}

std::vector<size_t> ShardRoute::readyUpTo(qint64 ready) {
    std::vector<size_t> out;
    // Parts no smaller than any range are the whole ranges.
    for (const Part& p : partsUpTo(ready, std::numeric_limits<qint64>::max()))
        out.push_back(p.range);
    return out;
}

std::vector<ShardRoute::Part> ShardRoute::partsUpTo(qint64 ready, qint64 minBytes) {
    std::vector<Part> out;
    while (m_next < m_ranges.size()) {
        const auto [at, size] = bytesOf(m_next);
        const qint64 upTo = std::min(ready, at + size);
        if (upTo <= m_sent || (upTo < at + size && upTo - m_sent < minBytes))
            break;
        out.push_back({m_next, m_sent - at, upTo - m_sent});
        m_sent = upTo;
        if (upTo < at + size)
            break;
        ++m_next;
    }
    return out;
}

OwnerStep::OwnerStep(ShardOwner& owner, DType wire)
    : m_owner(owner)
    , m_wire(wire)
    , m_bytes(owner.bundleBytes(wire).second) {}

void OwnerStep::open(int64_t step) {
    m_step = step;
    m_closed = false;
    m_parts.clear();
}

Status OwnerStep::stale(int64_t step, const char* what) const {
    if (step == m_step && !m_closed)
        return success();
    return makeError(ErrorCode::InvalidArgument,
                     m_step < 0 ? QStringLiteral("%1 for step %2 before any step began")
                                      .arg(QLatin1String(what))
                                      .arg(step + 1)
                     : step == m_step ? QStringLiteral("%1 for step %2, which is closed")
                                            .arg(QLatin1String(what))
                                            .arg(step + 1)
                                      : QStringLiteral("%1 for step %2 during step %3")
                                            .arg(QLatin1String(what))
                                            .arg(step + 1)
                                            .arg(m_step + 1));
}

Expected<bool> OwnerStep::receive(int64_t step, const QString& worker, qint64 offset,
                                  const QByteArray& bytes) {
    if (auto st = stale(step, "gradients"); !st)
        return st.error();
    const auto it = m_parts.find(worker);
    const qint64 have = it == m_parts.end() ? 0 : it->second.size();
    if (have == m_bytes)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("more gradients from %1 after its whole range of %2 bytes")
                             .arg(worker)
                             .arg(m_bytes));
    if (offset != have || bytes.size() > m_bytes - have)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("gradients from %1 for bytes %2 to %3 of a range of %4, "
                                        "after %5 bytes")
                             .arg(worker)
                             .arg(offset)
                             .arg(offset + bytes.size())
                             .arg(m_bytes)
                             .arg(have));
    QByteArray& part = m_parts[worker];
    if (part.isEmpty())
        part.reserve(m_bytes);
    part.append(bytes);
    if (part.size() < m_bytes)
        return false;
    // A range that is not finite would spoil the step for every worker: it is dropped here, and
    // the coordinator leaves its worker out on every owner.
    at::NoGradGuard noGrad;
    const at::Tensor values = at::from_blob(part.data(), {m_bytes / dtypeSize(m_wire)},
                                            at::TensorOptions(scalarTypeOf(m_wire)));
    if (!at::isfinite(values).all().item<bool>()) {
        m_parts.erase(worker);
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("gradients from %1 that are not finite").arg(worker));
    }
    return true;
}

void OwnerStep::forget(const QString& worker) {
    m_parts.erase(worker);
}

bool OwnerStep::whole(const QString& worker) const {
    const auto it = m_parts.find(worker);
    return it != m_parts.end() && it->second.size() == m_bytes;
}

qint64 OwnerStep::received(const QString& worker) const {
    const auto it = m_parts.find(worker);
    return it == m_parts.end() ? 0 : it->second.size();
}

std::vector<QString> OwnerStep::wholeWorkers() const {
    std::vector<QString> out;
    for (const auto& [worker, part] : m_parts)
        if (part.size() == m_bytes)
            out.push_back(worker);
    return out;
}

Status OwnerStep::check(int64_t step,
                        const std::vector<std::pair<QString, double>>& counted) const {
    if (auto st = stale(step, "a close"); !st)
        return st;
    std::set<QString> seen;
    for (const auto& [worker, weight] : counted) {
        if (!seen.insert(worker).second)
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("step %1 closed with %2 twice").arg(step + 1).arg(worker));
        if (!std::isfinite(weight) || weight < 0)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("step %1 closed with %2 weighted %3")
                                 .arg(step + 1)
                                 .arg(worker)
                                 .arg(weight));
    }
    return success();
}

bool OwnerStep::wholeFor(const std::vector<std::pair<QString, double>>& counted) const {
    return std::all_of(counted.begin(), counted.end(),
                       [this](const auto& w) { return whole(w.first); });
}

Expected<QByteArray>
OwnerStep::close(int64_t step, const std::vector<std::pair<QString, double>>& counted, double lr) {
    if (auto st = check(step, counted); !st)
        return st.error();
    for (const auto& [worker, weight] : counted)
        if (!whole(worker))
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("step %1 closed with %2, whose gradients for this "
                                            "range are not all here")
                                 .arg(step + 1)
                                 .arg(worker));
    for (const auto& [worker, weight] : counted)
        if (auto st = m_owner.addWire(m_parts[worker], m_wire, weight); !st)
            return st.error(); // checked whole and finite above: not reached
    m_owner.apply(lr);
    m_closed = true;
    m_parts.clear();
    return m_owner.packMasters(m_wire);
}

ReplicaStep::ReplicaStep(ShardLayout layout, std::vector<std::pair<int64_t, int64_t>> ranges,
                         DType wire)
    : m_layout(std::move(layout))
    , m_ranges(std::move(ranges))
    , m_wire(wire)
    , m_done(m_ranges.size(), false) {}

void ReplicaStep::open(int64_t step) {
    m_step = step;
    m_done.assign(m_ranges.size(), false);
    m_arrived = 0;
}

Status ReplicaStep::receive(int64_t step, size_t r, const QByteArray& bytes,
                            std::vector<at::Tensor>& params) {
    if (step != m_step)
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("weights for step %1 during step %2").arg(step + 1).arg(m_step + 1));
    if (r >= m_ranges.size())
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("weights for range %1 of %2").arg(r + 1).arg(m_ranges.size()));
    if (m_done[r])
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("weights for range %1 of step %2 a second time")
                             .arg(r + 1)
                             .arg(step + 1));
    if (auto st =
            writeRange(m_layout, m_ranges[r].first, m_ranges[r].second, bytes, m_wire, params);
        !st)
        return st;
    m_done[r] = true;
    ++m_arrived;
    return success();
}

} // namespace tandem
