#pragma once

#include "engine/internal.h"

// Engine-internal: what a device must hold to train a run's model, worked out before the run
// starts from the model's tensors and, for a Hugging Face transformer, from its config and the
// context: the weights, the gradients and optimizer state of what trains, and the activations
// one sample keeps for the backward pass. A device that cannot hold the model and one sample is
// refused with the figures, before training; one that can gets a cap on the samples per
// forward pass that fit, so the balancer never hands it more (the out-of-memory retry in
// smaller parts stays for what the estimate misses).

#include "common/deviceinfo.h"
#include "common/expected.h"
#include "engine/training.h"
#include "formats/dataset.h"
#include "model/model.h"

#include <utility>

namespace tandem {

struct MemoryNeed {
    int64_t weightBytes = 0;    // every parameter and buffer, in its own dtype
    int64_t trainingBytes = 0;  // gradients (a tied embedding's two) and optimizer state
    int64_t perSampleBytes = 0; // activations kept for one sample's backward pass (0: unknown)
    int64_t nf4SavingBytes = 0; // what a LoRA base held in nf4 would save (0: not applicable)
    int64_t dataBytes = 0;      // the training set, when kept on the device (keepDataOnDevice)
    int64_t exchangeBytes = 0;  // a sharded step's on a machine that computes (shardplan.h)
    // A trained tied embedding's lookup gradient where it is dense, off the CPU: a third table
    // beside the two trainingBytes counts (transformer.cpp takes it sparse on the CPU alone).
    int64_t denseLookupBytes = 0;
    // What the local modes keep in the host's memory whatever the device (a round's delta,
    // streaming's fragments, a remote worker's record of the global weights): counted where the
    // device is the CPU.
    int64_t hostBytes = 0;
    // Of trainingBytes and hostBytes, what local SGD keeps beyond the same run in sync (for the
    // refusal, which then says so).
    int64_t beyondSyncBytes = 0;
    int64_t beyondSyncHostBytes = 0;

    int64_t fixedBytes() const { return weightBytes + trainingBytes + dataBytes + exchangeBytes; }
    // The need on `device`: with denseLookupBytes in trainingBytes where it is not a CPU, and
    // hostBytes where it is.
    MemoryNeed on(const DeviceInfo& device) const {
        MemoryNeed n = *this;
        if (device.kind != DeviceKind::Cpu && device.kind != DeviceKind::Emulated)
            n.trainingBytes += denseLookupBytes;
        else {
            n.trainingBytes += hostBytes;
            n.beyondSyncBytes += beyondSyncHostBytes;
        }
        n.denseLookupBytes = 0;
        n.hostBytes = 0;
        n.beyondSyncHostBytes = 0;
        return n;
    }
};

// The optimizer's state for each trainable value: Adam's two moments, SGD's momentum, 8-bit
// AdamW's two codes.
int64_t optimizerBytesPerValue(OptimizerKind k);
// The whole state for `values` trainable values: the above, and 8-bit AdamW's block scales.
int64_t optimizerStateBytes(OptimizerKind k, int64_t values);

// What the coordinator keeps on a device beside the replica of its own worker there.
enum class MasterCopy {
    None,     // a worker's device: no masters
    Shared,   // the replica reads the fp32 masters in place: only the run's optimizer state adds
    Separate, // fp32 masters of their own (another dtype, or local-SGD) and the optimizer state
};
// A worker's need: its replica, its gradients and, in local modes, its own optimizer's state
// and a round's copies (MemoryNeed::hostBytes), plus what `masters` says the coordinator keeps
// beside it (in local modes the outer optimizer's state, not the run's).
MemoryNeed memoryNeed(const Model& model, const Dataset& train, const RunConfig& cfg,
                      MasterCopy masters);
// The model's trainable values, and the most in one tensor.
std::pair<int64_t, int64_t> trainableValues(const Model& model);
// A remote worker's side of local-SGD's outer traffic, in the host's memory: the global
// weights as the coordinator's bundles add up to (outerwire.h's OuterWorkerSide), 4 bytes a
// trainable value, and, where it sends its deltas over the outer wire `wire` (not to a sharded
// run's owners), 4 more: what a rounding wire rounded away, or the bytes of an fp32 one, which
// rounds nothing. Those bytes are one fragment's where the run streams in `fragments`.
int64_t outerWorkerSideBytes(const Model& model, bool sendsDeltas, OuterWire wire, int fragments);

// What the coordinator keeps on `device`, where its own worker trains: nothing when the masters
// live in the other memory (the host's, beside an accelerator), else shared or separate as the
// replica can read them in place (an fp32 replica, outside local-SGD).
MasterCopy mastersBeside(const DeviceInfo& device, bool mastersOnAccelerator, const RunConfig& cfg);

// On a CPU without fast bf16 arithmetic (cpuMultipliesBf16Fast), a frozen bf16 or fp16 base of
// an fp32 run is computed from an fp32 copy when the copy, and the activations in fp32, fit the
// device beside the run (MemoryNeed then counts them). What was done or why not, for the log;
// empty where nothing applies.
QString widenSlowFrozenBase(const Model& model, const Dataset& train, const RunConfig& cfg,
                            const DeviceInfo& device, MasterCopy masters);
// What a run may use of a device: most of a GPU's memory, about three quarters of a Mac's
// (Metal's recommended working set), and most of a CPU machine's memory.
int64_t memoryBudget(const DeviceInfo& device);

// Whether `train` is kept whole on `device` (batch.h's ResidentRows), so that a step copies only
// its sample indices there: on an accelerator whose budget is known, when the set takes at most
// an eighth of what the model's fixed part leaves of it. When it is, `need` counts it. A CPU's
// batches are in its own memory already.
bool keepDataOnDevice(const Dataset& train, const DeviceInfo& device, MemoryNeed& need);

// The most samples per forward pass that fit `device` (0: no limit known), or an error naming
// the figures when not even the model and one sample fit. `who` names the machine.
Expected<int64_t> samplesThatFit(const MemoryNeed& need, const DeviceInfo& device,
                                 const QString& who);

// "1.5 GB", "820 MB".
QString bytesText(int64_t bytes);

} // namespace tandem
