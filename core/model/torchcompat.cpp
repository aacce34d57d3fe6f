#include "model/torchcompat.h"

#include "model/emulatedaccelerator.h"
#include "model/tensormemory.h"
#include "model/trafficledger.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/cuda.h>

#if TANDEM_TORCH_AT_LEAST(2, 1)
#include <ATen/detail/MPSHooksInterface.h>
#include <torch/mps.h>
#endif
#if defined(TANDEM_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#endif
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif
#if defined(__linux__)
#include <fstream>
#endif

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tandem {

MpsMemoryDefaults mpsMemoryDefaults(const char* highRatio, const char* lowRatio) {
    MpsMemoryDefaults d;
    if ((highRatio && *highRatio) || (lowRatio && *lowRatio))
        return d; // the user's choice stands, whatever it is
    d.settings[0] = {"PYTORCH_MPS_HIGH_WATERMARK_RATIO", "1.0"};
    d.settings[1] = {"PYTORCH_MPS_LOW_WATERMARK_RATIO", "0.8"};
    d.count = 2;
    return d;
}

void initTorchRuntime() {
    static std::once_flag once;
    std::call_once(once, [] {
        torch::jit::setTensorExprFuserEnabled(false);
        installTensorMemoryCache();
        if (emulatedAcceleratorWanted())
            installEmulatedAccelerator();
#if defined(__APPLE__)
        const MpsMemoryDefaults d =
            mpsMemoryDefaults(std::getenv("PYTORCH_MPS_HIGH_WATERMARK_RATIO"),
                              std::getenv("PYTORCH_MPS_LOW_WATERMARK_RATIO"));
        for (int i = 0; i < d.count; ++i)
            setenv(d.settings[i].name, d.settings[i].value, 0);
#endif
    });
}

void trainWithoutGraphOptimization() {
    torch::jit::setGraphExecutorOptimize(false);
}

bool cpuMultipliesBf16Fast() {
    if (const char* said = std::getenv("TANDEM_CPU_BF16")) {
        if (std::string(said) == "fast")
            return true;
        if (std::string(said) == "slow")
            return false;
    }
#if defined(__APPLE__)
    int has = 0;
    size_t size = sizeof has;
    return sysctlbyname("hw.optional.arm.FEAT_BF16", &has, &size, nullptr, 0) == 0 && has != 0;
#elif defined(__linux__)
    // x86 lists "flags", Arm "Features"; each word is one feature.
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0)
            continue;
        for (const char* feature : {" avx512_bf16", " amx_bf16", " bf16"}) {
            const size_t at = line.find(feature);
            const size_t end = at + std::strlen(feature);
            if (at != std::string::npos && (end == line.size() || line[end] == ' '))
                return true;
        }
        return false;
    }
    return false;
#else
    return false;
#endif
}

bool autocastSupported(c10::DeviceType device, c10::ScalarType dtype, std::string* why) {
    auto no = [why](const char* text) {
        if (why)
            *why = text;
        return false;
    };
    const bool half = dtype == c10::ScalarType::Half;
    const bool bf16 = dtype == c10::ScalarType::BFloat16;
    if (!half && !bf16)
        return no("autocast takes fp16 or bf16");
    switch (device) {
    case c10::DeviceType::CPU:
        // CPU autocast has run bf16 since LibTorch 1.10; its fp16 path came late and is slow.
        return bf16 ? true : no("fp16 autocast is for GPUs; on the CPU use bf16");
    case c10::DeviceType::CUDA:
        return true; // whether the GPU is fast at bf16 is the caller's question (capability)
    case c10::DeviceType::MPS:
#if TANDEM_TORCH_AT_LEAST(2, 6)
        if (bf16 && !at::detail::getMPSHooks().isOnMacOSorNewer(14, 0))
            return no("bf16 on MPS needs macOS 14 or later");
        return true;
#elif TANDEM_TORCH_AT_LEAST(2, 5)
        return half ? true : no("bf16 autocast on MPS needs LibTorch 2.6 or later");
#else
        return no("autocast on MPS needs LibTorch 2.5 or later");
#endif
    default:
        return no("autocast does not run on this device");
    }
}

// Before 2.4 each device type had its own autocast functions; from 2.4 one set takes the
// device type.
AutocastScope::AutocastScope(c10::DeviceType device, c10::ScalarType dtype)
    : m_device(device) {
#if TANDEM_TORCH_AT_LEAST(2, 4)
    m_wasEnabled = at::autocast::is_autocast_enabled(device);
    m_previousType = at::autocast::get_autocast_dtype(device);
    at::autocast::set_autocast_dtype(device, dtype);
    at::autocast::set_autocast_enabled(device, true);
#else
    if (device == c10::DeviceType::CUDA) {
        m_wasEnabled = at::autocast::is_enabled();
        m_previousType = at::autocast::get_autocast_gpu_dtype();
        at::autocast::set_autocast_gpu_dtype(dtype);
        at::autocast::set_enabled(true);
    } else {
        m_wasEnabled = at::autocast::is_cpu_enabled();
        m_previousType = at::autocast::get_autocast_cpu_dtype();
        at::autocast::set_autocast_cpu_dtype(dtype);
        at::autocast::set_cpu_enabled(true);
    }
#endif
    at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
    if (at::autocast::decrement_nesting() == 0)
        at::autocast::clear_cache();
#if TANDEM_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(m_device, m_wasEnabled);
    at::autocast::set_autocast_dtype(m_device, m_previousType);
#else
    if (m_device == c10::DeviceType::CUDA) {
        at::autocast::set_enabled(m_wasEnabled);
        at::autocast::set_autocast_gpu_dtype(m_previousType);
    } else {
        at::autocast::set_cpu_enabled(m_wasEnabled);
        at::autocast::set_autocast_cpu_dtype(m_previousType);
    }
#endif
}

bool isOutOfMemory(const std::exception& e) {
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e))
        return true;
    const char* what = e.what();
    return what && (std::strstr(what, "out of memory") || std::strstr(what, "Out of memory") ||
                    std::strstr(what, "OutOfMemory"));
}

void releaseCachedMemory(const c10::Device& device) {
    if (device.is_cuda()) {
#if defined(TANDEM_WITH_CUDA)
        c10::cuda::CUDACachingAllocator::emptyCache();
#endif
    } else if (device.is_mps()) {
#if TANDEM_TORCH_AT_LEAST(2, 1)
        at::detail::getMPSHooks().emptyCache();
#endif
    }
}

void synchronizeDevice(const c10::Device& device) {
    if (!device.is_cpu())
        noteHostSync();
    if (device.is_cuda()) {
        torch::cuda::synchronize(device.has_index() ? device.index() : -1);
    } else if (device.is_mps()) {
#if TANDEM_TORCH_AT_LEAST(2, 1)
        torch::mps::synchronize();
#endif
        // Before 2.1 there is no public MPS synchronize; copying results to the CPU, which
        // every step ends with, waits for the queue instead.
    }
}

bool mpsAvailable() {
#if TANDEM_TORCH_AT_LEAST(2, 1)
    return torch::mps::is_available();
#else
    return at::hasMPS();
#endif
}

void seedDevice(const c10::Device& device, uint64_t seed) {
    at::manual_seed(seed); // the CPU generator, and every CUDA device's
#if TANDEM_TORCH_AT_LEAST(2, 1)
    if (device.is_mps())
        torch::mps::manual_seed(seed);
#else
    (void)device;
#endif
}

namespace {

// The OpenMP runtime LibTorch loaded (libgomp, or LLVM's libomp on macOS), found by name rather
// than linked, so that the setting reaches the runtime LibTorch's operators use.
struct OpenMpCalls {
    void (*setThreads)(int) = nullptr;
    int (*maxThreads)() = nullptr;
};

const OpenMpCalls& openMp() {
    static const OpenMpCalls calls = [] {
        OpenMpCalls c;
#if defined(__unix__) || defined(__APPLE__)
        c.setThreads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
        c.maxThreads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
        if (!c.setThreads || !c.maxThreads)
            c = OpenMpCalls{};
#endif
        return c;
    }();
    return calls;
}

} // namespace

SerialTorchOps::SerialTorchOps() {
    const OpenMpCalls& omp = openMp();
    if (!omp.setThreads)
        return;
    // ATen sets a thread's OpenMP thread count lazily, on its first parallel operator; that
    // comes first here, so that it does not undo the setting below.
    at::internal::lazy_init_num_threads();
    m_previous = omp.maxThreads();
    omp.setThreads(1);
}

SerialTorchOps::~SerialTorchOps() {
    if (m_previous > 0)
        openMp().setThreads(m_previous);
}

} // namespace tandem
