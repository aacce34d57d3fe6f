// LibTorch's record_function.h checks, where NDEBUG is not defined, a flag that only a LibTorch
// built without NDEBUG sets before the callbacks run; the packaged ones are built with it. So
// that a debug build of Tandem can read the operators' inputs, this file is compiled as they
// were.
#ifndef NDEBUG
#define NDEBUG
#endif
#include <ATen/record_function.h>

#include "model/trafficledger.h"

#include "model/emulatedaccelerator.h"

#include <ATen/ATen.h>

#include <QStringList>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

namespace tandem {

namespace {

enum Field : size_t {
    CopiesIn,
    BytesIn,
    CopiesOut,
    BytesOut,
    CopiesAcross,
    BytesAcross,
    Syncs,
    Kernels,
    Steps,
    kFields
};

std::atomic<int64_t> g_counts[kLedgerPurposes][kFields];
std::atomic<bool> g_enabled{false};
thread_local LedgerPurpose t_purpose = LedgerPurpose::Model;
thread_local int t_depth = 0;

void add(LedgerPurpose p, Field f, int64_t n = 1) {
    g_counts[size_t(p)][f].fetch_add(n, std::memory_order_relaxed);
}

bool onHost(const at::Tensor& t) {
    return t.device().is_cpu();
}

// Operators whose output's size depends on a tensor's values, which the host must read first.
bool sizedByValues(const char* name) {
    for (const char* n : {"aten::nonzero", "aten::masked_select", "aten::_unique2", "aten::_unique",
                          "aten::unique_dim", "aten::unique_consecutive"})
        if (std::strcmp(name, n) == 0)
            return true;
    return false;
}

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn) {
    const int depth = ++t_depth;
    if (insideEmulatedOperator())
        return nullptr;
    const LedgerPurpose p = t_purpose;
    if (p == LedgerPurpose::Optimizer && depth == 1)
        add(p, Kernels);
    const char* name = fn.name();
    if (!name || std::strncmp(name, "aten::", 6) != 0)
        return nullptr;
    if (std::strcmp(name, "aten::copy_") == 0) {
        const auto in = fn.inputs();
        if (in.size() < 2 || !in[0].isTensor() || !in[1].isTensor())
            return nullptr;
        const at::Tensor& dst = in[0].toTensor();
        const at::Tensor& src = in[1].toTensor();
        if (!dst.defined() || !src.defined() || dst.device() == src.device())
            return nullptr;
        const int64_t bytes = int64_t(src.numel()) * int64_t(src.element_size());
        if (onHost(src)) {
            add(p, CopiesIn);
            add(p, BytesIn, bytes);
        } else if (onHost(dst)) {
            add(p, CopiesOut);
            add(p, BytesOut, bytes);
            const bool nonBlocking = in.size() > 2 && in[2].isBool() && in[2].toBool();
            if (!nonBlocking)
                add(p, Syncs);
        } else {
            add(p, CopiesAcross);
            add(p, BytesAcross, bytes);
        }
        return nullptr;
    }
    const bool scalar = std::strcmp(name, "aten::_local_scalar_dense") == 0;
    if (scalar || sizedByValues(name)) {
        const auto in = fn.inputs();
        if (!in.empty() && in[0].isTensor() && in[0].toTensor().defined() &&
            !onHost(in[0].toTensor()))
            add(p, Syncs);
    }
    return nullptr;
}

void onEnd(const at::RecordFunction&, at::ObserverContext*) {
    --t_depth;
}

QString bytesText(double b) {
    if (b >= 1e9)
        return QStringLiteral("%1 GB").arg(b / 1e9, 0, 'f', 2);
    if (b >= 1e6)
        return QStringLiteral("%1 MB").arg(b / 1e6, 0, 'f', 2);
    if (b >= 1e3)
        return QStringLiteral("%1 KB").arg(b / 1e3, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(b, 0, 'f', 0);
}

QString number(double v) {
    return v == double(int64_t(v)) ? QString::number(int64_t(v)) : QString::number(v, 'f', 1);
}

} // namespace

QString purposeName(LedgerPurpose p) {
    switch (p) {
    case LedgerPurpose::Model:
        return QStringLiteral("model");
    case LedgerPurpose::Data:
        return QStringLiteral("data");
    case LedgerPurpose::Figures:
        return QStringLiteral("figures");
    case LedgerPurpose::Wire:
        return QStringLiteral("wire");
    case LedgerPurpose::Checkpoint:
        return QStringLiteral("checkpoint");
    case LedgerPurpose::Optimizer:
        return QStringLiteral("optimizer");
    }
    return {};
}

TrafficCounts& TrafficCounts::operator+=(const TrafficCounts& o) {
    copiesIn += o.copiesIn;
    bytesIn += o.bytesIn;
    copiesOut += o.copiesOut;
    bytesOut += o.bytesOut;
    copiesAcross += o.copiesAcross;
    bytesAcross += o.bytesAcross;
    syncs += o.syncs;
    kernels += o.kernels;
    steps += o.steps;
    return *this;
}

TrafficCounts TrafficCounts::operator-(const TrafficCounts& o) const {
    TrafficCounts d = *this;
    d.copiesIn -= o.copiesIn;
    d.bytesIn -= o.bytesIn;
    d.copiesOut -= o.copiesOut;
    d.bytesOut -= o.bytesOut;
    d.copiesAcross -= o.copiesAcross;
    d.bytesAcross -= o.bytesAcross;
    d.syncs -= o.syncs;
    d.kernels -= o.kernels;
    d.steps -= o.steps;
    return d;
}

TrafficLedger TrafficLedger::operator-(const TrafficLedger& o) const {
    TrafficLedger d;
    for (size_t i = 0; i < kLedgerPurposes; ++i)
        d.by[i] = by[i] - o.by[i];
    return d;
}

QString TrafficLedger::summary(int64_t steps) const {
    const double n = double(std::max<int64_t>(1, steps));
    QStringList parts;
    for (size_t i = 0; i < kLedgerPurposes; ++i) {
        const TrafficCounts& c = by[i];
        const LedgerPurpose p = LedgerPurpose(i);
        QStringList what;
        if (c.copiesIn)
            what << QStringLiteral("%1 in (%2)")
                        .arg(number(double(c.copiesIn) / n), bytesText(double(c.bytesIn) / n));
        if (c.copiesOut)
            what << QStringLiteral("%1 out (%2)")
                        .arg(number(double(c.copiesOut) / n), bytesText(double(c.bytesOut) / n));
        if (c.copiesAcross)
            what << QStringLiteral("%1 between devices (%2)")
                        .arg(number(double(c.copiesAcross) / n),
                             bytesText(double(c.bytesAcross) / n));
        if (c.syncs)
            what << QStringLiteral("%1 sync%2")
                        .arg(number(double(c.syncs) / n),
                             c.syncs == steps ? QString() : QStringLiteral("s"));
        if (p == LedgerPurpose::Optimizer && c.steps)
            what << QStringLiteral("%1 kernels in %2 step%3")
                        .arg(number(double(c.kernels) / n), number(double(c.steps) / n),
                             c.steps == steps ? QString() : QStringLiteral("s"));
        if (what.isEmpty() && p == LedgerPurpose::Model)
            what << QStringLiteral("no copies, no syncs");
        if (!what.isEmpty())
            parts << purposeName(p) + QStringLiteral(": ") + what.join(QStringLiteral(", "));
    }
    return parts.join(QStringLiteral("; "));
}

namespace {

thread_local int t_movedDepth = 0;
thread_local int64_t t_moved = 0;

bool movesNothing(const char* name) {
    static const char* const kViews[] = {
        "aten::view",       "aten::reshape",    "aten::_reshape_alias",
        "aten::narrow",     "aten::slice",      "aten::select",
        "aten::as_strided", "aten::unsqueeze",  "aten::squeeze",
        "aten::expand",     "aten::t",          "aten::transpose",
        "aten::permute",    "aten::detach",     "aten::alias",
        "aten::empty",      "aten::empty_like", "aten::empty_strided",
        "aten::view_as",    "aten::flatten",    "aten::lift_fresh",
        "aten::resize_"};
    for (const char* v : kViews)
        if (std::strcmp(name, v) == 0)
            return true;
    return false;
}

void addTensorBytes(const c10::IValue& v, std::vector<const c10::TensorImpl*>& seen,
                    int64_t& bytes) {
    if (!v.isTensor() || !v.toTensor().defined())
        return;
    const at::Tensor& t = v.toTensor();
    for (const c10::TensorImpl* s : seen)
        if (s == t.unsafeGetTensorImpl())
            return;
    seen.push_back(t.unsafeGetTensorImpl());
    bytes += int64_t(t.numel()) * int64_t(t.element_size());
}

std::unique_ptr<at::ObserverContext> onMovedStart(const at::RecordFunction&) {
    ++t_movedDepth;
    return nullptr;
}

void onMovedEnd(const at::RecordFunction& fn, at::ObserverContext*) {
    if (--t_movedDepth != 0)
        return;
    const char* name = fn.name();
    if (!name || movesNothing(name))
        return;
    std::vector<const c10::TensorImpl*> seen;
    int64_t bytes = 0;
    const auto in = fn.inputs();
    for (const c10::IValue& v : in)
        addTensorBytes(v, seen, bytes);
    // Written in place: read, then written.
    const size_t n = std::strlen(name);
    if (n > 1 && name[n - 1] == '_' && !in.empty() && in[0].isTensor() &&
        in[0].toTensor().defined())
        bytes += int64_t(in[0].toTensor().numel()) * int64_t(in[0].toTensor().element_size());
    for (const c10::IValue& v : fn.outputs())
        addTensorBytes(v, seen, bytes);
    t_moved += bytes;
}

} // namespace

int64_t bytesMovedBy(const std::function<void()>& work) {
    const int64_t before = t_moved;
    const auto handle =
        at::addThreadLocalCallback(at::RecordFunctionCallback(&onMovedStart, &onMovedEnd)
                                       .needsInputs(true)
                                       .needsOutputs(true)
                                       .scopes({at::RecordScope::FUNCTION}));
    try {
        work();
    } catch (...) {
        at::removeCallback(handle);
        throw;
    }
    at::removeCallback(handle);
    return t_moved - before;
}

void enableTrafficLedger() {
    static std::once_flag once;
    std::call_once(once, [] {
        at::addGlobalCallback(at::RecordFunctionCallback(&onStart, &onEnd)
                                  .needsInputs(true)
                                  .scopes({at::RecordScope::FUNCTION}));
        g_enabled = true;
    });
}

bool trafficLedgerEnabled() {
    return g_enabled;
}

TrafficLedger trafficLedger() {
    TrafficLedger l;
    for (size_t i = 0; i < kLedgerPurposes; ++i) {
        TrafficCounts& c = l.by[i];
        const auto& g = g_counts[i];
        c.copiesIn = g[CopiesIn];
        c.bytesIn = g[BytesIn];
        c.copiesOut = g[CopiesOut];
        c.bytesOut = g[BytesOut];
        c.copiesAcross = g[CopiesAcross];
        c.bytesAcross = g[BytesAcross];
        c.syncs = g[Syncs];
        c.kernels = g[Kernels];
        c.steps = g[Steps];
    }
    return l;
}

void noteHostSync() {
    if (g_enabled)
        add(t_purpose, Syncs);
}

void noteOptimizerStep() {
    if (g_enabled)
        add(LedgerPurpose::Optimizer, Steps);
}

LedgerScope::LedgerScope(LedgerPurpose purpose)
    : m_previous(t_purpose) {
    t_purpose = purpose;
}

LedgerScope::~LedgerScope() {
    t_purpose = m_previous;
}

} // namespace tandem
