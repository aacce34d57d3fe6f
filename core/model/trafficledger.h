#pragma once

#include "model/internal.h"

// Model-internal: the traffic ledger, a count of what crosses between the host's memory and a
// device's, and of every time the host waits for a device. On a GPU these decide a step's speed
// more than the arithmetic does: a copy from pageable memory blocks, and reading one number
// off the device (a loss's .item()) waits for everything queued before it.
//
// It observes LibTorch's operators (a RecordFunction callback), so it counts what the
// operators do, whoever calls them:
// - copies, by direction (host to device, device to host, device to device) and bytes: every
//   copy_ whose two tensors are on different devices, which is what `.to(device)` and
//   `.cpu()` come down to;
// - host synchronisations: a value read off a device (_local_scalar_dense: .item(), a tensor
//   used as a bool), operators whose output size depends on a device's values (nonzero,
//   masked_select, unique), a copy to the host that blocks, and synchronizeDevice();
// - the optimizer's kernels: the operators each Optimizer::step launches (LedgerPurpose::
//   Optimizer), those it calls directly, not the ones inside them.
// Each is filed under what the calling thread was doing (LedgerScope): the model's own tensors
// (weights, gradients, buffers, optimizer state) unless the code says it is moving a batch, a
// figure, the wire's bytes or a checkpoint.
//
// Off until enableTrafficLedger(); once on, every operator pays for the callback (its inputs
// are boxed), so only tests and `tandem train --ledger` turn it on. The emulated accelerator
// (emulatedaccelerator.h) makes a CPU-only machine count what a GPU run would.

#include <QString>

#include <array>
#include <cstdint>
#include <functional>

namespace tandem {

enum class LedgerPurpose : uint8_t {
    Model,      // weights, gradients, buffers, optimizer state: what a step should not move
    Data,       // the batch's inputs and targets
    Figures,    // losses, token counts and accuracy, read when a figure is due
    Wire,       // staging to and from a remote worker's bytes
    Checkpoint, // checkpoints and exports
    Optimizer,  // inside an optimizer step (its kernels are counted too)
};
constexpr size_t kLedgerPurposes = 6;

QString purposeName(LedgerPurpose p);

struct TrafficCounts {
    int64_t copiesIn = 0, bytesIn = 0;         // host to device
    int64_t copiesOut = 0, bytesOut = 0;       // device to host
    int64_t copiesAcross = 0, bytesAcross = 0; // one device to another
    int64_t syncs = 0;                         // the host waited for a device
    int64_t kernels = 0; // top-level operators launched (counted for Optimizer only)
    int64_t steps = 0;   // optimizer steps (Optimizer only)

    int64_t copies() const { return copiesIn + copiesOut + copiesAcross; }
    TrafficCounts& operator+=(const TrafficCounts& o);
    TrafficCounts operator-(const TrafficCounts& o) const;
};

struct TrafficLedger {
    std::array<TrafficCounts, kLedgerPurposes> by{};

    const TrafficCounts& operator[](LedgerPurpose p) const { return by[size_t(p)]; }
    TrafficLedger operator-(const TrafficLedger& o) const;
    // What crossed, in one line per purpose that saw any traffic, averaged over `steps`:
    // "model: 0 copies; data: 2 in (25.1 KB); figures: 1 sync; optimizer: 1 step, 9 kernels".
    QString summary(int64_t steps) const;
};

// Installs the observer (once); until then nothing is counted.
void enableTrafficLedger();
bool trafficLedgerEnabled();
// Everything counted so far, process-wide. Subtract two to get what happened between them.
TrafficLedger trafficLedger();
// Counts a host synchronisation LibTorch's operators do not show (a device synchronize).
void noteHostSync();
// Counts one optimizer step (Optimizer::step, inside its LedgerScope).
void noteOptimizerStep();

// The bytes of memory that the LibTorch operators `work` calls on this thread read and write, as
// their arguments and results show it: each tensor an operator reads or writes counted once
// (twice when it writes in place), views and fresh allocations as nothing. A measure of what a
// sequence of operators costs a device's memory bandwidth, for tests and benchmarks; only the
// outermost operators count, not those they call.
int64_t bytesMovedBy(const std::function<void()>& work);

// Files what the calling thread does while it lives under `purpose`.
class LedgerScope {
public:
    explicit LedgerScope(LedgerPurpose purpose);
    ~LedgerScope();
    LedgerScope(const LedgerScope&) = delete;
    LedgerScope& operator=(const LedgerScope&) = delete;

private:
    LedgerPurpose m_previous;
};

} // namespace tandem
