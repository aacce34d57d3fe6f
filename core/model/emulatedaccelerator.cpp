#include "model/emulatedaccelerator.h"

#include "model/torchversion.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

// Why XPU: LibTorch moves a module's parameters to a device only where the device type is one of
// its "dense" backends (CPU, CUDA, MPS, HIP and XPU in 1.13; HPU and MTIA too in 2.x), and
// LibTorch 2.x files HIP's autograd under AutogradOther, where operators that Vulkan implements
// (max_pool2d) are refused as ambiguous. XPU has an autograd key of its own in both, and
// Debian's builds register no XPU kernels.
//
// How it works. A tensor on the device is an ordinary TensorImpl whose storage's device is
// XPU and whose memory was allocated on the host. Operators reach the device's backend through
// LibTorch's dispatcher; a backend fallback takes every one of them, views each XPU tensor
// argument as a CPU tensor over the same memory, runs the operator's CPU kernel, and gives
// back what it returns as XPU tensors (an argument returned, as in-place operators do, is the
// argument itself; a view shares its base's storage). Two kinds of operator need kernels of
// their own, because LibTorch implements them above the backends with a branch on the device
// type: copy_ (which crosses between devices) and the convolutions' "overrideable" entry
// points, which LibTorch reaches for any device that is not the CPU, CUDA or MPS.

namespace tandem {

namespace {

constexpr c10::DeviceType kType = c10::DeviceType::XPU;
constexpr c10::DispatchKey kKey = c10::DispatchKey::XPU;

thread_local int t_inside = 0;

struct Inside {
    Inside() { ++t_inside; }
    ~Inside() { --t_inside; }
};

void* bytesOf(const c10::Storage& s) {
    return const_cast<void*>(static_cast<const void*>(s.data()));
}

// A device storage over a CPU storage's memory, keeping the CPU storage alive.
c10::Storage deviceStorageOver(const c10::Storage& cpu) {
    auto* keep = new c10::Storage(cpu);
    c10::DataPtr ptr(
        bytesOf(cpu), keep, [](void* ctx) { delete static_cast<c10::Storage*>(ctx); },
        c10::Device(kType, 0));
    return c10::Storage(c10::Storage::use_byte_size_t(), cpu.nbytes(), std::move(ptr), nullptr,
                        false);
}

// A CPU storage over a device storage's memory, owning nothing. Resizable: an operator that
// resizes its output allocates new CPU memory for it, which the result then takes over.
c10::Storage cpuStorageOver(const c10::Storage& device) {
    c10::DataPtr ptr(bytesOf(device), c10::Device(at::kCPU));
    return c10::Storage(c10::Storage::use_byte_size_t(), device.nbytes(), std::move(ptr),
                        c10::GetAllocator(at::kCPU), true);
}

at::Tensor withStorage(c10::Storage storage, const at::Tensor& like, c10::DispatchKey key) {
    at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(std::move(storage),
                                                            c10::DispatchKeySet(key), like.dtype());
    t.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides());
    t.unsafeGetTensorImpl()->set_storage_offset(like.storage_offset());
    return t;
}

bool onDevice(const at::Tensor& t) {
    return t.defined() && t.device().type() == kType;
}

at::Tensor cpuView(const at::Tensor& t) {
    if (!onDevice(t))
        return t;
    return withStorage(cpuStorageOver(t.storage()), t, c10::DispatchKey::CPU);
}

at::Tensor deviceTensorOver(const at::Tensor& cpu) {
    if (!cpu.defined())
        return cpu;
    return withStorage(deviceStorageOver(cpu.storage()), cpu, kKey);
}

struct Argument {
    at::Tensor original; // on the device
    at::Tensor view;     // the same memory, as the CPU kernel saw it
};

// Runs a device operator's CPU kernel: the boxed fallback for every operator without one of
// its own below.
void runOnCpu(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    Inside inside;
    const c10::FunctionSchema& schema = op.schema();
    const size_t nargs = schema.arguments().size();
    std::vector<Argument> args;
    std::vector<c10::Storage> storages; // storage arguments on the device (set_)
    // Factory operators name the device; `to` and its kin name where the result goes.
    bool namesDevice = false, namesOther = false;
    const auto toCpu = [&](const at::Tensor& t) {
        at::Tensor v = cpuView(t);
        if (onDevice(t))
            args.push_back({t, v});
        return v;
    };
    for (size_t i = stack->size() - nargs; i < stack->size(); ++i) {
        c10::IValue& v = (*stack)[i];
        if (v.isTensor()) {
            v = toCpu(v.toTensor());
        } else if (v.isTensorList()) {
            c10::List<at::Tensor> l = v.toTensorList();
            for (size_t k = 0; k < l.size(); ++k)
                l.set(k, toCpu(l.get(k)));
            v = l;
        } else if (v.isList()) {
            c10::List<c10::IValue> l = v.toList();
            for (size_t k = 0; k < l.size(); ++k)
                if (l.get(k).isTensor())
                    l.set(k, toCpu(l.get(k).toTensor()));
        } else if (v.isStorage() && v.toStorage().device_type() == kType) {
            storages.push_back(v.toStorage());
            v = c10::IValue(cpuStorageOver(storages.back()));
        } else if (v.isDevice()) {
            if (v.toDevice().type() == kType) {
                v = c10::IValue(c10::Device(at::kCPU));
                namesDevice = true;
            } else {
                namesOther = true;
            }
        }
    }
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

    const bool resultsOnDevice = namesDevice || !namesOther;
    const auto storageFor = [&](const c10::Storage& cpu) {
        for (const Argument& a : args)
            if (bytesOf(a.original.storage()) == bytesOf(cpu) && bytesOf(cpu))
                return a.original.storage();
        for (const c10::Storage& s : storages)
            if (bytesOf(s) == bytesOf(cpu) && bytesOf(cpu))
                return s;
        return deviceStorageOver(cpu);
    };
    const auto back = [&](const at::Tensor& r) -> at::Tensor {
        if (!r.defined())
            return r;
        for (const Argument& a : args) {
            if (a.view.unsafeGetTensorImpl() != r.unsafeGetTensorImpl())
                continue;
            // An argument the operator wrote and returned; it may have resized or re-pointed it.
            c10::TensorImpl* impl = a.original.unsafeGetTensorImpl();
            if (bytesOf(a.view.storage()) != bytesOf(a.original.storage()) ||
                a.view.storage().nbytes() != a.original.storage().nbytes())
                impl->set_storage_keep_dtype(storageFor(a.view.storage()));
            if (a.view.sizes() != a.original.sizes() || a.view.strides() != a.original.strides())
                impl->set_sizes_and_strides(a.view.sizes(), a.view.strides());
            if (a.view.storage_offset() != a.original.storage_offset())
                impl->set_storage_offset(a.view.storage_offset());
            return a.original;
        }
        if (!resultsOnDevice || r.device().type() != at::kCPU)
            return r;
        return withStorage(storageFor(r.storage()), r, kKey);
    };
    const size_t nret = schema.returns().size();
    for (size_t i = stack->size() - nret; i < stack->size(); ++i) {
        c10::IValue& v = (*stack)[i];
        if (v.isTensor()) {
            v = back(v.toTensor());
        } else if (v.isTensorList()) {
            c10::List<at::Tensor> l = v.toTensorList();
            for (size_t k = 0; k < l.size(); ++k)
                l.set(k, back(l.get(k)));
            v = l;
        }
    }
    // Arguments written in place but not returned (the _foreach_ operators, out= lists).
    for (const Argument& a : args)
        if (bytesOf(a.view.storage()) != bytesOf(a.original.storage()) ||
            a.view.sizes() != a.original.sizes())
            (void)back(a.view);
}

at::Tensor& copyKernel(at::Tensor& self, const at::Tensor& src, bool nonBlocking) {
    Inside inside;
    c10::impl::ExcludeDispatchKeyGuard noAutograd(c10::autograd_dispatch_keyset);
    at::Tensor dst = cpuView(self);
    dst.copy_(cpuView(src), nonBlocking);
    return self;
}

at::Tensor convolutionKernel(const at::Tensor& input, const at::Tensor& weight,
                             const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                             at::IntArrayRef outputPadding, int64_t groups) {
    Inside inside;
    c10::impl::ExcludeDispatchKeyGuard noAutograd(c10::autograd_dispatch_keyset);
    c10::optional<at::Tensor> b;
    if (bias && bias->defined())
        b = cpuView(*bias);
    return deviceTensorOver(at::convolution(cpuView(input), cpuView(weight), b, stride, padding,
                                            dilation, transposed, outputPadding, groups));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
convolutionBackwardKernel(const at::Tensor& gradOutput, const at::Tensor& input,
                          const at::Tensor& weight, at::IntArrayRef stride, at::IntArrayRef padding,
                          at::IntArrayRef dilation, bool transposed, at::IntArrayRef outputPadding,
                          int64_t groups, std::array<bool, 3> mask) {
    Inside inside;
    c10::impl::ExcludeDispatchKeyGuard noAutograd(c10::autograd_dispatch_keyset);
    const std::vector<int64_t> biasSizes{transposed ? weight.size(1) * groups : weight.size(0)};
    auto [gi, gw, gb] = at::convolution_backward(
        cpuView(gradOutput), cpuView(input), cpuView(weight), at::OptionalIntArrayRef(biasSizes),
        stride, padding, dilation, transposed, outputPadding, groups, mask);
    return {deviceTensorOver(gi), deviceTensorOver(gw), deviceTensorOver(gb)};
}

// Memory for tensors LibTorch makes on the device without an operator (rare: most go through
// empty(), which the fallback serves). The interface became non-const in LibTorch 2.3, when it
// also gained copy_data; no member says `override`, so that both compile.
struct HostAllocator final : c10::Allocator {
    static void release(void* held) { delete static_cast<c10::DataPtr*>(held); }
#if TANDEM_TORCH_AT_LEAST(2, 3)
    c10::DataPtr allocate(size_t n){
#else
    c10::DataPtr allocate(size_t n) const {
#endif
        auto* held = new c10::DataPtr(c10::GetAllocator(at::kCPU)->allocate(n));
    return {held->get(), held, &release, c10::Device(kType, 0)};
} c10::DeleterFnPtr raw_deleter() const {
    return nullptr;
}
void copy_data(void* dest, const void* src, std::size_t count) const {
    std::memcpy(dest, src, count);
}
}; // namespace

} // namespace tandem

bool emulatedAcceleratorWanted() {
    const char* v = std::getenv("TANDEM_EMULATED_ACCELERATOR");
    return v && std::string(v) == "1";
}

void installEmulatedAccelerator() {
    static std::once_flag once;
    std::call_once(once, [] {
        static HostAllocator allocator;
        c10::SetAllocator(kType, &allocator);
        static c10::impl::DeviceGuardImplRegistrar guard(
            kType, new c10::impl::NoOpDeviceGuardImpl<kType>());
        static torch::Library fallback(torch::Library::IMPL, "_", kKey, __FILE__, __LINE__);
        fallback.fallback(torch::CppFunction::makeFromBoxedFunction<&runOnCpu>());
        static torch::Library kernels(torch::Library::IMPL, "aten", kKey, __FILE__, __LINE__);
        kernels.impl("copy_", &copyKernel);
        kernels.impl("convolution_overrideable", &convolutionKernel);
        kernels.impl("convolution_backward_overrideable", &convolutionBackwardKernel);
    });
}

bool isEmulatedAccelerator(const c10::Device& device) {
    return device.type() == kType && emulatedAcceleratorWanted();
}

c10::Device emulatedAcceleratorDevice() {
    return c10::Device(kType, 0);
}

bool insideEmulatedOperator() {
    return t_inside > 0;
}

} // namespace tandem
