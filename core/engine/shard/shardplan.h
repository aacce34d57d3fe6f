#pragma once

#include "common/deviceinfo.h"
#include "common/expected.h"
#include "common/runenums.h"
#include "engine/coordinator/modechoice.h"
#include "engine/internal.h"
#include "engine/training.h"
#include "formats/tensorfile.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

// Who owns which part of a sharded run's trainable parameters. An owner keeps, for each value of
// its shard, the fp32 master, the optimizer's state and the sum of the workers' gradients, and
// applies the optimizer to them; every other machine keeps only its own worker's replica. That is
// what lets a full fine-tune need more memory than any one machine has, as long as the machines
// together have it (ZeRO's stages 1 and 2 split the same state across the ranks of a job).
//
// The values are the model's trainable parameters flattened in a gradient bundle's order
// (shardowner.h's ShardLayout), so a shard is one range of them and may begin or end inside a
// tensor; boundaries fall on multiples of
// kShardAlignment values. Each machine's part follows the speed of its link where every link is
// known, else it is equal: a larger part means more traffic, in gradients in and weights out. No
// machine is given more than it can hold beside its own worker; what it cannot hold goes to the
// others in the same proportions, so a small machine holds less, a machine that computes nothing
// (a CPU box left out of the step) holds more, and a plan is refused only when the machines
// together cannot hold the state.

// A machine that can own a shard.
struct ShardCandidate {
    QString name;             // "this machine", or the peer's name
    int64_t budgetBytes = 0;  // what a run may use of its device (memoryBudget; 0: not said)
    int64_t workerBytes = 0;  // what its own worker needs there (0: it computes nothing)
    double linkBytesPerS = 0; // its link to the others (0: not measured)
    // What else it keeps for the run: the coordinator's model and the archive a joining worker is
    // sent, whether or not it computes.
    int64_t keptBytes = 0;
};

struct ShardPlan {
    struct Shard {
        int owner = -1;    // the candidate's index
        int64_t begin = 0; // its first value
        int64_t end = 0;   // one past its last
        int64_t bytes = 0; // what its owner keeps for it
        int64_t values() const { return end - begin; }
    };
    std::vector<Shard> shards; // in the values' order; a candidate that holds nothing has none
    int64_t values = 0;        // every trainable value
    int64_t bytesPerValue = 0; // what an owner keeps for each, a step's arriving gradients too

    // The shard `owner` holds, or null.
    const Shard* shardOf(int owner) const;
    // What a machine holds, for the log and the Cluster tab: "shard 2 of 3, 4.1 GB (40 % of the
    // model's trainable values)"; "no shard" where it holds none.
    QString describe(int owner) const;
};

// Shard boundaries fall on multiples of this many values: 4 KiB of fp32.
inline constexpr int64_t kShardAlignment = 1024;

// Where a plan's ranges end (`ends`, one a member), checked before a run is set up on them: each
// past the one before, the last at the last of `values`, and, for 8-bit AdamW, each of the others
// where one of its blocks begins (a plan's fall on kShardAlignment).
Status checkShardEnds(const std::vector<int64_t>& ends, int64_t members, int64_t values,
                      OptimizerKind optimizer);

// The most bytes a range of `values` values takes as fp32 weights or as an optimizer's state in a
// checkpoint container (ShardOwner::rangeStateBytes()): what a connection takes in one blob for it.
inline int64_t shardStateCap(int64_t values) {
    return values * 16 + (int64_t(1) << 20);
}

// What an owner keeps for each value of its shard for the whole run: the fp32 master and the
// optimizer's state. The gradients' sum is made a segment at a time as the step closes
// (OwnerStep::advance), from the arriving gradients (shardArrivingBytesPerValue), and lives only
// while its segment steps (shardOwnerStepBytes).
int64_t shardBytesPerValue(OptimizerKind optimizer);
// What the owner of a range of `values` values holds beside it while a segment steps, in a run of
// `machines` machines: the segment's fp32 sum (shardSegmentValues: a million values at most), its
// gradients as they are read from the wire's dtype and the optimizer's temporaries for it (16
// bytes a value of the segment); and the stepped segments' sums and weights that wait on the
// links (4 bytes a value for each machine): kShardSendQueueBytes (shardowner.h) and one segment
// more, whose sends may go out before the queue is looked at again, or the whole range's where
// that is less. About 100 MB at most among three machines.
int64_t shardOwnerStepBytes(int64_t values, int64_t machines);
// What an owner keeps for each value of its shard during a step beside that: each of the
// `computing` machines' gradients in the wire's dtype (`wire`), held from when they arrive until
// the step is over, since the sum adds them in the order the coordinator says once every result is
// in (shardstep.h's OwnerStep).
int64_t shardArrivingBytesPerValue(size_t computing, DType wire);

// What an owner keeps for each kShardAlignment values of its shard beside their bytes a value:
// 8-bit AdamW's fp32 scales, one a block of 256 for each moment (32 bytes); none for the others.
int64_t shardBlockBytesPerUnit(OptimizerKind optimizer);

// The plan for `values` trainable values across `machines`, each value taking `bytesPerValue`
// (shardBytesPerValue) and `arrivingBytesPerValue` (shardArrivingBytesPerValue) on its owner and
// each kShardAlignment of them `blockBytesPerUnit` more (shardBlockBytesPerUnit), or an
// out-of-memory error that says what each machine has, what the run needs, and the largest
// number of trainable values the machines could hold.
Expected<ShardPlan> planShards(int64_t values, int64_t bytesPerValue,
                               const std::vector<ShardCandidate>& machines,
                               int64_t arrivingBytesPerValue = 0, int64_t blockBytesPerUnit = 0);

// Each machine's link for a plan (ShardCandidate::linkBytesPerS), this machine's first, from
// the handshakes' probes of the workers' links (`workers`, in the machines' order after this
// one). Where the probes timed every one (none is only a floor) and the fastest is at least
// kShardLinkSpread times the slowest (Wi-Fi beside a wired LAN, say), each worker's is its own, and
// this machine's, through which each was timed, the fastest of them: a range's traffic a step grows
// with it, so a machine on a slower link holds less. Otherwise none is known (0 for each), and the
// ranges follow memory alone: links closer than that differ by what a probe's noise does to equal
// links.
inline constexpr double kShardLinkSpread = 2;
std::vector<double> shardLinkSpeeds(const std::vector<LinkFacts>& workers);

class Model;
struct Dataset;

// A machine of a sharded run, for its memory plan.
struct ShardMachine {
    QString name;
    DeviceInfo device;        // where its worker computes and its shard is kept
    bool computes = true;     // it runs a worker of the run
    double linkBytesPerS = 0; // its link to the others (0: not measured)
    int64_t keptBytes = 0;    // ShardCandidate::keptBytes
};

// What a sharded step's exchange keeps on a machine that computes, beside its replica: the
// gradient bundle its ranges leave from, and the other owners' weights that come while its step
// still computes, each up to the model's `trainable` values in the wire's dtype. A step whose
// gradients stream into the bundle (`streams`) keeps them there alone, in the wire's dtype, and
// the weights wait in the part of it that has left (ShardNode): the bundle takes the fp32
// gradients' place (shardWorkerNeed counts none beside it). Beside it, the largest tensor's fp32
// gradient (`largest` values) twice: a tensor used in two places (an input embedding tied to the
// output layer) keeps one use's gradient until the other's comes and they are added, and the one
// before it goes only once the next is copied. A step that does not stream keeps both beside the
// replica's fp32 gradients.
int64_t shardExchangeBytes(int64_t trainable, int64_t largest, WireDtype wire, bool streams);
// The same for a sharded streaming local-SGD round, whose model is cut into `fragments`: the
// fragment its delta leaves as (in the wire's dtype), and in fp32 the values of two fragments
// that land beside the replica (one step's while the step before waits to be merged) and the
// merge's copy of one. A fragment holds whole tensors, so it may pass its share of the values
// by up to the largest tensor.
int64_t shardRoundExchangeBytes(int64_t trainable, int64_t largest, WireDtype wire, int fragments);
// Whether a sharded run's steps stream their gradients into the bundle as the backward pass makes
// them (WorkRequest::onGradient): sync's single pass, without fp16's loss scaling, which may
// compute a step again.
bool shardStepStreams(const RunConfig& cfg);

// What a machine that computes in a sharded run holds beside its range: its replica, the
// activations (memoryplan.h, with no masters beside it), the step's exchange (shardExchangeBytes)
// and, where the step does not stream them into the exchange, the replica's fp32 gradients. The
// owners keep the masters and the optimizer's state.
struct MemoryNeed;
MemoryNeed shardWorkerNeed(const Model& model, const Dataset& train, const RunConfig& cfg);

// A sharded run's memory plan: each machine that computes holds what shardWorkerNeed says on its
// device for the samples it computes at once (the batch, up to what its budget holds for them);
// what its budget (memoryBudget) leaves holds its shard. Refused,
// with the figures, when a machine cannot hold even its worker (leave it out, and it holds a shard
// only) or the machines together cannot hold the run's state. The plan's shards follow
// `machines`' order.
Expected<ShardPlan> planShardedRun(const Model& model, const Dataset& train, const RunConfig& cfg,
                                   const std::vector<ShardMachine>& machines);

} // namespace tandem
