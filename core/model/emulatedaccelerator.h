#pragma once

#include "model/internal.h"

// Model-internal: an accelerator that is the CPU, for tests. A GPU run keeps tensors in the
// device's memory and pays for every copy between it and the host's, and for every wait on the
// device; a CPU run has neither, so on a machine without a GPU the paths that place tensors on
// an accelerator, and the traffic they cause, would go untested. With TANDEM_EMULATED_ACCELERATOR=1
// in the environment, this machine has one more device, "emulated": LibTorch sees its tensors
// on a device of their own (the device type XPU, which Debian's and the CUDA builds of LibTorch
// leave unused), so moving a tensor there or back is a real copy between devices, counted by the
// traffic ledger (trafficledger.h) exactly as a CUDA run's would be, and autograd runs the backward
// pass on a device thread as it does for a GPU. Every operator runs LibTorch's CPU kernel over
// the same memory, so results are the CPU's, to the bit.
//
// Not for users: `tandem devices` lists it only when the variable is set. Mixed precision is
// not emulated (autocast has no such device); a run asking for it computes in fp32 there.

#include <c10/core/Device.h>

namespace tandem {

// TANDEM_EMULATED_ACCELERATOR is set to 1.
bool emulatedAcceleratorWanted();
// Registers the device with LibTorch, once; initTorchRuntime() calls it when wanted.
void installEmulatedAccelerator();
// The device's LibTorch name ("xpu:0").
c10::Device emulatedAcceleratorDevice();
// `device` is the emulated accelerator.
bool isEmulatedAccelerator(const c10::Device& device);
// True while the calling thread runs one of the device's operators on the CPU: the operators
// that does are not the run's own (the traffic ledger leaves them out).
bool insideEmulatedOperator();

} // namespace tandem
