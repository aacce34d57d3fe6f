#pragma once

// Engine-internal: the one place that knows which LibTorch this build links. Code that differs
// between LibTorch 1.13 (Debian 12) and 2.x (Debian 13, macOS, CUDA desktops) asks here instead
// of testing versions itself.

#include <torch/version.h>

// True when the LibTorch being compiled against is at least major.minor.
#define TANDEM_TORCH_AT_LEAST(major, minor)                                                        \
    (TORCH_VERSION_MAJOR > (major) ||                                                              \
     (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tandem {

// Sets up LibTorch's process-wide state once, before any TorchScript module runs. Safe to call
// from any thread, any number of times.
//
// It turns off the TensorExpr fuser. After profiling a module's first runs, LibTorch 2.x's
// graph executor hands the graph to that fuser, which compiles a fused CPU kernel with LLVM.
// With Debian 13's LibTorch 2.6 that compilation never returns: a worker computed two steps
// and then spun on one core forever. Tandem's models gain nothing measurable from fusion at
// their sizes, and without it every worker runs the same operators as eager PyTorch, which the
// sync-equivalence guarantee is measured against.
void initTorchRuntime();

} // namespace tandem
