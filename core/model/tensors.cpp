#include "model/tensors.h"

#include <QCryptographicHash>

#include <cstring>

namespace tandem {

Error torchError(const QString& what, const std::exception& e) {
    // c10::Error messages carry a C++ backtrace after the first line; the first line is the
    // part a person can act on.
    QString msg = QString::fromUtf8(e.what());
    const qsizetype nl = msg.indexOf(QLatin1Char('\n'));
    if (nl > 0)
        msg.truncate(nl);
    return makeError(ErrorCode::Runtime, QStringLiteral("%1: %2").arg(what, msg));
}

QString firstLine(const std::exception& e) {
    QString m = QString::fromUtf8(e.what());
    const qsizetype nl = m.indexOf(QLatin1Char('\n'));
    return nl > 0 ? m.left(nl) : m;
}

QString describeParameters(const ModelTensors& t) {
    QString s = QStringLiteral("%1 trainable parameters").arg(t.trainableCount());
    if (t.frozenCount() > 0)
        s += QStringLiteral(", %1 frozen, which are never sent or changed").arg(t.frozenCount());
    return s;
}

Status checkTrainable(const ModelTensors& t, const QString& modelName) {
    if (!t.params.empty())
        return success();
    return makeError(ErrorCode::Incompatible,
                     QStringLiteral("model %1 has no trainable parameters: every one has "
                                    "requires_grad=False. Unfreeze the layers to train before "
                                    "saving it")
                         .arg(modelName));
}

QByteArray schemaHash(const ModelTensors& t) {
    QCryptographicHash h(QCryptographicHash::Sha256);
    auto add = [&](const char* kind, const std::string& n, const at::Tensor& v) {
        QByteArray line = QByteArray(kind) + ' ' + QByteArray::fromStdString(n) + ' ' +
                          QByteArray(c10::toString(v.scalar_type()));
        for (int64_t s : v.sizes())
            line += ' ' + QByteArray::number(qint64(s));
        h.addData(line + '\n');
    };
    for (size_t i = 0; i < t.params.size(); ++i)
        add("param", t.paramNames[i], t.params[i]);
    for (size_t i = 0; i < t.frozen.size(); ++i)
        add("frozen", t.frozenNames[i], t.frozen[i]);
    for (size_t i = 0; i < t.buffers.size(); ++i)
        add("buffer", t.bufferNames[i], t.buffers[i]);
    return h.result().toHex();
}

int64_t ModelTensors::trainableCount() const {
    int64_t n = 0;
    for (const at::Tensor& p : params)
        n += p.numel();
    return n;
}

int64_t ModelTensors::frozenCount() const {
    int64_t n = 0;
    for (size_t i = 0; i < frozen.size(); ++i) {
        const std::string& name = frozenNames[i];
        const auto endsWith = [&](const char* tail) {
            const size_t k = std::strlen(tail);
            return name.size() > k && name.compare(name.size() - k, k, tail) == 0;
        };
        // A quantized weight (model/hf/quant.h) counts its values: two a byte in nf4, one in
        // int8; the scales and tables beside it are not parameters.
        if (frozen[i].scalar_type() == at::kByte && endsWith(".weight"))
            n += 2 * frozen[i].numel();
        else if (name.find(".weight.") == std::string::npos && !endsWith(".SCB"))
            n += frozen[i].numel();
    }
    return n;
}

bool dtypeOf(at::ScalarType s, DType* out) {
    switch (s) {
    case at::kFloat:
        *out = DType::F32;
        return true;
    case at::kDouble:
        *out = DType::F64;
        return true;
    case at::kHalf:
        *out = DType::F16;
        return true;
    case at::kBFloat16:
        *out = DType::BF16;
        return true;
    case at::kLong:
        *out = DType::I64;
        return true;
    case at::kInt:
        *out = DType::I32;
        return true;
    case at::kByte:
        *out = DType::U8;
        return true;
    case at::kBool:
        *out = DType::Bool;
        return true;
    case at::kChar:
        *out = DType::I8;
        return true;
    default:
        return false;
    }
}

at::ScalarType scalarTypeOf(DType d) {
    switch (d) {
    case DType::F32:
        return at::kFloat;
    case DType::F64:
        return at::kDouble;
    case DType::F16:
        return at::kHalf;
    case DType::BF16:
        return at::kBFloat16;
    case DType::I64:
        return at::kLong;
    case DType::I32:
        return at::kInt;
    case DType::U8:
        return at::kByte;
    case DType::Bool:
        return at::kBool;
    case DType::I8:
        return at::kChar;
    }
    return at::kFloat;
}

TensorRecord toRecord(const std::string& name, const at::Tensor& t) {
    TensorRecord r;
    r.name = QString::fromStdString(name);
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    if (!dtypeOf(c.scalar_type(), &r.dtype)) {
        c = c.to(at::kFloat);
        r.dtype = DType::F32;
    }
    r.shape.assign(c.sizes().begin(), c.sizes().end());
    r.data = QByteArray(static_cast<const char*>(c.data_ptr()), qsizetype(c.nbytes()));
    return r;
}

LazyTensor toLazy(const std::string& name, const at::Tensor& t) {
    LazyTensor l;
    l.name = QString::fromStdString(name);
    at::Tensor held = t.detach();
    if (!dtypeOf(held.scalar_type(), &l.dtype))
        l.dtype = DType::F32;
    l.shape.assign(held.sizes().begin(), held.sizes().end());
    DType own{};
    if (held.device().is_cpu() && held.is_contiguous() && dtypeOf(held.scalar_type(), &own)) {
        l.bytes = [held] {
            return QByteArray::fromRawData(static_cast<const char*>(held.data_ptr()),
                                           qsizetype(held.nbytes()));
        };
    } else {
        l.bytes = [name, held] { return toRecord(name, held).data; };
    }
    return l;
}

Expected<at::Tensor> fromRecord(const TensorRecord& r) {
    if (r.data.size() != r.numel() * dtypeSize(r.dtype))
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("tensor %1: data size does not match its shape").arg(r.name));
    at::Tensor t =
        at::empty(at::IntArrayRef(r.shape), at::TensorOptions().dtype(scalarTypeOf(r.dtype)));
    if (r.data.size() > 0)
        memcpy(t.data_ptr(), r.data.constData(), size_t(r.data.size()));
    return t;
}

namespace {

// `data`, read for the tensor `t` of `shape`: refused when fewer or more bytes came than it holds.
Expected<at::Tensor> tensorRead(const LazyTensor& t, std::vector<int64_t> shape, QByteArray data) {
    TensorRecord r;
    r.name = t.name;
    r.dtype = t.dtype;
    r.shape = std::move(shape);
    r.data = std::move(data);
    if (r.data.size() != r.numel() * dtypeSize(r.dtype))
        return makeError(ErrorCode::Io,
                         QStringLiteral("tensor %1: %2 of its %3 bytes could be read")
                             .arg(t.name)
                             .arg(r.data.size())
                             .arg(r.numel() * dtypeSize(r.dtype)));
    return fromRecord(r);
}

} // namespace

Expected<at::Tensor> readLazy(const LazyTensor& t) {
    return tensorRead(t, t.shape, t.bytes());
}

Expected<at::Tensor> readLazyPart(const LazyTensor& t, int64_t offset, int64_t n) {
    int64_t numel = 1;
    for (int64_t d : t.shape)
        numel *= d;
    if (offset < 0 || n < 0 || offset + n > numel)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("tensor %1: values %2 to %3 of its %4")
                             .arg(t.name)
                             .arg(offset)
                             .arg(offset + n)
                             .arg(numel));
    if (!t.part) {
        auto whole = readLazy(t);
        if (!whole)
            return whole.error();
        return whole->reshape({-1}).narrow(0, offset, n).clone();
    }
    const qint64 size = dtypeSize(t.dtype);
    return tensorRead(t, {n}, t.part(offset * size, n * size));
}

} // namespace tandem
