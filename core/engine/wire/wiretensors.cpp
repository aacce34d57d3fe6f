#include "engine/wire/wiretensors.h"

#include "model/model.h"

#include <atomic>
#include <cstring>

namespace tandem {

namespace {

QString nameOf(at::ScalarType s) {
    switch (s) {
    case at::kFloat:
        return QStringLiteral("F32");
    case at::kDouble:
        return QStringLiteral("F64");
    case at::kHalf:
        return QStringLiteral("F16");
    case at::kBFloat16:
        return QStringLiteral("BF16");
    case at::kLong:
        return QStringLiteral("I64");
    case at::kInt:
        return QStringLiteral("I32");
    case at::kByte:
        return QStringLiteral("U8");
    case at::kBool:
        return QStringLiteral("BOOL");
    default:
        return QStringLiteral("F32");
    }
}

int64_t numelOf(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s)
        n *= d;
    return n;
}

} // namespace

ModelLayout ModelLayout::of(const std::vector<std::string>& paramNames,
                            const std::vector<at::Tensor>& params,
                            const std::vector<std::string>& bufferNames,
                            const std::vector<at::Tensor>& buffers) {
    ModelLayout l;
    l.paramNames = paramNames;
    for (const at::Tensor& p : params)
        l.paramShapes.push_back(p.sizes().vec());
    l.bufferNames = bufferNames;
    for (const at::Tensor& b : buffers) {
        l.bufferShapes.push_back(b.sizes().vec());
        // Floating buffers travel as float32; integer ones (counters) as they are.
        l.bufferTypes.push_back(b.is_floating_point() ? at::kFloat : b.scalar_type());
    }
    return l;
}

Expected<ModelLayout> ModelLayout::fromWire(const QList<wire::TensorMeta>& params,
                                            const QList<wire::TensorMeta>& buffers) {
    ModelLayout l;
    for (const wire::TensorMeta& m : params) {
        l.paramNames.push_back(m.name.toStdString());
        l.paramShapes.push_back(m.shape);
    }
    for (const wire::TensorMeta& m : buffers) {
        DType d;
        if (!dtypeFromName(m.dtype, &d))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("buffer %1 has dtype %2").arg(m.name, m.dtype));
        l.bufferNames.push_back(m.name.toStdString());
        l.bufferShapes.push_back(m.shape);
        l.bufferTypes.push_back(scalarTypeOf(d));
    }
    // A layout larger than any model a desktop can hold is refused before anything is sized
    // from it.
    if (l.bundleBytes(DType::F32) > (qint64(16) << 30))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the model described is implausibly large"));
    return l;
}

QList<wire::TensorMeta> ModelLayout::paramMetas() const {
    QList<wire::TensorMeta> out;
    for (size_t i = 0; i < paramNames.size(); ++i)
        out << wire::TensorMeta{QString::fromStdString(paramNames[i]), paramShapes[i],
                                QStringLiteral("F32")};
    return out;
}

QList<wire::TensorMeta> ModelLayout::bufferMetas() const {
    QList<wire::TensorMeta> out;
    for (size_t i = 0; i < bufferNames.size(); ++i)
        out << wire::TensorMeta{QString::fromStdString(bufferNames[i]), bufferShapes[i],
                                nameOf(bufferTypes[i])};
    return out;
}

int64_t ModelLayout::paramCount() const {
    int64_t n = 0;
    for (const auto& s : paramShapes)
        n += numelOf(s);
    return n;
}

qint64 ModelLayout::bundleBytes(DType wire) const {
    // Dimensions come from the peer; anything that overflows is reported as too large.
    double total = double(paramCount()) * dtypeSize(wire);
    for (size_t i = 0; i < bufferShapes.size(); ++i)
        total += double(numelOf(bufferShapes[i])) * double(c10::elementSize(bufferTypes[i]));
    for (const auto& s : paramShapes)
        for (int64_t d : s)
            if (d < 0 || d > (int64_t(1) << 40))
                return std::numeric_limits<qint64>::max();
    return total > 9.0e15 ? std::numeric_limits<qint64>::max() : qint64(total);
}

WireDtype wireDtypeOf(DType storage) {
    return storage == DType::F16    ? WireDtype::Fp16
           : storage == DType::BF16 ? WireDtype::Bf16
                                    : WireDtype::Fp32;
}

void roundToWire(std::vector<at::Tensor>& params, DType wire) {
    if (wire == DType::F32)
        return;
    at::NoGradGuard noGrad;
    for (at::Tensor& p : params)
        p.copy_(p.to(scalarTypeOf(wire)));
}

DType storageDtype(WireDtype wire) {
    switch (wire) {
    case WireDtype::Fp16:
        return DType::F16;
    case WireDtype::Bf16:
        return DType::BF16;
    case WireDtype::Fp32:
        break;
    }
    return DType::F32;
}

namespace {

// Position k of a bundle holds parameter paramAt(k).
size_t paramAt(size_t k, size_t count, BundleOrder order) {
    return order == BundleOrder::Schema ? k : count - 1 - k;
}

// The memory of `spare` when it has the right size and nobody else holds it, else new memory.
QByteArray reuseOrAllocate(QByteArray* spare, qint64 size) {
    if (spare && spare->size() == size && spare->isDetached()) {
        // The connection that sent the last bundle let go of it on the network thread; its
        // reads of these bytes happen before the writes that come now.
        std::atomic_thread_fence(std::memory_order_acquire);
        return std::move(*spare);
    }
    return QByteArray(size, Qt::Uninitialized);
}

} // namespace

QByteArray packBundle(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& buffers,
                      DType wire, QByteArray* spare, BundleOrder order) {
    const at::ScalarType ws = scalarTypeOf(wire);
    std::vector<at::Tensor> parts;
    qint64 total = 0;
    if (!params.empty() && !params.front().device().is_cpu()) {
        // Weights on a device leave it in one copy, flattened there, not one a tensor.
        std::vector<at::Tensor> flat;
        for (size_t k = 0; k < params.size(); ++k)
            flat.push_back(params[paramAt(k, params.size(), order)].detach().to(ws).reshape(-1));
        parts.push_back(at::cat(flat).to(at::kCPU));
        total += qint64(parts.back().nbytes());
    } else {
        for (size_t k = 0; k < params.size(); ++k) {
            at::Tensor c =
                params[paramAt(k, params.size(), order)].detach().to(at::kCPU, ws).contiguous();
            total += qint64(c.nbytes());
            parts.push_back(std::move(c));
        }
    }
    for (const at::Tensor& b : buffers) {
        at::Tensor c = b.detach()
                           .to(at::kCPU, b.is_floating_point() ? at::kFloat : b.scalar_type())
                           .contiguous();
        total += qint64(c.nbytes());
        parts.push_back(std::move(c));
    }
    QByteArray out = reuseOrAllocate(spare, total);
    char* dst = out.data();
    for (const at::Tensor& c : parts) {
        std::memcpy(dst, c.data_ptr(), c.nbytes());
        dst += c.nbytes();
    }
    if (spare)
        *spare = out;
    return out;
}

Status unpackInto(const QByteArray& bytes, const ModelLayout& layout, DType wire,
                  std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers) {
    if (bytes.size() != layout.bundleBytes(wire) || params.size() != layout.paramShapes.size() ||
        buffers.size() != layout.bufferShapes.size())
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("a tensor bundle of %1 bytes; %2 were expected")
                             .arg(bytes.size())
                             .arg(layout.bundleBytes(wire)));
    const at::ScalarType ws = scalarTypeOf(wire);
    char* src = const_cast<char*>(bytes.constData()); // from_blob wants non-const; only read
    at::NoGradGuard noGrad;
    for (size_t i = 0; i < params.size(); ++i) {
        at::Tensor view = at::from_blob(src, layout.paramShapes[i], at::TensorOptions().dtype(ws));
        params[i].copy_(view);
        src += view.nbytes();
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
        at::Tensor view = at::from_blob(src, layout.bufferShapes[i],
                                        at::TensorOptions().dtype(layout.bufferTypes[i]));
        buffers[i].copy_(view);
        src += view.nbytes();
    }
    return success();
}

Status unpackBundle(const QByteArray& bytes, const ModelLayout& layout, DType wire,
                    std::vector<at::Tensor>* params, std::vector<at::Tensor>* buffers,
                    BundleOrder order) {
    if (bytes.size() != layout.bundleBytes(wire))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("a tensor bundle of %1 bytes; %2 were expected")
                             .arg(bytes.size())
                             .arg(layout.bundleBytes(wire)));
    const at::ScalarType ws = scalarTypeOf(wire);
    char* src = const_cast<char*>(bytes.constData()); // the views are only read
    // Each view keeps the bytes alive; the blob's memory goes back to its connection's spare
    // once the last of them is gone.
    auto view = [&](const std::vector<int64_t>& shape, at::ScalarType type) {
        at::Tensor t = at::from_blob(
            src, shape, [keep = bytes](void*) mutable { keep = QByteArray(); },
            at::TensorOptions().dtype(type));
        src += t.nbytes();
        return t;
    };
    const size_t count = layout.paramShapes.size();
    params->resize(count);
    for (size_t k = 0; k < count; ++k) {
        const size_t i = paramAt(k, count, order);
        at::Tensor raw = view(layout.paramShapes[i], ws);
        (*params)[i] = ws == at::kFloat ? raw : raw.to(at::kFloat);
    }
    buffers->resize(layout.bufferShapes.size());
    for (size_t i = 0; i < layout.bufferShapes.size(); ++i)
        (*buffers)[i] = view(layout.bufferShapes[i], layout.bufferTypes[i]);
    return success();
}

GradientBundle::GradientBundle(const ModelLayout& layout, DType wire)
    : m_layout(layout)
    , m_wire(scalarTypeOf(wire)) {
    const size_t count = layout.paramShapes.size();
    m_offset.resize(count);
    m_bytes.resize(count);
    qint64 at = 0;
    for (size_t k = 0; k < count; ++k) {
        const size_t i = paramAt(k, count, BundleOrder::Backward);
        m_offset[i] = at;
        m_bytes[i] = numelOf(layout.paramShapes[i]) * qint64(dtypeSize(wire));
        at += m_bytes[i];
    }
    m_paramBytes = at;
    m_size = layout.bundleBytes(wire);
    m_done.assign(count, false);
}

QByteArray GradientBundle::begin() {
    std::lock_guard<std::mutex> lock(m_mutex);
    QByteArray out = reuseOrAllocate(&m_spare, m_size);
    // Written through this pointer while the network thread reads the part already ready:
    // never through a QByteArray call that could detach it.
    m_data = out.data();
    m_spare = out;
    m_done.assign(m_done.size(), false);
    m_frontier = 0;
    m_ready = 0;
    return out;
}

void GradientBundle::write(size_t i, const at::Tensor& grad) {
    at::Tensor dst = at::from_blob(m_data + m_offset[i], m_layout.paramShapes[i],
                                   at::TensorOptions().dtype(m_wire));
    at::NoGradGuard noGrad;
    if (grad.defined())
        dst.copy_(grad.detach());
    else
        dst.zero_();
    m_done[i] = true;
}

qint64 GradientBundle::add(size_t i, const at::Tensor& grad) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_data || i >= m_done.size() || m_done[i])
        return -1;
    write(i, grad);
    const size_t count = m_done.size();
    const qint64 before = m_ready;
    while (m_frontier < count && m_done[paramAt(m_frontier, count, BundleOrder::Backward)]) {
        m_ready += m_bytes[paramAt(m_frontier, count, BundleOrder::Backward)];
        ++m_frontier;
    }
    return m_ready > before ? m_ready : -1;
}

void GradientBundle::finish(const std::vector<at::Tensor>& grads,
                            const std::vector<at::Tensor>& buffers) {
    std::lock_guard<std::mutex> lock(m_mutex);
    for (size_t i = 0; i < m_done.size(); ++i)
        if (!m_done[i])
            write(i, i < grads.size() ? grads[i] : at::Tensor());
    char* dst = m_data + m_paramBytes;
    for (size_t b = 0; b < buffers.size() && b < m_layout.bufferShapes.size(); ++b) {
        at::Tensor c = buffers[b].detach().to(at::kCPU, m_layout.bufferTypes[b]).contiguous();
        std::memcpy(dst, c.data_ptr(), c.nbytes());
        dst += c.nbytes();
    }
    m_frontier = m_done.size();
    m_ready = m_size;
}

qint64 GradientBundle::ready() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_ready;
}

} // namespace tandem
