#pragma once

#include "model/internal.h"
#include "model/torchversion.h"

// Model-internal: the one place that knows which LibTorch this build links and which devices
// it was built for. Code that differs between LibTorch 1.13 (Debian 12), 2.x (Debian 13, macOS,
// CUDA desktops) and CUDA or CPU-only builds asks here instead of testing versions itself.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <exception>
#include <string>

namespace tandem {

// Sets up LibTorch's process-wide state once, before any TorchScript module runs or any tensor
// reaches a GPU. Safe to call from any thread, any number of times.
//
// It turns off the TensorExpr fuser. After profiling a module's first runs, LibTorch 2.x's
// graph executor hands the graph to that fuser, which compiles a fused CPU kernel with LLVM.
// With Debian 13's LibTorch 2.6 that compilation never returns: a worker computed two steps
// and then spun on one core forever. Tandem's models gain nothing measurable from fusion at
// their sizes, and without it every worker runs the same operators as eager PyTorch, which the
// sync-equivalence guarantee is measured against.
//
// It also applies mpsMemoryDefaults() to the environment, before the MPS allocator reads it,
// and installs the CPU's tensor memory cache (tensormemory.h; TANDEM_TENSOR_CACHE=0 leaves
// LibTorch's own allocator).
void initTorchRuntime();

// Runs TorchScript on the calling thread without the graph executor's optimisation passes
// (LibTorch keeps the switch per thread). Those passes turn the forward pass into autodiff
// subgraphs whose backward computes every gradient of the subgraph at once, so each
// parameter's gradient only becomes final at the very end of the backward pass and none can
// leave early. Without them autograd finalises each parameter's gradient as it reaches it,
// last layer first. The fuser is off anyway (above), and step times stay the same within
// noise (bench/README.md, "Gradients during the backward pass").
void trainWithoutGraphOptimization();

// While alive, the calling thread's LibTorch operators run on that thread alone, without an
// OpenMP team of their own; other threads keep the run's thread count. A process with two
// teams has more OpenMP threads than cores, and libgomp then cuts every waiting thread's
// spinning from 300,000 iterations to 1,000, so each parallel region of the compute thread
// wakes a sleeping one: CPU training at two threads ran at 0.6 to 0.9 times a one-team Python
// loop (bench/README.md, "Per-step cost on torchvision networks"). A run holds one on the
// thread that coordinates, from before its first operator (a team, once formed, stays until
// its thread ends), and hands its large work to the compute thread. Does nothing where
// LibTorch's OpenMP runtime is not found. Construct and destroy it on the same thread.
class SerialTorchOps {
public:
    SerialTorchOps();
    ~SerialTorchOps();
    SerialTorchOps(const SerialTorchOps&) = delete;
    SerialTorchOps& operator=(const SerialTorchOps&) = delete;

private:
    int m_previous = 0; // the thread's OpenMP thread count before (0: unknown)
};

// The MPS allocator's limits, as environment variables to set. PyTorch's default lets the
// allocator grow to 1.7 times the GPU's recommended working set, which on an 8 GB MacBook Air
// means swapping, not an out-of-memory error Tandem could recover from. Unless the user chose
// (either variable set), the limit becomes the recommended working set itself (high 1.0, low
// 0.8; the low mark must not exceed the high one or MPS refuses to start). Returns
// "NAME=VALUE" pairs; empty when nothing should change.
struct EnvSetting {
    const char* name;
    const char* value;
};
struct MpsMemoryDefaults {
    int count = 0;
    EnvSetting settings[2] = {};
};
MpsMemoryDefaults mpsMemoryDefaults(const char* highRatio, const char* lowRatio);

// Whether this machine's CPU multiplies bf16 about as fast as fp32: x86 with AVX512-BF16 or
// AMX-BF16, Arm with its BF16 instructions. Elsewhere LibTorch's bf16 products run many times
// slower than fp32 (a LoRA step on a bf16 base took 91 s against 4.1 s in fp32 on an AVX2
// CPU). TANDEM_CPU_BF16=fast or slow says instead.
bool cpuMultipliesBf16Fast();

// Whether autocast can run `dtype` on `device` with this LibTorch. When it cannot, `why` says
// so in a sentence that ends the way a log line does.
bool autocastSupported(c10::DeviceType device, c10::ScalarType dtype, std::string* why);

// Autocast for one device type while alive, as `with torch.autocast(device, dtype):` is in
// Python: the previous state comes back on destruction, and the cast cache is cleared when
// the outermost scope ends. Only construct it where autocastSupported() said yes.
class AutocastScope {
public:
    AutocastScope(c10::DeviceType device, c10::ScalarType dtype);
    ~AutocastScope();
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    c10::DeviceType m_device;
    bool m_wasEnabled = false;
    c10::ScalarType m_previousType = c10::ScalarType::Float;
};

// True when `e` says a device (or the host) ran out of memory: LibTorch's OutOfMemoryError, or
// an allocator whose message says so (MPS before 2.x threw plain errors).
bool isOutOfMemory(const std::exception& e);

// Gives cached, unused blocks back to the device after an out-of-memory error, so the retry
// starts from what is really in use. Nothing to do on the CPU.
void releaseCachedMemory(const c10::Device& device);

// Waits for the work queued on `device`, so that timing a step measures the step and not the
// enqueueing of it.
void synchronizeDevice(const c10::Device& device);

// Whether this LibTorch was built with MPS and the machine has an Apple GPU for it.
bool mpsAvailable();

// Seeds every generator the device draws from (dropout, random init) for one step.
void seedDevice(const c10::Device& device, uint64_t seed);

} // namespace tandem
