#pragma once

#include "engine/internal.h"

// Engine-internal: one sync step of a sharded run as each side sees it, whatever carries the
// bytes. A worker's gradient bundle (wiretensors.h) holds each owner's range as one run of bytes,
// and the backward pass makes them final from the first range on (ShardRoute). Each owner takes
// every worker's range in parts, in order (OwnerStep), and checks a range once it is whole; a
// range that is not finite, or a worker that goes before its range is whole, leaves nothing
// behind. The coordinator closes the step with the workers whose results count and their
// weights, the same on every owner, so a worker lost mid-step counts nowhere, even where its
// range had arrived; each owner then adds those ranges in the order given, steps its optimizer
// and sends its new weights to every worker, which writes them in place (ReplicaStep).
//
// The sum takes the same arithmetic, in the same order, as the coordinator's over the whole
// model (modes/sync.cpp's combineResults), so a sharded step gives a one-owner step's weights to
// fp32 rounding.

#include "common/expected.h"
#include "engine/shard/shardlog.h"
#include "engine/shard/shardowner.h"

#include <QByteArray>
#include <QString>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace tandem {

// Streaming local-SGD's `fragments` (modes/fragments.h: runs of consecutive tensors in schema
// order) as windows of the flat order, in the fragments' order. The flat order holds the last
// tensor first, so each fragment is one run of it.
std::vector<ShardWindow> fragmentWindows(const ShardLayout& layout, int fragments);

// Where each owner's range lies in a worker's gradient bundle of one wire dtype, and which of them
// a backward pass has made final.
class ShardRoute {
public:
    // `ranges`: each owner's [begin, end) of the values, in the values' order, from the first value
    // to the last without a gap.
    ShardRoute(std::vector<std::pair<int64_t, int64_t>> ranges, DType wire);

    // The bundles routed from now on hold the window's values only (a streaming round's
    // fragment): each range is its part inside the window, counted from the window's start, and
    // a range outside it has no bytes. reset() follows.
    void setWindow(const ShardWindow& window);
    size_t size() const { return m_ranges.size(); }
    // Range `r`'s first byte in the bundle and how many.
    std::pair<qint64, qint64> bytesOf(size_t r) const;
    // Starts a new bundle: nothing has been handed out.
    void reset() {
        m_next = 0;
        m_sent = 0;
    }
    // The ranges that `ready` final bytes from the bundle's front (GradientBundle::ready()) make
    // whole and that no earlier call returned, in order: what a worker can send now.
    std::vector<size_t> readyUpTo(qint64 ready);
    // The same in parts: the final bytes up to `ready` that no earlier call returned, cut at the
    // ranges' ends, each part `minBytes` or more but a range's last. Range r's part starts at
    // byte `offset` of the range (bytesOf(r)), where the one before it ended.
    struct Part {
        size_t range = 0;
        qint64 offset = 0;
        qint64 size = 0;
    };
    std::vector<Part> partsUpTo(qint64 ready, qint64 minBytes);
    // The bundle's bytes from its front that the calls so far have handed out.
    qint64 handedOut() const { return m_sent; }

private:
    std::vector<std::pair<int64_t, int64_t>> m_all;    // as made
    std::vector<std::pair<int64_t, int64_t>> m_ranges; // inside the window
    qint64 m_element = 4;
    size_t m_next = 0;
    qint64 m_sent = 0; // the bundle's bytes handed out, from its front
};

// One owner's side of each step: the workers' ranges as they arrive, and the step a segment at a
// time (ShardOwner::segmentEnds): once the coordinator has said which workers count, each segment
// that all of them have sent is stepped and its weights go out, while the rest still arrives.
class OwnerStep {
public:
    // `owner` outlives this; `wire` is the dtype the workers send gradients and take weights in.
    OwnerStep(ShardOwner& owner, DType wire);

    // Opens step `step` and drops whatever an earlier step left. Parts for another step are
    // refused from now on. The step exchanges the values of `window` only: the range's part
    // inside it is what each worker sends and what is stepped, and a range outside it closes
    // without a value. Opening the step that is open changes nothing.
    void open(int64_t step, const ShardWindow& window = {});
    int64_t step() const { return m_step; }

    // Worker `worker`'s part of its gradients for this range: `bytes` from byte `offset` of the
    // range (ShardRoute::bytesOf's count in all). Parts come in order. Returns whether the range
    // is now whole. Refuses a part for another step, out of order, beyond the range or after the
    // range was whole; and a part that is not finite, after which what the worker sent is dropped.
    // A refused part changes nothing else.
    Expected<bool> receive(int64_t step, const QString& worker, qint64 offset,
                           const QByteArray& bytes);
    // Drops what `worker` sent this step (it left, or its range was refused elsewhere).
    void forget(const QString& worker);
    bool whole(const QString& worker) const;
    // The bytes of `worker`'s range held so far: where its next part starts.
    qint64 received(const QString& worker) const;
    // The workers whose range is whole, by name.
    std::vector<QString> wholeWorkers() const;

    // Whether a close of step `step` with `counted` would be taken once their ranges are whole:
    // close()'s checks but that one.
    Status check(int64_t step, const std::vector<std::pair<QString, double>>& counted) const;
    // Whether the range of every worker in `counted` is whole.
    bool wholeFor(const std::vector<std::pair<QString, double>>& counted) const;
    // Closes step `step`: adds the ranges of `counted` (each worker with its weight, its samples
    // over the step's) in the order given, applies the optimizer at `lr` and returns the range's
    // new weights in the wire dtype, for every worker. Refuses, before it changes anything, a
    // close for another step or one that counts a worker whose range is not whole, or the same
    // worker twice. The step is then over: a second close is refused.
    Expected<QByteArray> close(int64_t step, const std::vector<std::pair<QString, double>>& counted,
                               double lr);

    // The same as the ranges arrive: says how step `step` closes (refused as close() refuses, but
    // for ranges not yet whole, and once said). Then each advance() steps every segment that
    // every counted worker has sent, in order, up to `most` of them, adding their gradients as
    // close() does, and returns each one's new weights in the wire dtype, from its byte `offset`
    // of the range. The step is over once the last segment is.
    Status closeWhenHeld(int64_t step, const std::vector<std::pair<QString, double>>& counted,
                         double lr);
    struct Weights {
        qint64 offset = 0;
        QByteArray bytes;
        std::optional<ShardLog::Span> sum; // what the segment added, where sums are kept
    };
    // Whether each segment's Weights carry what its step added (for the coordinator's log).
    void setKeepSums(bool keep) { m_keepSums = keep; }
    std::vector<Weights> advance(size_t most = std::numeric_limits<size_t>::max());
    bool closing() const { return m_close.has_value(); }
    bool closed() const { return m_closed; }

private:
    Status stale(int64_t step, const char* what) const;
    // Steps segment m_segment: the counted workers' gradients for it, then the optimizer.
    Weights stepSegment();

    ShardOwner& m_owner;
    DType m_wire;
    qint64 m_bytes = 0;                 // the step's part of the range, in the wire dtype
    int64_t m_from = 0, m_to = 0;       // that part, counted from the range's first value
    std::vector<int64_t> m_segmentEnds; // the range's segments' ends inside it
    int64_t m_step = -1;
    bool m_closed = false;
    std::map<QString, QByteArray> m_parts; // by worker; whole when it holds m_bytes
    struct Close {
        std::vector<std::pair<QString, double>> counted;
        double lr = 0;
    };
    std::optional<Close> m_close; // said, and not every segment stepped
    size_t m_segment = 0;         // the next segment to step
    bool m_keepSums = false;
};

// A worker's side of each step's end: every owner's new weights, written into its replica.
class ReplicaStep {
public:
    ReplicaStep(ShardLayout layout, std::vector<std::pair<int64_t, int64_t>> ranges, DType wire);

    // Opens step `step`, which exchanges the values of `window` only: each range's part inside
    // it comes, and a range outside it is whole from the start.
    void open(int64_t step, const ShardWindow& window = {});
    // Owner of range `r`'s new weights for step `step` (OwnerStep::close), or the next part of
    // them (OwnerStep::advance; each owner's parts come in order), written into `params` (the
    // replica's trainable tensors, in schema order; a streaming step's may hold the window's
    // tensors only). Refuses weights for another step, for a
    // range that does not exist or is whole already, or beyond the range's end; `params` is then
    // unchanged.
    Status receive(int64_t step, size_t r, const QByteArray& bytes,
                   std::vector<at::Tensor>& params);
    // Every range's weights have arrived: the replica holds the step's model.
    bool complete() const { return m_arrived == m_ranges.size(); }
    // Range `r`'s values written this step.
    int64_t have(size_t r) const { return r < m_have.size() ? m_have[r] : 0; }

private:
    ShardLayout m_layout;
    std::vector<std::pair<int64_t, int64_t>> m_all;    // as made
    std::vector<std::pair<int64_t, int64_t>> m_ranges; // inside the open step's window
    DType m_wire;
    int64_t m_step = -1;
    std::vector<int64_t> m_have; // values of each range written this step
    size_t m_arrived = 0;        // ranges whole
};

} // namespace tandem
