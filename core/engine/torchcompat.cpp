#include "torchcompat.h"

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>

#include <mutex>

namespace tandem {

void initTorchRuntime() {
    static std::once_flag once;
    std::call_once(once, [] { torch::jit::setTensorExprFuserEnabled(false); });
}

} // namespace tandem
