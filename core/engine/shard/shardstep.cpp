#include "engine/shard/shardstep.h"

#include "engine/modes/fragments.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <limits>
#include <set>

namespace tandem {

namespace {

// Each range's part inside `window`, counted from the window's start.
std::vector<std::pair<int64_t, int64_t>>
insideWindow(const std::vector<std::pair<int64_t, int64_t>>& ranges, const ShardWindow& window) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& [begin, end] : ranges) {
        const auto [from, to] = window.within(begin, end);
        const int64_t base = std::max<int64_t>(0, window.begin);
        out.emplace_back(begin + from - base, begin + to - base);
    }
    return out;
}

} // namespace

std::vector<ShardWindow> fragmentWindows(const ShardLayout& layout, int fragments) {
    std::vector<int64_t> numels;
    for (size_t i = 0; i < layout.shapes.size(); ++i)
        numels.push_back(layout.valuesOf(i));
    std::vector<ShardWindow> out;
    for (const Fragment& f : cutFragments(numels, fragments)) {
        if (f.firstParam == f.endParam) {
            out.push_back({0, 0});
            continue;
        }
        // Backward order: the fragment's last tensor comes first.
        const int64_t begin = layout.offsets[f.endParam - 1];
        out.push_back({begin, begin + f.count});
    }
    return out;
}

ShardRoute::ShardRoute(std::vector<std::pair<int64_t, int64_t>> ranges, DType wire)
    : m_all(std::move(ranges))
    , m_ranges(m_all)
    , m_element(dtypeSize(wire)) {}

void ShardRoute::setWindow(const ShardWindow& window) {
    m_ranges = insideWindow(m_all, window);
    reset();
}

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
        if (size == 0) { // outside the window: nothing of it travels
            ++m_next;
            continue;
        }
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
    , m_bytes(owner.bundleBytes(wire).second)
    , m_to(owner.end() - owner.begin())
    , m_segmentEnds(owner.segmentEnds()) {}

void OwnerStep::open(int64_t step, const ShardWindow& window) {
    if (step == m_step && m_step >= 0)
        return;
    std::tie(m_from, m_to) = window.within(m_owner.begin(), m_owner.end());
    m_bytes = (m_to - m_from) * dtypeSize(m_wire);
    m_segmentEnds.clear();
    int64_t start = 0;
    for (const int64_t end : m_owner.segmentEnds()) {
        if (end > m_from && start < m_to)
            m_segmentEnds.push_back(std::min(end, m_to));
        start = end;
    }
    m_step = step;
    m_closed = false;
    m_parts.clear();
    m_close.reset();
    m_segment = 0;
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
    if (part.isEmpty() && bytes.size() == m_bytes) {
        part = bytes; // the whole range at once: kept as it came, not copied
    } else {
        if (part.isEmpty())
            part.reserve(m_bytes);
        part.append(bytes);
    }
    // Gradients that are not finite would spoil the step for every worker: the values a part
    // completes are checked as it comes, before a segment they lie in can be stepped, and what
    // the worker sent is dropped. A million values at a time, so that the check's flags never
    // take a byte for each value of a range.
    constexpr qint64 kCheckValues = qint64(1) << 20;
    const qint64 element = dtypeSize(m_wire), from = have / element,
                 to = qint64(part.size()) / element;
    at::NoGradGuard noGrad;
    for (qint64 at = from; at < to; at += kCheckValues) {
        const at::Tensor values = at::from_blob(const_cast<char*>(part.constData()) + at * element,
                                                {std::min(kCheckValues, to - at)},
                                                at::TensorOptions(scalarTypeOf(m_wire)));
        if (!at::isfinite(values).all().item<bool>()) {
            m_parts.erase(worker);
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("gradients from %1 that are not finite").arg(worker));
        }
    }
    return part.size() == m_bytes;
}

void OwnerStep::forget(const QString& worker) {
    m_parts.erase(worker);
}

bool OwnerStep::whole(const QString& worker) const {
    if (m_bytes == 0)
        return true; // nothing of the range is in the step
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
    if (auto st = closeWhenHeld(step, counted, lr); !st)
        return st.error();
    QByteArray out;
    out.reserve(m_bytes);
    for (const Weights& w : advance())
        out.append(w.bytes);
    return out;
}

Status OwnerStep::closeWhenHeld(int64_t step,
                                const std::vector<std::pair<QString, double>>& counted, double lr) {
    if (auto st = check(step, counted); !st)
        return st;
    if (m_close)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("step %1 closed a second time").arg(step + 1));
    m_close = Close{counted, lr};
    return success();
}

std::vector<OwnerStep::Weights> OwnerStep::advance(size_t most) {
    std::vector<Weights> out;
    if (!m_close || m_closed)
        return out;
    const std::vector<int64_t>& ends = m_segmentEnds;
    if (ends.empty()) { // nothing of the range in the step: it counts, and nothing leaves
        m_owner.applySpan(m_from, m_from, m_close->lr, true);
        m_closed = true;
        m_close.reset();
        return out;
    }
    qint64 held = m_bytes;
    for (const auto& [worker, weight] : m_close->counted)
        held = std::min(held, received(worker));
    const int64_t element = dtypeSize(m_wire);
    while (out.size() < most && m_segment < ends.size() &&
           (ends[m_segment] - m_from) * element <= held)
        out.push_back(stepSegment());
    if (m_segment == ends.size()) {
        m_closed = true;
        m_close.reset();
        m_parts.clear();
    }
    return out;
}

OwnerStep::Weights OwnerStep::stepSegment() {
    const std::vector<int64_t>& ends = m_segmentEnds;
    const int64_t from = m_segment == 0 ? m_from : ends[m_segment - 1], to = ends[m_segment];
    const int64_t element = dtypeSize(m_wire);
    for (const auto& [worker, weight] : m_close->counted)
        m_owner.addSpan(m_parts[worker].constData() + (from - m_from) * element, m_wire, weight,
                        from, to);
    Weights w;
    if (m_keepSums)
        w.sum = ShardLog::spanOf(m_owner, m_step, from, to, m_close->lr);
    m_owner.applySpan(from, to, m_close->lr, m_segment + 1 == ends.size());
    ++m_segment;
    w.offset = (from - m_from) * element;
    w.bytes = m_owner.packMasters(m_wire, from, to);
    return w;
}

ReplicaStep::ReplicaStep(ShardLayout layout, std::vector<std::pair<int64_t, int64_t>> ranges,
                         DType wire)
    : m_layout(std::move(layout))
    , m_all(std::move(ranges))
    , m_ranges(m_all)
    , m_wire(wire)
    , m_have(m_ranges.size(), 0) {}

void ReplicaStep::open(int64_t step, const ShardWindow& window) {
    m_step = step;
    m_ranges.clear();
    for (const auto& [begin, end] : m_all) {
        const auto [from, to] = window.within(begin, end);
        m_ranges.emplace_back(begin + from, begin + to);
    }
    m_have.assign(m_ranges.size(), 0);
    // An empty range has nothing to send: it is whole from the start.
    m_arrived = size_t(std::count_if(m_ranges.begin(), m_ranges.end(),
                                     [](const auto& r) { return r.first == r.second; }));
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
    const auto [begin, end] = m_ranges[r];
    const int64_t from = begin + m_have[r], element = dtypeSize(m_wire);
    if (from == end)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("weights for range %1 of step %2 after the whole range")
                             .arg(r + 1)
                             .arg(step + 1));
    if (bytes.size() % element != 0 || bytes.size() / element > end - from)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 bytes of weights for range %2, which has %3 values "
                                        "left to take")
                             .arg(bytes.size())
                             .arg(r + 1)
                             .arg(end - from));
    if (auto st = writeRange(m_layout, from, from + bytes.size() / element, bytes, m_wire, params);
        !st)
        return st;
    m_have[r] += bytes.size() / element;
    if (begin + m_have[r] == end)
        ++m_arrived;
    return success();
}

} // namespace tandem
