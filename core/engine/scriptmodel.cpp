#include "engine/scriptmodel.h"

#include "common/files.h"
#include "engine/torchcompat.h"
#include "formats/ziparchive.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>

#include <cmath>
#include <random>
#include <sstream>
#include <unordered_map>

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

Expected<torch::jit::Module> loadScriptModule(const QString& path) {
    initTorchRuntime();
    if (!QFileInfo::exists(path))
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("model file %1 does not exist").arg(path));
    if (auto st = checkRegularFile(path); !st)
        return st.error();
    // LibTorch checks none of the archive's CRCs: a damaged file would load and train.
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return makeError(ErrorCode::Io,
                             QStringLiteral("%1: cannot open: %2").arg(path, f.errorString()));
        const qint64 size = f.size();
        const uchar* mapped = size > 0 ? f.map(0, size) : nullptr;
        if (!mapped)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 is empty or cannot be read").arg(path));
        const Status st = verifyZipArchive(
            QByteArrayView(reinterpret_cast<const char*>(mapped), qsizetype(size)), path);
        f.unmap(const_cast<uchar*>(mapped));
        if (!st)
            return st.error();
    }
    try {
        return torch::jit::load(QFile::encodeName(path).toStdString(), c10::Device(c10::kCPU));
    } catch (const std::exception& e) {
        return torchError(QStringLiteral("%1 is not a TorchScript file saved with "
                                         "torch.jit.save")
                              .arg(path),
                          e);
    }
}

Expected<torch::jit::Module> loadScriptModule(const QByteArray& archive, const QString& name) {
    initTorchRuntime();
    if (auto st = verifyZipArchive(archive, name); !st)
        return st.error();
    try {
        std::istringstream in(std::string(archive.constData(), size_t(archive.size())));
        return torch::jit::load(in, c10::Device(c10::kCPU));
    } catch (const std::exception& e) {
        return torchError(QStringLiteral("loading the model in %1").arg(name), e);
    }
}

QByteArray saveScriptModule(const torch::jit::Module& module) {
    std::ostringstream out;
    module.save(out);
    const std::string s = out.str();
    return QByteArray(s.data(), qsizetype(s.size()));
}

ModelTensors modelTensors(const torch::jit::Module& module) {
    ModelTensors t;
    for (const auto& p : module.named_parameters(/*recurse=*/true)) {
        if (p.value.requires_grad()) {
            t.paramNames.push_back(p.name);
            t.params.push_back(p.value);
        } else {
            t.frozenNames.push_back(p.name);
            t.frozen.push_back(p.value);
        }
    }
    for (const auto& b : module.named_buffers(/*recurse=*/true)) {
        t.bufferNames.push_back(b.name);
        t.buffers.push_back(b.value);
    }
    return t;
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

void copyTrainability(const torch::jit::Module& original, torch::jit::Module& copy) {
    std::unordered_map<std::string, bool> trainable;
    for (const auto& p : original.named_parameters(/*recurse=*/true))
        trainable[p.name] = p.value.requires_grad();
    for (const auto& p : copy.named_parameters(/*recurse=*/true)) {
        auto it = trainable.find(p.name);
        at::Tensor t = p.value;
        t.detach_().requires_grad_(it == trainable.end() || it->second);
    }
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
    for (const at::Tensor& p : frozen)
        n += p.numel();
    return n;
}

namespace {

bool toDType(at::ScalarType s, DType* out) {
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
    default:
        return false;
    }
}

} // namespace

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
    }
    return at::kFloat;
}

TensorRecord toRecord(const std::string& name, const at::Tensor& t) {
    TensorRecord r;
    r.name = QString::fromStdString(name);
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    if (!toDType(c.scalar_type(), &r.dtype)) {
        c = c.to(at::kFloat);
        r.dtype = DType::F32;
    }
    r.shape.assign(c.sizes().begin(), c.sizes().end());
    r.data = QByteArray(static_cast<const char*>(c.data_ptr()), qsizetype(c.nbytes()));
    return r;
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

} // namespace tandem
