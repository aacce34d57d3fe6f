#include "engine/shard/gatheredstate.h"

#include "common/failpoint.h"
#include "common/files.h"

#include <ATen/core/grad_mode.h>
#include <QDir>
#include <QFile>

#include <algorithm>
#include <functional>

namespace tandem {

namespace {

QString stateOf(int64_t begin, int64_t end) {
    return QStringLiteral("the optimizer state of values %1 to %2").arg(begin).arg(end);
}

int64_t numelOf(const LazyTensor& t) {
    int64_t n = 1;
    for (int64_t d : t.shape)
        n *= d;
    return n;
}

// Values read at once from where a range's state lies: 32 MB of fp32.
constexpr int64_t kValuesAtOnce = int64_t(8) << 20;

Error unreadable() {
    return makeError(ErrorCode::Io, QStringLiteral("could not be read where it lies"));
}

// Values [at, at + n) of `r`, in a tensor of their own.
Expected<at::Tensor> valuesOf(const LazyTensor& r, int64_t at, int64_t n) {
    const int64_t element = dtypeSize(r.dtype);
    const QByteArray bytes = r.part(at * element, n * element);
    if (bytes.size() != n * element)
        return unreadable();
    return at::from_blob(const_cast<char*>(bytes.constData()), {n},
                         at::TensorOptions(scalarTypeOf(r.dtype)))
        .clone();
}

// Copies `r` into `to` (as many values, flattened), a part at a time.
Status copyInto(const LazyTensor& r, at::Tensor to) {
    for (int64_t at = 0; at < to.numel(); at += kValuesAtOnce) {
        const int64_t n = std::min(kValuesAtOnce, to.numel() - at);
        auto part = valuesOf(r, at, n);
        if (!part)
            return part.error();
        to.narrow(0, at, n).copy_(*part);
    }
    return success();
}

// A range's optimizer records, each with its piece (ShardOwner::pieces()) and slot ("step" for a
// step count), checked against the range and step count the state claims; the range's fp32
// weights go into `params` where given. Each record is read where it lies, a part at a time.
using PieceRecord = std::function<Status(const std::string& slot, const ShardLayout::Piece& piece,
                                         const LazyTensor& record)>;
Status walkRange(const ShardLayout& layout, const std::vector<std::pair<int64_t, int64_t>>& added,
                 int64_t begin, int64_t end, int64_t steps, const RangeState& state,
                 std::vector<at::Tensor>* params, const PieceRecord& each) {
    const QString what = stateOf(begin, end);
    if (begin < 0 || end > layout.values || begin >= end)
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("%1 lies outside the model's %2 values").arg(what).arg(layout.values));
    for (const auto& [b, e] : added)
        if (begin < e && b < end)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 overlaps values %2 to %3, gathered already")
                                 .arg(what)
                                 .arg(b)
                                 .arg(e));
    auto file = state.open(what);
    if (!file)
        return file.error();
    if (file->meta.value(QStringLiteral("begin")).toInteger(-1) != begin ||
        file->meta.value(QStringLiteral("end")).toInteger(-1) != end ||
        file->meta.value(QStringLiteral("steps")).toInteger(-1) != steps)
        return makeError(
            ErrorCode::Incompatible,
            QStringLiteral("%1 after %2 step(s) is not what was sent").arg(what).arg(steps));
    const std::vector<ShardLayout::Piece> pieces = ShardOwner::piecesOf(layout, begin, end);
    for (const LazyTensor& r : file->lazy) {
        const QString name = QStringLiteral("%1's %2").arg(what, r.name);
        const int64_t numel = numelOf(r);
        // Floats, a step count (i64), or 8-bit AdamW's codes (u8).
        if (!r.part || (!at::isFloatingType(scalarTypeOf(r.dtype)) && r.dtype != DType::I64 &&
                        r.dtype != DType::U8))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 is not a tensor of numbers").arg(name));
        if (r.name == QLatin1String(kRangeMastersRecord)) {
            if (numel != end - begin || r.dtype != DType::F32)
                return makeError(ErrorCode::Incompatible,
                                 QStringLiteral("%1 holds %2 values").arg(name).arg(numel));
            for (int64_t at = 0; params && at < numel; at += kValuesAtOnce) {
                const int64_t n = std::min(kValuesAtOnce, numel - at);
                const QByteArray part = r.part(at * 4, n * 4);
                if (part.size() != n * 4)
                    return makeError(ErrorCode::Io,
                                     QStringLiteral("%1 %2").arg(name, unreadable().message));
                if (auto st =
                        writeRange(layout, begin + at, begin + at + n, part, DType::F32, *params);
                    !st)
                    return st;
            }
            continue;
        }
        std::string slot;
        int64_t index = 0;
        if (!splitStateName(r.name.toStdString(), slot, index) || size_t(index) >= pieces.size())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 names no piece of its range").arg(name));
        const ShardLayout::Piece& p = pieces[size_t(index)];
        const int64_t want = slot == "step" ? 1 : layout.slotPartOf(slot, p).values;
        if (numel != want)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 holds %2 values, not its piece's %3")
                                 .arg(name)
                                 .arg(numel)
                                 .arg(want));
        if (auto st = each(slot, p, r); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1 %2").arg(name, st.error().message));
    }
    return success();
}

// Whether the ranges added cover the model's values once.
Status coverOnce(std::vector<std::pair<int64_t, int64_t>> ranges, int64_t values) {
    std::sort(ranges.begin(), ranges.end());
    int64_t at = 0;
    for (const auto& [b, e] : ranges) {
        if (b != at)
            return makeError(
                ErrorCode::Incompatible,
                QStringLiteral("no range's state holds values %1 to %2").arg(at).arg(b));
        at = e;
    }
    if (at != values)
        return makeError(
            ErrorCode::Incompatible,
            QStringLiteral("the ranges' state ends at value %1 of %2").arg(at).arg(values));
    return success();
}

Error keptInPart(int64_t tensor, const std::string& slot) {
    return makeError(ErrorCode::Incompatible,
                     QStringLiteral("the owners of parameter %1 keep %2 for only part of it")
                         .arg(tensor)
                         .arg(QString::fromStdString(slot)));
}

} // namespace

GatheredState::GatheredState(ShardLayout layout, bool keepState)
    : m_layout(std::move(layout))
    , m_keepState(keepState) {}

Status GatheredState::add(int64_t begin, int64_t end, int64_t steps, const RangeState& state,
                          std::vector<at::Tensor>* params) {
    at::NoGradGuard noGrad;
    // Each part is copied once, from where the state lies to where the whole state keeps it.
    auto st = walkRange(
        m_layout, m_ranges, begin, end, steps, state, params,
        [&](const std::string& slot, const ShardLayout::Piece& p, const LazyTensor& r) -> Status {
            if (!m_keepState)
                return success();
            if (slot == "step") {
                auto count = valuesOf(r, 0, 1);
                if (!count)
                    return count.error();
                m_steps[p.tensor] = count->reshape({});
                return success();
            }
            at::Tensor& whole = m_slots[slot][p.tensor];
            if (!whole.defined())
                whole = at::empty(at::IntArrayRef(m_layout.slotShapeOf(slot, size_t(p.tensor))),
                                  at::TensorOptions(scalarTypeOf(r.dtype)));
            else if (whole.scalar_type() != scalarTypeOf(r.dtype))
                return makeError(
                    ErrorCode::Incompatible,
                    QStringLiteral("is %1, other parts of it are not").arg(dtypeName(r.dtype)));
            const ShardLayout::SlotPart sp = m_layout.slotPartOf(slot, p);
            if (auto st = copyInto(r, whole.view({-1}).narrow(0, sp.offset, sp.values)); !st)
                return st;
            m_covered[slot][p.tensor] += sp.values;
            return success();
        });
    if (!st)
        return st;
    m_ranges.emplace_back(begin, end);
    return success();
}

Expected<NamedTensors> GatheredState::take() {
    if (auto st = coverOnce(m_ranges, m_layout.values); !st)
        return st.error();
    NamedTensors out;
    for (auto& [slot, tensors] : m_slots)
        for (auto& [tensor, t] : tensors) {
            if (m_covered[slot][tensor] != t.numel())
                return keptInPart(tensor, slot);
            out.emplace_back(slot + "." + std::to_string(tensor), std::move(t));
        }
    for (auto& [tensor, t] : m_steps)
        out.emplace_back("step." + std::to_string(tensor), std::move(t));
    m_slots.clear();
    m_covered.clear();
    m_steps.clear();
    m_ranges.clear();
    return out;
}

SpilledState::SpilledState(ShardLayout layout, QString dir)
    : m_layout(std::move(layout))
    , m_dir(std::move(dir)) {}

SpilledState::~SpilledState() = default;

Status SpilledState::add(int64_t begin, int64_t end, int64_t steps, const RangeState& given,
                         std::vector<at::Tensor>* params) {
    at::NoGradGuard noGrad;
    RangeState state = given;
    if (state.path().isEmpty()) {
        // In memory, or an owner's own tensors: checked (a range refused writes nothing, and
        // never over another's file), then written to a file of its own here, and read from
        // there from now on.
        if (auto st = walkRange(m_layout, m_ranges, begin, end, steps, given, nullptr,
                                [](const std::string&, const ShardLayout::Piece&,
                                   const LazyTensor&) { return success(); });
            !st)
            return st;
        auto file = given.open(stateOf(begin, end));
        if (!file)
            return file.error();
        const QString path =
            QDir(m_dir).filePath(QStringLiteral(".shard-state-%1-%2.part").arg(begin).arg(end));
        const auto size = checkpointSize(*file);
        if (TANDEM_FAILPOINT("shard.spill.write")) // a full disk, say
            return writeError(path, size ? *size : 0,
                              QStringLiteral("failpoint shard.spill.write"));
        if (Status wrote = writeCheckpoint(path, *file); !wrote)
            return wrote;
        state = RangeState::ofFile(path);
    }
    const int file = int(m_kept.size());
    std::map<std::string, std::map<int64_t, Slot>> slots = m_slots;
    std::map<int64_t, at::Tensor> counts = m_steps;
    auto st = walkRange(
        m_layout, m_ranges, begin, end, steps, state, params,
        [&](const std::string& slot, const ShardLayout::Piece& p, const LazyTensor& r) -> Status {
            if (slot == "step") {
                auto count = valuesOf(r, 0, 1);
                if (!count)
                    return count.error();
                counts[p.tensor] = count->reshape({});
                return success();
            }
            auto [it, fresh] = slots[slot].try_emplace(p.tensor);
            Slot& s = it->second;
            if (fresh)
                s.dtype = r.dtype;
            else if (s.dtype != r.dtype)
                return makeError(
                    ErrorCode::Incompatible,
                    QStringLiteral("is %1, other parts of it are not").arg(dtypeName(r.dtype)));
            const ShardLayout::SlotPart sp = m_layout.slotPartOf(slot, p);
            s.parts.push_back({file, r.part, sp.offset, sp.values});
            s.covered += sp.values;
            return success();
        });
    if (!st)
        return st;
    m_kept.push_back(std::move(state));
    m_slots = std::move(slots);
    m_steps = std::move(counts);
    m_ranges.emplace_back(begin, end);
    return success();
}

Expected<QList<LazyTensor>> SpilledState::tensors() const {
    if (auto st = coverOnce(m_ranges, m_layout.values); !st)
        return st.error();
    QStringList paths;
    for (const RangeState& k : m_kept)
        paths << k.path();
    QList<LazyTensor> out;
    for (const auto& [slot, tensors] : m_slots)
        for (const auto& [tensor, s] : tensors) {
            LazyTensor l;
            l.shape = m_layout.slotShapeOf(slot, size_t(tensor));
            if (s.covered != numelOf(l))
                return keptInPart(tensor, slot);
            l.name = QString::fromStdString(slot + "." + std::to_string(tensor));
            l.dtype = s.dtype;
            const qint64 size = s.covered * dtypeSize(s.dtype);
            // Bytes [at, at + n) of the tensor, from the parts that hold them: a setup cuts each
            // range from these, and a checkpoint's writer reads them so, without reading a
            // tensor whole.
            l.part = [paths, parts = s.parts, size, element = dtypeSize(s.dtype),
                      failure = m_failure, name = l.name](qint64 at, qint64 n) -> QByteArray {
                if (at < 0 || n < 0 || at > size - n)
                    return {};
                QByteArray bytes(qsizetype(n), Qt::Uninitialized);
                for (const Part& p : parts) {
                    const qint64 from = std::max<qint64>(at, p.at * element);
                    const qint64 to = std::min<qint64>(at + n, (p.at + p.values) * element);
                    if (from >= to)
                        continue;
                    const QByteArray got = p.read(from - p.at * element, to - from);
                    if (got.size() != to - from) {
                        *failure = QStringLiteral("%1 could not be read back from %2: it is "
                                                  "shorter than it was written")
                                       .arg(name, QDir::toNativeSeparators(paths[p.file]));
                        return {};
                    }
                    memcpy(bytes.data() + (from - at), got.constData(), size_t(to - from));
                }
                return bytes;
            };
            l.bytes = [part = l.part, size] { return part(0, size); };
            out << std::move(l);
        }
    for (const auto& [tensor, t] : m_steps)
        out << toLazy("step." + std::to_string(tensor), t);
    return out;
}

} // namespace tandem
