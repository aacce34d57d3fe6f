#pragma once

#include "engine/internal.h"

// Engine-internal: what the owner of one shard of a run's trainable values (shardplan.h) keeps
// and does. It holds the fp32 masters of its range, the optimizer's state for them and, during a
// step, the sum of the workers' gradients for them. Each worker cuts its gradients to the range
// (cut()), the owner adds each, weighted by the samples that worker computed, and applies the
// optimizer to its range alone.
//
// Every optimizer Tandem offers updates each value from that value's own gradient and state, so
// a range that begins or ends inside a tensor takes the step the whole tensor would: a run's
// result does not depend on how its values are sharded, to fp32 rounding. The state a checkpoint
// keeps is the one-owner run's (gatherState(): "exp_avg.3" over the whole of parameter 3), so a
// run resumes on another set of owners, or on one.

#include "common/expected.h"
#include "engine/step/optimizer.h"
#include "engine/step/statename.h"
#include "formats/tensorfile.h"
#include "model/tensors.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

// A whole model's optimizer state that ranges are cut from, in the one-owner run's names
// (Optimizer::stateTensors()): each tensor's values are read a part at a time, so that cutting a
// range reads its own part only. A resumed run's checkpoint is read from its file so, range by
// range, and never held whole.
struct StateParts {
    struct Entry {
        std::string name;
        int64_t numel = 0;
        // Values [offset, offset + n), flattened, in a tensor of the caller's own.
        std::function<Expected<at::Tensor>(int64_t offset, int64_t n)> read;
    };
    std::vector<Entry> entries;

    // Tensors in memory: their parts are copied out.
    static StateParts of(const NamedTensors& whole);
    // A checkpoint's tensors (openCheckpoint): their parts are read from its file.
    static StateParts of(const QList<LazyTensor>& lazy);
};

// Where each trainable tensor lies in the run's flat order of values: the order a gradient bundle
// holds them (wiretensors.h's BundleOrder::Backward: the last tensor first, each tensor's values
// in their own order). A range of values is then one run of a gradient bundle's bytes, which a
// worker sends its owner as the backward pass makes it final, without repacking.
struct ShardLayout {
    std::vector<std::vector<int64_t>> shapes; // each trainable tensor's shape, in schema order
    std::vector<int64_t> offsets;             // its first value in the flat order
    int64_t values = 0;                       // all of them

    static ShardLayout of(const std::vector<at::Tensor>& trainable);
    int64_t valuesOf(size_t tensor) const;

    // The parts of the tensors that lie in the range [begin, end), in the tensors' order: each
    // one's tensor, its first value within that tensor, how many, and where in the range it
    // starts. A tensor with no value in the range has no piece.
    struct Piece {
        int tensor = 0;
        int64_t offset = 0; // within the tensor
        int64_t values = 0;
        int64_t at = 0; // within the range
    };
    std::vector<Piece> piecesOf(int64_t begin, int64_t end) const;
    // Where a piece's part of an optimizer slot lies in the whole tensor's slot: a slot kept a
    // value at a time ("exp_avg") at the piece's values; one kept a block at a time (8-bit
    // AdamW's "exp_avg_absmax": BlockwiseAdamW's blocks of the flat order) at the blocks the
    // piece's values lie in. Pieces cut where a block begins (ranges and segments are) share none.
    struct SlotPart {
        int64_t offset = 0;
        int64_t values = 0;
    };
    SlotPart slotPartOf(const std::string& slot, const Piece& piece) const;
    // The shape of a tensor's whole slot: the tensor's own, or its blocks'.
    std::vector<int64_t> slotShapeOf(const std::string& slot, size_t tensor) const;
    // Where the first value of the piece that begins at value `offset` of `tensor` falls in its
    // block of the flat order (BlockwiseAdamW's phase).
    int64_t blockPhaseOf(size_t tensor, int64_t offset) const;
    // Copies the values [begin, end) of `params` (in schema order, any device and float dtype)
    // into `into`, flat fp32 of end - begin values: a range's weights as its owner starts from.
    void copyRange(int64_t begin, int64_t end, const std::vector<at::Tensor>& params,
                   at::Tensor into) const;
};

// The values one step exchanges, as a run [begin, end) of the flat order (ShardLayout): every
// value, as a sync or local-SGD step has it, or one of streaming local-SGD's fragments
// (fragmentWindows()), whose delta a worker sends as a bundle of that run alone. Its ends fall
// where tensors begin, so that each of an owner's pieces lies wholly inside it or outside.
struct ShardWindow {
    int64_t begin = 0;
    int64_t end = std::numeric_limits<int64_t>::max();

    // The part of the range [first, last) inside the window, counted from the range's start:
    // empty (both at the same place) where they do not meet.
    std::pair<int64_t, int64_t> within(int64_t first, int64_t last) const {
        const int64_t from = std::clamp(begin, first, last), to = std::clamp(end, from, last);
        return {from - first, to - first};
    }
    bool operator==(const ShardWindow& o) const { return begin == o.begin && end == o.end; }
};

// Writes the range [begin, end) of `layout`'s values, as an owner packed it (packMasters), into a
// replica's parameters (`params`, in schema order, on any device and of any float dtype).
// Refuses bytes of another size.
Status writeRange(const ShardLayout& layout, int64_t begin, int64_t end, const QByteArray& bytes,
                  DType wire, std::vector<at::Tensor>& params);

// The name of a range's fp32 weights in ShardOwner::rangeStateBytes(): one no optimizer slot
// has (those are "slot.index").
inline constexpr char kRangeMastersRecord[] = "masters";

// How many values an owner steps at a time during a step (ShardOwner::segmentEnds): a segment
// whose gradients every worker has sent is stepped, and its weights leave, while the rest of the
// range still arrives. An eighth of the range, between 4,096 values and a million (a few
// milliseconds of Adam, and a few megabytes on the wire), in whole blocks of 8-bit AdamW's 256
// values, so that a segment's step never cuts one of its blocks (ranges begin on kShardAlignment
// values). Every machine cuts a range the same way, so an owner's state names the same pieces
// on each.
int64_t shardSegmentValues(int64_t rangeValues);
// How many bytes of stepped segments an owner lets wait on its links before it steps the next
// (ShardNode): their sums for the machine that logs them and their weights for every machine.
inline constexpr int64_t kShardSendQueueBytes = int64_t(64) << 20;

class ShardOwner {
public:
    // The owner of [begin, end) of `layout`'s values, its masters `masters` (fp32, one value per
    // value of the range, in order; copied), stepped in segments of `segmentValues` (0:
    // shardSegmentValues()).
    ShardOwner(ShardLayout layout, int64_t begin, int64_t end, const at::Tensor& masters,
               OptimizerConfig config, int64_t segmentValues = 0);
    // The same, taking `masters` as they are (flat, contiguous fp32 of the range's size, held by
    // no one else): a range of gigabytes is then not held twice while its owner is made.
    static ShardOwner adopting(ShardLayout layout, int64_t begin, int64_t end, at::Tensor masters,
                               OptimizerConfig config, int64_t segmentValues = 0);
    // The owner of [begin, end), its masters cut from the whole model's `params`.
    static ShardOwner fromParams(ShardLayout layout, int64_t begin, int64_t end,
                                 const std::vector<at::Tensor>& params, OptimizerConfig config,
                                 int64_t segmentValues = 0);
    // The pieces an owner of [begin, end) keeps its state by (pieces()): each tensor's part of
    // the range, cut again where a segment of `segmentValues` (0: shardSegmentValues()) ends.
    static std::vector<ShardLayout::Piece> piecesOf(const ShardLayout& layout, int64_t begin,
                                                    int64_t end, int64_t segmentValues = 0);
    // Where the segments of a range of `rangeValues` end (segmentEnds()).
    static std::vector<int64_t> segmentEndsOf(int64_t rangeValues, int64_t segmentValues = 0);

    int64_t begin() const { return m_begin; }
    int64_t end() const { return m_end; }
    // The range's pieces of tensors (ShardLayout::piecesOf), each cut again where a segment
    // ends: no piece lies in two segments.
    const std::vector<ShardLayout::Piece>& pieces() const { return m_pieces; }
    // Where each segment ends, counted from the range's first value, in order; the last is the
    // range's size (none for an empty range).
    const std::vector<int64_t>& segmentEnds() const { return m_segmentEnds; }

    // This owner's pieces of tensors shaped as the trainable parameters (gradients, weights), in
    // schema order: flat views, undefined where the tensor is. What a worker sends the owner.
    std::vector<at::Tensor> cut(const std::vector<at::Tensor>& perTensor) const;

    // Adds one worker's gradients for this range (cut()), each the mean over the samples it
    // computed, weighted by `weight` (its samples over the step's). An undefined piece adds
    // nothing; a piece that is nowhere defined leaves its values and their state as they are, as
    // torch.optim does. Refuses pieces that do not fit the range, naming the first, and
    // gradients that are not finite; a refused worker adds nothing.
    Status add(const std::vector<at::Tensor>& pieceGrads, double weight);
    // The same from the range's bytes of a worker's gradient bundle (bundleBytes()) in the wire
    // dtype `wire`. Refuses bytes of another size.
    Status addWire(const QByteArray& bytes, DType wire, double weight);
    // Where the range lies in a gradient bundle of dtype `wire`: its first byte and how many.
    std::pair<qint64, qint64> bundleBytes(DType wire) const;
    // Applies the optimizer to the sum at learning rate `lr` and clears it; masters() is then the
    // range's new weights.
    void apply(double lr);
    // A step taken a segment at a time. addSpan() adds one worker's gradients for the values
    // [from, to) of the range, from and to a segment's start and an end (segmentEnds()), `values`
    // their bytes in the wire dtype `wire` (checked finite by the caller), weighted as add()
    // does; applySpan() then steps those values with what was added for them and clears it.
    // Each value takes one step; the step counts (stepCount()) with the span that ends the range.
    // The same arithmetic as add() and apply() over the whole range.
    void addSpan(const char* values, DType wire, double weight, int64_t from, int64_t to);
    void applySpan(int64_t from, int64_t to, double lr) {
        applySpan(from, to, lr, to == m_end - m_begin);
    }
    // The same, the step counting with this span where `endsStep` says so: a streaming round
    // steps only the values of its fragment (shardstep.h's ShardWindow), and its last span, or
    // none where the range has no value in the fragment, ends the round's step.
    void applySpan(int64_t from, int64_t to, double lr, bool endsStep);
    // Steps the values [from, to) with a sum made elsewhere (`sum` per piece, undefined outside
    // the span or where it has none): what applySpan() does with its own. A logged step
    // (shardlog.h) is rebuilt so.
    void stepSpan(int64_t from, int64_t to, const std::vector<at::Tensor>& sum, double lr) {
        stepSpan(from, to, sum, lr, to == m_end - m_begin);
    }
    // The same, the step counting where `endsStep` says (applySpan()).
    void stepSpan(int64_t from, int64_t to, const std::vector<at::Tensor>& sum, double lr,
                  bool endsStep);
    // Workers whose gradients the sum holds now.
    int added() const { return m_added; }
    // The sum, per piece (undefined where no gradient was added): what apply() and applySpan()
    // step with, and what the coordinator logs (shardlog.h).
    const std::vector<at::Tensor>& sum() const { return m_sum; }

    // The range's fp32 weights, flat.
    const at::Tensor& masters() const { return m_masters; }
    // The same in the wire dtype `wire`: what the owner sends every worker after a step
    // (writeRange() puts it in place).
    QByteArray packMasters(DType wire) const;
    // The same for the values [from, to) of the range.
    QByteArray packMasters(DType wire, int64_t from, int64_t to) const;
    int64_t stepCount() const { return m_optimizer->stepCount(); }

    // The optimizer state of the whole model, in the one-owner run's names and shapes, from the
    // owners of every range (in any order; together they must cover the values once).
    static Expected<NamedTensors> gatherState(const std::vector<const ShardOwner*>& owners);
    // The whole model's weights from the owners of every range.
    static Expected<std::vector<at::Tensor>>
    gatherMasters(const std::vector<const ShardOwner*>& owners);
    // Takes this range's part of a whole model's optimizer state (gatherState(), or a one-owner
    // run's Optimizer::stateTensors()) after `steps` steps.
    Status restore(int64_t steps, const NamedTensors& whole);
    // The same, reading only this range's parts of each tensor.
    Status restore(int64_t steps, const StateParts& whole);
    // This range's optimizer state as it keeps it (named by its pieces, not the model's
    // tensors), and its fp32 weights: what travels between the coordinator and the range's
    // owner, in a checkpoint container (rangeStateBytes()), and what restoreRange() takes back.
    // The weights come with it because a replica holds them only as the wire carried them.
    QByteArray rangeStateBytes() const;
    // The same container's contents, unwritten: each tensor is read where it lies when it is
    // written (toLazy), so the container is the one copy. The range must not step until then.
    TensorFile rangeState() const;
    Status restoreRange(int64_t steps, const QByteArray& bytes);

private:
    struct Adopt {};
    ShardOwner(ShardLayout layout, int64_t begin, int64_t end, at::Tensor masters,
               OptimizerConfig config, int64_t segmentValues, Adopt);
    // Adds `grad` (fp32, on the masters' device) times `weight` to piece `piece`'s sum.
    void accumulate(size_t piece, const at::Tensor& grad, double weight);

    ShardLayout m_layout;
    int64_t m_begin = 0;
    int64_t m_end = 0;
    std::vector<ShardLayout::Piece> m_pieces;
    std::vector<int64_t> m_segmentEnds;
    at::Tensor m_masters;
    std::vector<at::Tensor> m_views; // m_masters' pieces, the optimizer's parameters
    std::vector<at::Tensor> m_sum;   // per piece; undefined until a gradient adds to it
    int m_added = 0;
    std::unique_ptr<Optimizer> m_optimizer;
};

} // namespace tandem
