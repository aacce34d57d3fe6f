#include "engine/shard/shardowner.h"

#include "engine/step/blockwiseadam.h"

#include <ATen/core/grad_mode.h>
#include <QString>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace tandem {

int64_t shardSegmentValues(int64_t rangeValues) {
    constexpr int64_t block = BlockwiseAdamW::kBlock;
    const int64_t eighth = ((rangeValues + 7) / 8 + block - 1) / block * block;
    return std::clamp<int64_t>(eighth, 4096, int64_t(1) << 20);
}

int64_t ShardLayout::blockPhaseOf(size_t tensor, int64_t offset) const {
    return (offsets[tensor] + offset) % BlockwiseAdamW::kBlock;
}

ShardLayout::SlotPart ShardLayout::slotPartOf(const std::string& slot, const Piece& piece) const {
    if (!keptByBlock(slot))
        return {piece.offset, piece.values};
    const size_t t = size_t(piece.tensor);
    const int64_t first = (blockPhaseOf(t, 0) + piece.offset) / BlockwiseAdamW::kBlock;
    return {first, BlockwiseAdamW::blocksOf(piece.values, blockPhaseOf(t, piece.offset))};
}

std::vector<int64_t> ShardLayout::slotShapeOf(const std::string& slot, size_t tensor) const {
    if (!keptByBlock(slot))
        return shapes[tensor];
    return {BlockwiseAdamW::blocksOf(valuesOf(tensor), blockPhaseOf(tensor, 0))};
}

ShardLayout ShardLayout::of(const std::vector<at::Tensor>& trainable) {
    ShardLayout l;
    l.offsets.resize(trainable.size());
    for (size_t k = trainable.size(); k-- > 0;) {
        l.offsets[k] = l.values;
        l.values += trainable[k].numel();
    }
    for (const at::Tensor& t : trainable)
        l.shapes.push_back(t.sizes().vec());
    return l;
}

int64_t ShardLayout::valuesOf(size_t tensor) const {
    int64_t n = 1;
    for (int64_t d : shapes[tensor])
        n *= d;
    return n;
}

std::vector<ShardLayout::Piece> ShardLayout::piecesOf(int64_t begin, int64_t end) const {
    std::vector<Piece> out;
    for (size_t i = 0; i < offsets.size(); ++i) {
        const int64_t n = valuesOf(i);
        const int64_t from = std::max(begin, offsets[i]);
        const int64_t to = std::min(end, offsets[i] + n);
        if (from < to)
            out.push_back({int(i), from - offsets[i], to - from, from - begin});
    }
    return out;
}

ShardOwner::ShardOwner(ShardLayout layout, int64_t begin, int64_t end, const at::Tensor& masters,
                       OptimizerConfig config, int64_t segmentValues)
    : ShardOwner(std::move(layout), begin, end,
                 masters.detach().to(at::kFloat).reshape({-1}).clone(), config, segmentValues,
                 Adopt{}) {}

ShardOwner ShardOwner::adopting(ShardLayout layout, int64_t begin, int64_t end, at::Tensor masters,
                                OptimizerConfig config, int64_t segmentValues) {
    Q_ASSERT(masters.scalar_type() == at::kFloat && masters.is_contiguous());
    return ShardOwner(std::move(layout), begin, end, masters.detach().reshape({-1}), config,
                      segmentValues, Adopt{});
}

ShardOwner::ShardOwner(ShardLayout layout, int64_t begin, int64_t end, at::Tensor masters,
                       OptimizerConfig config, int64_t segmentValues, Adopt)
    : m_layout(std::move(layout))
    , m_begin(begin)
    , m_end(end) {
    at::NoGradGuard noGrad;
    m_segmentEnds = segmentEndsOf(end - begin, segmentValues);
    m_pieces = piecesOf(m_layout, begin, end, segmentValues);
    Q_ASSERT(masters.numel() == end - begin);
    m_masters = std::move(masters);
    for (const ShardLayout::Piece& p : m_pieces)
        m_views.push_back(m_masters.narrow(0, p.at, p.values));
    m_sum.resize(m_pieces.size());
    std::vector<int64_t> phases;
    for (const ShardLayout::Piece& p : m_pieces)
        phases.push_back(m_layout.blockPhaseOf(size_t(p.tensor), p.offset));
    m_optimizer = std::make_unique<Optimizer>(config, m_views, std::move(phases));
}

std::vector<ShardLayout::Piece> ShardOwner::piecesOf(const ShardLayout& layout, int64_t begin,
                                                     int64_t end, int64_t segmentValues) {
    const int64_t segment = segmentValues > 0 ? segmentValues : shardSegmentValues(end - begin);
    // Each tensor's piece, cut where a segment ends, its parts in the tensor's order.
    std::vector<ShardLayout::Piece> out;
    for (ShardLayout::Piece p : layout.piecesOf(begin, end))
        while (p.values > 0) {
            const int64_t cut = std::min(p.values, segment - p.at % segment);
            out.push_back({p.tensor, p.offset, cut, p.at});
            p.offset += cut;
            p.at += cut;
            p.values -= cut;
        }
    return out;
}

std::vector<int64_t> ShardOwner::segmentEndsOf(int64_t rangeValues, int64_t segmentValues) {
    const int64_t segment = segmentValues > 0 ? segmentValues : shardSegmentValues(rangeValues);
    std::vector<int64_t> out;
    for (int64_t at = 0; at < rangeValues; at += segment)
        out.push_back(std::min(rangeValues, at + segment));
    return out;
}

ShardOwner ShardOwner::fromParams(ShardLayout layout, int64_t begin, int64_t end,
                                  const std::vector<at::Tensor>& params, OptimizerConfig config,
                                  int64_t segmentValues) {
    at::Tensor masters = at::empty({end - begin}, at::kFloat);
    layout.copyRange(begin, end, params, masters);
    return adopting(std::move(layout), begin, end, std::move(masters), config, segmentValues);
}

void ShardLayout::copyRange(int64_t begin, int64_t end, const std::vector<at::Tensor>& params,
                            at::Tensor into) const {
    at::NoGradGuard noGrad;
    for (const Piece& p : piecesOf(begin, end))
        into.narrow(0, p.at, p.values)
            .copy_(params[size_t(p.tensor)].detach().reshape({-1}).narrow(0, p.offset, p.values));
}

std::vector<at::Tensor> ShardOwner::cut(const std::vector<at::Tensor>& perTensor) const {
    std::vector<at::Tensor> out;
    out.reserve(m_pieces.size());
    for (const ShardLayout::Piece& p : m_pieces) {
        const size_t i = size_t(p.tensor);
        if (i < perTensor.size() && perTensor[i].defined())
            out.push_back(perTensor[i].reshape({-1}).narrow(0, p.offset, p.values));
        else
            out.emplace_back();
    }
    return out;
}

Status ShardOwner::add(const std::vector<at::Tensor>& pieceGrads, double weight) {
    at::NoGradGuard noGrad;
    if (pieceGrads.size() != m_pieces.size())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("gradients for %1 pieces of a shard that has %2")
                             .arg(pieceGrads.size())
                             .arg(m_pieces.size()));
    if (!std::isfinite(weight) || weight < 0)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("a gradient weighted %1").arg(weight));
    for (size_t p = 0; p < pieceGrads.size(); ++p) {
        const at::Tensor& g = pieceGrads[p];
        if (g.defined() && (g.numel() != m_pieces[p].values || !g.is_floating_point()))
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("gradient piece %1 of a shard holds %2 values, not %3")
                                 .arg(p)
                                 .arg(g.numel())
                                 .arg(m_pieces[p].values));
    }
    // A gradient that is not finite would spoil the range for every worker: it is refused whole,
    // before anything is added, with one read back of one sum over all its pieces.
    std::vector<at::Tensor> grads(pieceGrads.size());
    at::Tensor total;
    for (size_t p = 0; p < pieceGrads.size(); ++p) {
        if (!pieceGrads[p].defined())
            continue;
        grads[p] = pieceGrads[p].reshape({-1}).to(m_masters.device(), at::kFloat);
        const at::Tensor s = grads[p].sum();
        total = total.defined() ? total.add(s) : s;
    }
    if (total.defined() && !std::isfinite(total.item<float>()))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("gradients for a shard that are not finite"));
    for (size_t p = 0; p < grads.size(); ++p)
        if (grads[p].defined())
            accumulate(p, grads[p], weight);
    ++m_added;
    return success();
}

Status ShardOwner::addWire(const QByteArray& bytes, DType wire, double weight) {
    const qint64 size = bundleBytes(wire).second;
    if (bytes.size() != size)
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("%1 bytes of gradients for a shard of %2").arg(bytes.size()).arg(size));
    const int64_t element = dtypeSize(wire);
    std::vector<at::Tensor> pieces;
    for (const ShardLayout::Piece& p : m_pieces)
        pieces.push_back(at::from_blob(const_cast<char*>(bytes.constData()) + p.at * element,
                                       {p.values}, at::TensorOptions(scalarTypeOf(wire))));
    return add(pieces, weight);
}

QByteArray ShardOwner::packMasters(DType wire) const {
    return packMasters(wire, 0, m_end - m_begin);
}

QByteArray ShardOwner::packMasters(DType wire, int64_t from, int64_t to) const {
    at::NoGradGuard noGrad;
    const at::Tensor packed =
        m_masters.narrow(0, from, to - from).to(at::kCPU, scalarTypeOf(wire)).contiguous();
    return QByteArray(static_cast<const char*>(packed.data_ptr()),
                      qsizetype(packed.numel()) * dtypeSize(wire));
}

Status writeRange(const ShardLayout& layout, int64_t begin, int64_t end, const QByteArray& bytes,
                  DType wire, std::vector<at::Tensor>& params) {
    at::NoGradGuard noGrad;
    const int64_t element = dtypeSize(wire);
    if (begin < 0 || end > layout.values || begin > end ||
        bytes.size() != (end - begin) * element || params.size() != layout.shapes.size())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 bytes of weights for values %2 to %3 of %4")
                             .arg(bytes.size())
                             .arg(begin)
                             .arg(end)
                             .arg(layout.values));
    for (const ShardLayout::Piece& p : layout.piecesOf(begin, end))
        if (!params[size_t(p.tensor)].is_contiguous() ||
            params[size_t(p.tensor)].numel() != layout.valuesOf(size_t(p.tensor)))
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("parameter %1 is not laid out as the shards are").arg(p.tensor));
    for (const ShardLayout::Piece& p : layout.piecesOf(begin, end)) {
        const at::Tensor from = at::from_blob(const_cast<char*>(bytes.constData()) + p.at * element,
                                              {p.values}, at::TensorOptions(scalarTypeOf(wire)));
        params[size_t(p.tensor)].view({-1}).narrow(0, p.offset, p.values).copy_(from);
    }
    return success();
}

std::pair<qint64, qint64> ShardOwner::bundleBytes(DType wire) const {
    const qint64 element = dtypeSize(wire);
    return {m_begin * element, (m_end - m_begin) * element};
}

void ShardOwner::apply(double lr) {
    m_optimizer->step(m_sum, lr);
    for (at::Tensor& s : m_sum)
        s = at::Tensor();
    m_added = 0;
}

void ShardOwner::addSpan(const char* values, DType wire, double weight, int64_t from, int64_t to) {
    at::NoGradGuard noGrad;
    const int64_t element = dtypeSize(wire);
    for (size_t p = 0; p < m_pieces.size(); ++p) {
        const ShardLayout::Piece& piece = m_pieces[p];
        if (piece.at < from || piece.at >= to)
            continue;
        accumulate(p,
                   at::from_blob(const_cast<char*>(values) + (piece.at - from) * element,
                                 {piece.values}, at::TensorOptions(scalarTypeOf(wire)))
                       .to(m_masters.device(), at::kFloat),
                   weight);
    }
}

void ShardOwner::accumulate(size_t piece, const at::Tensor& grad, double weight) {
    if (!m_sum[piece].defined())
        m_sum[piece] = grad.mul(weight);
    else
        m_sum[piece].add_(grad, weight);
}

void ShardOwner::applySpan(int64_t from, int64_t to, double lr, bool endsStep) {
    std::vector<at::Tensor> grads(m_pieces.size());
    for (size_t p = 0; p < m_pieces.size(); ++p)
        if (m_pieces[p].at >= from && m_pieces[p].at < to)
            grads[p] = std::exchange(m_sum[p], at::Tensor());
    stepSpan(from, to, grads, lr, endsStep);
    if (endsStep)
        m_added = 0;
}

void ShardOwner::stepSpan(int64_t /*from*/, int64_t /*to*/, const std::vector<at::Tensor>& sum,
                          double lr, bool endsStep) {
    m_optimizer->step(sum, lr, endsStep);
}

namespace {

// The owners sorted by their ranges, or an error unless they cover [0, values) once.
Expected<std::vector<const ShardOwner*>> tiled(std::vector<const ShardOwner*> owners,
                                               int64_t values) {
    std::sort(owners.begin(), owners.end(),
              [](const ShardOwner* a, const ShardOwner* b) { return a->begin() < b->begin(); });
    int64_t at = 0;
    for (const ShardOwner* o : owners) {
        if (o->begin() != at)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("the shards leave values %1 to %2 without an owner")
                                 .arg(at)
                                 .arg(o->begin()));
        at = o->end();
    }
    if (at != values)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the shards end at value %1 of %2").arg(at).arg(values));
    return owners;
}

} // namespace

Expected<NamedTensors> ShardOwner::gatherState(const std::vector<const ShardOwner*>& owners) {
    if (owners.empty())
        return NamedTensors{};
    const ShardLayout& layout = owners.front()->m_layout;
    auto sorted = tiled(owners, layout.values);
    if (!sorted)
        return sorted.error();
    // slot -> tensor -> its pieces, in order; step counts per tensor.
    std::map<std::string, std::map<int64_t, std::vector<at::Tensor>>> slots;
    std::map<int64_t, at::Tensor> steps;
    std::map<int64_t, int> piecesOfTensor;
    for (const ShardOwner* o : *sorted) {
        for (const ShardLayout::Piece& p : o->m_pieces)
            ++piecesOfTensor[p.tensor];
        for (const auto& [name, t] : o->m_optimizer->stateTensors()) {
            std::string slot;
            int64_t index = 0;
            if (!splitStateName(name, slot, index) || size_t(index) >= o->m_pieces.size())
                return makeError(ErrorCode::Corrupt, QStringLiteral("optimizer state %1 names no "
                                                                    "piece of its shard")
                                                         .arg(QString::fromStdString(name)));
            const int64_t tensor = o->m_pieces[size_t(index)].tensor;
            if (slot == "step")
                steps[tensor] = t;
            else
                slots[slot][tensor].push_back(t.reshape({-1}));
        }
    }
    NamedTensors out;
    for (auto& [slot, tensors] : slots)
        for (auto& [tensor, parts] : tensors) {
            if (int(parts.size()) != piecesOfTensor[tensor])
                return makeError(ErrorCode::Incompatible,
                                 QStringLiteral("the owners of parameter %1 keep %2 for only part "
                                                "of it")
                                     .arg(tensor)
                                     .arg(QString::fromStdString(slot)));
            const at::Tensor whole = at::cat(parts);
            const std::vector<int64_t> shape = layout.slotShapeOf(slot, size_t(tensor));
            int64_t want = 1;
            for (int64_t d : shape)
                want *= d;
            if (whole.numel() != want)
                return makeError(ErrorCode::Incompatible,
                                 QStringLiteral("the owners of parameter %1 keep %2 values of %3, "
                                                "not its %4")
                                     .arg(tensor)
                                     .arg(whole.numel())
                                     .arg(QString::fromStdString(slot))
                                     .arg(want));
            out.emplace_back(slot + "." + std::to_string(tensor), whole.reshape(shape));
        }
    for (auto& [tensor, t] : steps)
        out.emplace_back("step." + std::to_string(tensor), t);
    return out;
}

Expected<std::vector<at::Tensor>>
ShardOwner::gatherMasters(const std::vector<const ShardOwner*>& owners) {
    if (owners.empty())
        return std::vector<at::Tensor>{};
    const ShardLayout& layout = owners.front()->m_layout;
    auto sorted = tiled(owners, layout.values);
    if (!sorted)
        return sorted.error();
    std::vector<at::Tensor> flat;
    for (const ShardOwner* o : *sorted)
        flat.push_back(o->m_masters);
    const at::Tensor all = at::cat(flat);
    std::vector<at::Tensor> out;
    for (size_t i = 0; i < layout.shapes.size(); ++i)
        out.push_back(
            all.narrow(0, layout.offsets[i], layout.valuesOf(i)).reshape(layout.shapes[i]).clone());
    return out;
}

StateParts StateParts::of(const NamedTensors& whole) {
    StateParts out;
    for (const auto& [name, t] : whole)
        out.entries.push_back(
            {name, t.numel(), [name, t](int64_t offset, int64_t n) -> Expected<at::Tensor> {
                 if (offset < 0 || n < 0 || offset + n > t.numel())
                     return makeError(
                         ErrorCode::InvalidArgument,
                         QStringLiteral("optimizer state %1: values %2 to %3 of its %4")
                             .arg(QString::fromStdString(name))
                             .arg(offset)
                             .arg(offset + n)
                             .arg(t.numel()));
                 return t.reshape({-1}).narrow(0, offset, n).clone();
             }});
    return out;
}

StateParts StateParts::of(const QList<LazyTensor>& lazy) {
    StateParts out;
    for (const LazyTensor& l : lazy) {
        int64_t numel = 1;
        for (int64_t d : l.shape)
            numel *= d;
        out.entries.push_back({l.name.toStdString(), numel, [l](int64_t offset, int64_t n) {
                                   return readLazyPart(l, offset, n);
                               }});
    }
    return out;
}

Status ShardOwner::restore(int64_t steps, const NamedTensors& whole) {
    return restore(steps, StateParts::of(whole));
}

Status ShardOwner::restore(int64_t steps, const StateParts& whole) {
    // The optimizer takes the parts as they are read: each is held once.
    NamedTensors mine;
    for (const StateParts::Entry& e : whole.entries) {
        std::string slot;
        int64_t tensor = 0;
        if (!splitStateName(e.name, slot, tensor) || size_t(tensor) >= m_layout.shapes.size())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("optimizer state %1 names no parameter")
                                 .arg(QString::fromStdString(e.name)));
        for (size_t p = 0; p < m_pieces.size(); ++p) {
            const ShardLayout::Piece& piece = m_pieces[p];
            if (piece.tensor != tensor)
                continue;
            const bool count = slot == "step";
            const ShardLayout::SlotPart sp = m_layout.slotPartOf(slot, piece);
            if (!count && e.numel < sp.offset + sp.values)
                return makeError(ErrorCode::Incompatible,
                                 QStringLiteral("optimizer state %1 does not fit its parameter")
                                     .arg(QString::fromStdString(e.name)));
            auto part = count ? e.read(0, e.numel) : e.read(sp.offset, sp.values);
            if (!part)
                return part.error();
            mine.emplace_back(slot + "." + std::to_string(p), std::move(*part));
        }
    }
    return m_optimizer->restore(steps, mine);
}

TensorFile ShardOwner::rangeState() const {
    TensorFile file;
    file.meta.insert(QStringLiteral("begin"), qint64(m_begin));
    file.meta.insert(QStringLiteral("end"), qint64(m_end));
    file.meta.insert(QStringLiteral("steps"), qint64(m_optimizer->stepCount()));
    for (const auto& [name, t] : m_optimizer->stateTensors())
        file.lazy << toLazy(name, t);
    file.lazy << toLazy(kRangeMastersRecord, m_masters);
    return file;
}

QByteArray ShardOwner::rangeStateBytes() const {
    auto bytes = serializeCheckpoint(rangeState());
    return bytes ? *bytes : QByteArray();
}

Status ShardOwner::restoreRange(int64_t steps, const QByteArray& bytes) {
    // Read where the bytes lie: the state is copied once, into the owner's tensors.
    auto file = parseCheckpointInPlace(bytes, QStringLiteral("a range's optimizer state"));
    if (!file)
        return file.error();
    if (file->meta.value(QStringLiteral("begin")).toInteger(-1) != m_begin ||
        file->meta.value(QStringLiteral("end")).toInteger(-1) != m_end ||
        file->meta.value(QStringLiteral("steps")).toInteger(-1) != steps)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the optimizer state of values %1 to %2 after %3 step(s) "
                                        "is not what was sent")
                             .arg(m_begin)
                             .arg(m_end)
                             .arg(steps));
    QList<TensorRecord> state;
    for (const TensorRecord& r : file->tensors) {
        if (r.name != QLatin1String(kRangeMastersRecord)) {
            state << r;
            continue;
        }
        auto masters = fromRecord(r);
        if (!masters)
            return masters.error();
        if (masters->numel() != m_masters.numel())
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("the weights of values %1 to %2 are %3 values")
                                 .arg(m_begin)
                                 .arg(m_end)
                                 .arg(masters->numel()));
        at::NoGradGuard noGrad;
        m_masters.copy_(masters->reshape({-1}).to(at::kFloat)); // in place: the views stay
    }
    return m_optimizer->restore(steps, state);
}

} // namespace tandem
