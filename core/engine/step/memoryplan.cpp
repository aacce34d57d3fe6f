#include "engine/step/memoryplan.h"

#include "engine/step/batch.h"
#include "formats/tokenstream.h"
#include "model/torchcompat.h"

#include <algorithm>
#include <limits>

namespace tandem {

namespace {

int64_t bytesOf(const at::Tensor& t) {
    return t.numel() * int64_t(t.element_size());
}

} // namespace

int64_t optimizerBytesPerValue(OptimizerKind k) {
    switch (k) {
    case OptimizerKind::Sgd:
        return 4;
    case OptimizerKind::AdamW8bit:
        return 2;
    default:
        return 8;
    }
}

int64_t optimizerStateBytes(OptimizerKind k, int64_t values) {
    int64_t bytes = values * optimizerBytesPerValue(k);
    // 8-bit AdamW's two fp32 scales a block of 256 values (1/32 of a byte a value), and a block
    // more for each tensor that does not end on one (a thousand tensors' worth).
    if (k == OptimizerKind::AdamW8bit)
        bytes += (values / 256 + 1024) * 8;
    return bytes;
}

QString bytesText(int64_t bytes) {
    const double kb = double(bytes) / 1024.0, mb = kb / 1024.0;
    if (mb >= 1024)
        return QStringLiteral("%1 GB").arg(mb / 1024.0, 0, 'f', 1);
    if (mb >= 1)
        return QStringLiteral("%1 MB").arg(qRound64(mb));
    return QStringLiteral("%1 KB").arg(qMax<int64_t>(1, qRound64(kb)));
}

MemoryNeed memoryNeed(const Model& model, const Dataset& train, const RunConfig& cfg,
                      MasterCopy masters) {
    MemoryNeed need;
    int64_t trainable = 0;
    int64_t elem = 4;
    // A widened base computes in fp32, from its copy beside the parameters.
    const int64_t widened = model.widenedBaseBytes();
    need.weightBytes += widened;
    for (const auto& [name, t] : model.parameters()) {
        need.weightBytes += bytesOf(t);
        if (t.requires_grad())
            trainable += t.numel();
        else if (t.is_floating_point() && widened == 0)
            elem = std::min<int64_t>(elem, int64_t(t.element_size()));
    }
    for (const auto& [name, t] : model.buffers())
        need.weightBytes += bytesOf(t);
    const bool local = cfg.mode == TrainMode::LocalSgd;
    const bool streaming = local && cfg.fragments > 1;
    // The gradients, and a tied embedding's second table while the backward pass adds its uses
    // (a third off the CPU, where the lookup's own is dense: MemoryNeed::on).
    const int64_t tiedTable = model.transientGradientBytes();
    need.trainingBytes =
        trainable * 4 + tiedTable + (local ? optimizerStateBytes(cfg.optimizer, trainable) : 0);
    need.denseLookupBytes = tiedTable;
    if (local) {
        // A round's copy of the weights: where they started (local-SGD, on the device), or each
        // fragment's global values or values as sent (streaming's FragmentTracker, in the host's
        // memory); and the round's result, its delta (one fragment's, streaming) on the host.
        if (streaming) {
            need.hostBytes += trainable * 4 + (trainable * 4 + cfg.fragments - 1) / cfg.fragments;
        } else {
            need.trainingBytes += trainable * 4;
            need.hostBytes += trainable * 4;
        }
    }
    if (masters != MasterCopy::None) {
        if (!local) {
            need.trainingBytes += optimizerStateBytes(cfg.optimizer, trainable);
        } else {
            // The outer optimizer's state (SGD's momentum, where there is one), whatever the
            // inner one is; streaming's copy of the weights for a worker that starts a round
            // whole, kept until the round is in; and what the coordinator knows each remote
            // worker holds (WeightMirror), in the host's memory.
            if (cfg.outerMomentum > 0)
                need.trainingBytes += optimizerStateBytes(OptimizerKind::Sgd, trainable);
            if (streaming)
                need.trainingBytes += trainable * 4;
            need.hostBytes += int64_t(std::max(0, cfg.workers)) * trainable * 4;
        }
    }
    if (masters == MasterCopy::Separate)
        need.trainingBytes += trainable * 4;
    if (local) {
        // The same run in sync, where an fp32 replica reads the masters in place.
        RunConfig sync = cfg;
        sync.mode = TrainMode::Sync;
        sync.fragments = 1;
        const MasterCopy syncMasters =
            masters == MasterCopy::Separate && cfg.precision == Precision::Fp32 ? MasterCopy::Shared
                                                                                : masters;
        const MemoryNeed s = memoryNeed(model, train, sync, syncMasters);
        need.beyondSyncBytes = std::max<int64_t>(0, need.trainingBytes - s.trainingBytes);
        need.beyondSyncHostBytes = need.hostBytes;
    }
    if (cfg.precision != Precision::Fp32)
        elem = 2;
    need.perSampleBytes = model.bytesPerSample(train.sampleShape, elem);
    // A quantized base's layer, dequantized while it computes.
    need.weightBytes += model.transientWeightBytes(widened > 0 ? 4 : elem);
    need.nf4SavingBytes = model.nf4SavingBytes();
    return need;
}

std::pair<int64_t, int64_t> trainableValues(const Model& model) {
    int64_t trainable = 0, largest = 0;
    for (const auto& [name, t] : model.parameters())
        if (t.requires_grad()) {
            trainable += t.numel();
            largest = std::max<int64_t>(largest, t.numel());
        }
    return {trainable, largest};
}

int64_t outerWorkerSideBytes(const Model& model, bool sendsDeltas, OuterWire wire, int fragments) {
    const int64_t values = trainableValues(model).first;
    if (!sendsDeltas)
        return values * 4;
    // A rounding wire's residual covers every fragment in turn; an fp32 send holds the bytes of
    // the one it sends.
    const int64_t f = wire == OuterWire::Fp32 ? std::max(1, fragments) : 1;
    return values * 4 + (values * 4 + f - 1) / f;
}

MasterCopy mastersBeside(const DeviceInfo& device, bool mastersOnAccelerator,
                         const RunConfig& cfg) {
    if ((device.kind == DeviceKind::Cpu) == mastersOnAccelerator)
        return MasterCopy::None;
    const bool inPlace = cfg.mode != TrainMode::LocalSgd && cfg.precision == Precision::Fp32;
    return inPlace ? MasterCopy::Shared : MasterCopy::Separate;
}

QString widenSlowFrozenBase(const Model& model, const Dataset& train, const RunConfig& cfg,
                            const DeviceInfo& device, MasterCopy masters) {
    if (device.kind != DeviceKind::Cpu || cfg.precision != Precision::Fp32 ||
        model.widenedBaseBytes() > 0 || cpuMultipliesBf16Fast())
        return {};
    int64_t narrow = 0; // frozen bf16 or fp16 values
    QString dtype = QStringLiteral("bf16");
    for (const auto& [name, t] : model.parameters())
        if (!t.requires_grad() && t.is_floating_point() && t.element_size() == 2) {
            narrow += t.numel();
            if (t.scalar_type() == at::kHalf)
                dtype = QStringLiteral("fp16");
        }
    if (narrow == 0)
        return {};
    // The copy, and the activations in fp32 rather than bf16.
    MemoryNeed need = memoryNeed(model, train, cfg, masters);
    need.weightBytes += narrow * 4;
    need.perSampleBytes = model.bytesPerSample(train.sampleShape, 4);
    const QString copy = bytesText(narrow * 4);
    if (!samplesThatFit(need, device, QStringLiteral("this machine")))
        return QStringLiteral("the frozen %1 base is computed in %1, which this CPU multiplies "
                              "many times more slowly than fp32: an fp32 copy (%2) would not fit "
                              "beside the run")
            .arg(dtype, copy);
    model.widenFrozenBase();
    return QStringLiteral("the frozen %1 base is computed from an fp32 copy (%2 more memory): "
                          "this CPU multiplies %1 many times more slowly than fp32")
        .arg(dtype, copy);
}

int64_t memoryBudget(const DeviceInfo& d) {
    const double share = d.kind == DeviceKind::Cuda ? 0.9 : d.kind == DeviceKind::Mps ? 0.75 : 0.8;
    return int64_t(double(d.memoryBytes) * share);
}

bool keepDataOnDevice(const Dataset& train, const DeviceInfo& device, MemoryNeed& need) {
    if (device.kind == DeviceKind::Cpu || train.count() <= 0)
        return false;
    // Tokens are kept as int32.
    if (train.storage == Dataset::Storage::Windows &&
        (!train.stream || train.stream->maxToken() > std::numeric_limits<int32_t>::max()))
        return false;
    const int64_t bytes = ResidentRows::bytesFor(train);
    const int64_t left = memoryBudget(device) - need.on(device).fixedBytes();
    if (left <= 0 || bytes > left / 8)
        return false;
    need.dataBytes = bytes;
    return true;
}

Expected<int64_t> samplesThatFit(const MemoryNeed& asked, const DeviceInfo& device,
                                 const QString& who) {
    const MemoryNeed need = asked.on(device);
    const int64_t budget = memoryBudget(device);
    if (budget <= 0)
        return int64_t(0); // the device did not say
    const int64_t left = budget - need.fixedBytes();
    const int64_t one = std::max<int64_t>(need.perSampleBytes, 0);
    if (left >= one)
        return one > 0 ? std::max<int64_t>(1, left / one) : int64_t(0);
    QString perSample;
    if (need.exchangeBytes > 0)
        perSample = QStringLiteral(", %1 for the sharded step's exchange (the gradients on their "
                                   "way out and the others' weights coming back)")
                        .arg(bytesText(need.exchangeBytes));
    if (one > 0)
        perSample += QStringLiteral(" and %1 for each sample").arg(bytesText(one));
    if (need.beyondSyncBytes > 0)
        perSample += QStringLiteral(" (local SGD's rounds keep %1 of that beyond what sync does: "
                                    "--mode sync needs less)")
                         .arg(bytesText(need.beyondSyncBytes));
    if (need.nf4SavingBytes > 0) {
        // What a 4-bit base would make of it.
        const bool wouldFit = left + need.nf4SavingBytes >= one;
        return makeError(
            ErrorCode::OutOfMemory,
            QStringLiteral("%1's %2 has %3 to train with (of %4); this run needs %5 for the model "
                           "(%6 of weights, %7 of adapters' gradients and optimizer state)%8. "
                           "With the base held in 4 bits (--lora …,base=nf4, or \"4-bit\" in the "
                           "New run form) the weights take %9 less%10")
                .arg(who, device.name, bytesText(budget), bytesText(device.memoryBytes),
                     bytesText(need.fixedBytes() - need.exchangeBytes), bytesText(need.weightBytes),
                     bytesText(need.trainingBytes), perSample, bytesText(need.nf4SavingBytes))
                .arg(wouldFit ? QStringLiteral(", and the run fits")
                              : QStringLiteral(", which is still not enough: also recompute "
                                               "activations (--checkpoint-activations), use a "
                                               "shorter context, or leave this machine out")));
    }
    return makeError(ErrorCode::OutOfMemory,
                     QStringLiteral("%1's %2 has %3 to train with (of %4); this run needs %5 "
                                    "for the model (%6 of weights, %7 of gradients and optimizer "
                                    "state)%8. Train fewer weights (--lora), recompute "
                                    "activations (--checkpoint-activations), use a shorter "
                                    "context, or leave this machine out")
                         .arg(who, device.name, bytesText(budget), bytesText(device.memoryBytes),
                              bytesText(need.fixedBytes() - need.exchangeBytes),
                              bytesText(need.weightBytes), bytesText(need.trainingBytes),
                              perSample));
}

} // namespace tandem
