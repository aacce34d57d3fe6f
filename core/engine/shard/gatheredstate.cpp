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

// A range's optimizer records, each with its piece (ShardOwner::pieces()) and slot ("step" for a
// step count), checked against the range and step count the bytes claim; the range's fp32 weights
// go into `params` where given. `bytes` is read in place: the records are views of it.
using PieceRecord = std::function<Status(const std::string& slot, const ShardLayout::Piece& piece,
                                         const TensorRecord& record)>;
Status walkRange(const ShardLayout& layout, const std::vector<std::pair<int64_t, int64_t>>& added,
                 int64_t begin, int64_t end, int64_t steps, const QByteArray& bytes,
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
    auto file = parseCheckpointInPlace(bytes, what);
    if (!file)
        return file.error();
    if (file->meta.value(QStringLiteral("begin")).toInteger(-1) != begin ||
        file->meta.value(QStringLiteral("end")).toInteger(-1) != end ||
        file->meta.value(QStringLiteral("steps")).toInteger(-1) != steps)
        return makeError(
            ErrorCode::Incompatible,
            QStringLiteral("%1 after %2 step(s) is not what was sent").arg(what).arg(steps));
    const std::vector<ShardLayout::Piece> pieces = ShardOwner::piecesOf(layout, begin, end);
    for (const TensorRecord& r : file->tensors) {
        const QString name = QStringLiteral("%1's %2").arg(what, r.name);
        if (r.data.size() != r.numel() * dtypeSize(r.dtype) ||
            (!at::isFloatingType(scalarTypeOf(r.dtype)) && r.dtype != DType::I64))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 is not a tensor of numbers").arg(name));
        if (r.name == QLatin1String(kRangeMastersRecord)) {
            if (r.numel() != end - begin || r.dtype != DType::F32)
                return makeError(ErrorCode::Incompatible,
                                 QStringLiteral("%1 holds %2 values").arg(name).arg(r.numel()));
            if (params)
                if (auto st = writeRange(layout, begin, end, r.data, DType::F32, *params); !st)
                    return st;
            continue;
        }
        std::string slot;
        int64_t index = 0;
        if (!splitStateName(r.name.toStdString(), slot, index) || size_t(index) >= pieces.size())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 names no piece of its range").arg(name));
        const ShardLayout::Piece& p = pieces[size_t(index)];
        if (slot == "step" ? r.numel() != 1 : r.numel() != p.values)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 holds %2 values, not its piece's %3")
                                 .arg(name)
                                 .arg(r.numel())
                                 .arg(slot == "step" ? 1 : p.values));
        if (auto st = each(slot, p, r); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1 %2").arg(name, st.error().message));
    }
    return success();
}

at::Tensor viewOf(const TensorRecord& r) {
    return at::from_blob(const_cast<char*>(r.data.constData()), {r.numel()},
                         at::TensorOptions(scalarTypeOf(r.dtype)));
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

Status GatheredState::add(int64_t begin, int64_t end, int64_t steps, const QByteArray& bytes,
                          std::vector<at::Tensor>* params) {
    at::NoGradGuard noGrad;
    // Each part is copied once, from where the bytes lie to where the whole state keeps it.
    auto st = walkRange(
        m_layout, m_ranges, begin, end, steps, bytes, params,
        [&](const std::string& slot, const ShardLayout::Piece& p, const TensorRecord& r) -> Status {
            if (!m_keepState)
                return success();
            if (slot == "step") {
                m_steps[p.tensor] = viewOf(r).clone().reshape({});
                return success();
            }
            at::Tensor& whole = m_slots[slot][p.tensor];
            if (!whole.defined())
                whole = at::empty(at::IntArrayRef(m_layout.shapes[size_t(p.tensor)]),
                                  at::TensorOptions(scalarTypeOf(r.dtype)));
            else if (whole.scalar_type() != scalarTypeOf(r.dtype))
                return makeError(
                    ErrorCode::Incompatible,
                    QStringLiteral("is %1, other parts of it are not").arg(dtypeName(r.dtype)));
            whole.view({-1}).narrow(0, p.offset, p.values).copy_(viewOf(r));
            m_covered[slot][p.tensor] += p.values;
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
            if (m_covered[slot][tensor] != m_layout.valuesOf(size_t(tensor)))
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

SpilledState::~SpilledState() {
    for (const QString& f : m_files)
        QFile::remove(f);
}

Status SpilledState::add(int64_t begin, int64_t end, int64_t steps, const QByteArray& bytes,
                         std::vector<at::Tensor>* params) {
    at::NoGradGuard noGrad;
    const int file = int(m_files.size());
    std::map<std::string, std::map<int64_t, Slot>> slots = m_slots;
    std::map<int64_t, at::Tensor> counts = m_steps;
    auto st = walkRange(
        m_layout, m_ranges, begin, end, steps, bytes, params,
        [&](const std::string& slot, const ShardLayout::Piece& p, const TensorRecord& r) -> Status {
            if (slot == "step") {
                counts[p.tensor] = viewOf(r).clone().reshape({});
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
            s.parts.push_back(
                {file, qint64(r.data.constData() - bytes.constData()), p.offset, p.values});
            s.covered += p.values;
            return success();
        });
    if (!st)
        return st;
    // Checked whole (its digest too) before a byte of it is kept.
    const QString path =
        QDir(m_dir).filePath(QStringLiteral(".shard-state-%1-%2.part").arg(begin).arg(end));
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) || out.write(bytes) != bytes.size() ||
        !out.flush() || TANDEM_FAILPOINT("shard.spill.write")) { // a full disk, say
        const Error e = writeError(path, bytes.size(), out.errorString());
        out.close();
        QFile::remove(path);
        return e;
    }
    m_files << path;
    m_slots = std::move(slots);
    m_steps = std::move(counts);
    m_ranges.emplace_back(begin, end);
    return success();
}

Expected<QList<LazyTensor>> SpilledState::tensors() const {
    if (auto st = coverOnce(m_ranges, m_layout.values); !st)
        return st.error();
    QList<LazyTensor> out;
    for (const auto& [slot, tensors] : m_slots)
        for (const auto& [tensor, s] : tensors) {
            if (s.covered != m_layout.valuesOf(size_t(tensor)))
                return keptInPart(tensor, slot);
            LazyTensor l;
            l.name = QString::fromStdString(slot + "." + std::to_string(tensor));
            l.dtype = s.dtype;
            l.shape = m_layout.shapes[size_t(tensor)];
            const qint64 size = s.covered * dtypeSize(s.dtype);
            l.bytes = [files = m_files, parts = s.parts, size, element = dtypeSize(s.dtype),
                       failure = m_failure, name = l.name]() -> QByteArray {
                QByteArray bytes(qsizetype(size), Qt::Uninitialized);
                for (const Part& p : parts) {
                    QFile f(files[p.file]);
                    const qint64 n = p.values * element;
                    if (!f.open(QIODevice::ReadOnly) || !f.seek(p.offset) ||
                        f.read(bytes.data() + p.at * element, n) != n) {
                        *failure = QStringLiteral("%1 could not be read back from %2: %3")
                                       .arg(name, files[p.file], f.errorString());
                        return {};
                    }
                }
                return bytes;
            };
            // Bytes [at, at + n) of the tensor, from the parts that hold them: a setup cuts each
            // range from these without reading a tensor whole.
            l.part = [files = m_files, parts = s.parts, size, element = dtypeSize(s.dtype),
                      failure = m_failure, name = l.name](qint64 at, qint64 n) -> QByteArray {
                if (at < 0 || n < 0 || at > size - n)
                    return {};
                QByteArray bytes(qsizetype(n), Qt::Uninitialized);
                for (const Part& p : parts) {
                    const qint64 from = std::max<qint64>(at, p.at * element);
                    const qint64 to = std::min<qint64>(at + n, (p.at + p.values) * element);
                    if (from >= to)
                        continue;
                    QFile f(files[p.file]);
                    if (!f.open(QIODevice::ReadOnly) || !f.seek(p.offset + from - p.at * element) ||
                        f.read(bytes.data() + (from - at), to - from) != to - from) {
                        *failure = QStringLiteral("%1 could not be read back from %2: %3")
                                       .arg(name, files[p.file], f.errorString());
                        return {};
                    }
                }
                return bytes;
            };
            out << std::move(l);
        }
    for (const auto& [tensor, t] : m_steps)
        out << toLazy("step." + std::to_string(tensor), t);
    return out;
}

} // namespace tandem
