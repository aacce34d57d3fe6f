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

namespace tandem {

namespace {

using torch::jit::Module;

// Creates modules whose class names are unique within one model: TorchScript serialises
// every class under its qualified name, so two different Conv2d definitions must not share
// one.
class ZooBuilder {
public:
    ZooBuilder(std::string model, uint64_t seed)
        : m_model(std::move(model))
        , m_gen(seed) {}

    Module module(const std::string& cls) {
        Module m(c10::QualifiedName("__torch__.tandem." + m_model + "." + cls + "_" +
                                    std::to_string(m_counter++)));
        // Module::train()/eval() flip this attribute on every submodule.
        m.register_attribute("training", c10::BoolType::get(), true);
        return m;
    }

    // torch.nn's default for Linear and Conv2d: kaiming_uniform(a=sqrt(5)) for the weight,
    // which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias.
    at::Tensor uniform(at::IntArrayRef shape, int64_t fanIn) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
        at::Tensor t = at::empty(shape, at::kFloat);
        float* p = t.data_ptr<float>();
        for (int64_t i = 0; i < t.numel(); ++i) {
            // Our own mapping from the 64-bit generator, so that weights are the same on every
            // standard library (distribution implementations differ between them).
            const double u = static_cast<double>(m_gen() >> 11) * (1.0 / 9007199254740992.0);
            p[i] = static_cast<float>((2.0 * u - 1.0) * bound);
        }
        return t;
    }

    Module linear(int64_t in, int64_t out) {
        Module m = module("Linear");
        m.register_parameter("weight", uniform({out, in}, in).requires_grad_(true), false);
        m.register_parameter("bias", uniform({out}, in).requires_grad_(true), false);
        m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.linear(x, self.weight, self.bias)
)");
        return m;
    }

    Module conv2d(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias) {
        Module m = module("Conv2d");
        const int64_t fanIn = in * k * k;
        m.register_parameter("weight", uniform({out, in, k, k}, fanIn).requires_grad_(true), false);
        if (bias)
            m.register_parameter("bias", uniform({out}, fanIn).requires_grad_(true), false);
        const std::string s = std::to_string(stride), p = std::to_string(pad);
        m.define("def forward(self, x: Tensor) -> Tensor:\n"
                 "    return torch.conv2d(x, self.weight, " +
                 std::string(bias ? "self.bias" : "None") + ", [" + s + ", " + s + "], [" + p +
                 ", " + p + "], [1, 1], 1)\n");
        return m;
    }

    Module batchNorm2d(int64_t c) {
        Module m = module("BatchNorm2d");
        m.register_parameter("weight", at::ones({c}).requires_grad_(true), false);
        m.register_parameter("bias", at::zeros({c}).requires_grad_(true), false);
        m.register_buffer("running_mean", at::zeros({c}));
        m.register_buffer("running_var", at::ones({c}));
        m.register_buffer("num_batches_tracked", at::zeros({}, at::kLong));
        m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    if self.training:
        self.num_batches_tracked.add_(1)
    return torch.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var,
                            self.training, 0.1, 1e-05, False)
)");
        return m;
    }

private:
    std::string m_model;
    std::mt19937_64 m_gen;
    int m_counter = 0;
};

// The multilayer perceptron: 784-256-10 on flattened 28x28 images.
Module buildMlp(uint64_t seed) {
    ZooBuilder b("mlp", seed);
    Module m = b.module("Mlp");
    m.register_module("fc1", b.linear(784, 256));
    m.register_module("fc2", b.linear(256, 10));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.flatten(x, 1)
    x = torch.relu(self.fc1.forward(x))
    return self.fc2.forward(x)
)");
    return m;
}

// The pytorch/examples MNIST network without dropout, with the same parameter names.
Module buildMnistCnn(uint64_t seed) {
    ZooBuilder b("mnist_cnn", seed);
    Module m = b.module("Net");
    m.register_module("conv1", b.conv2d(1, 32, 3, 1, 0, true));
    m.register_module("conv2", b.conv2d(32, 64, 3, 1, 0, true));
    m.register_module("fc1", b.linear(9216, 128));
    m.register_module("fc2", b.linear(128, 10));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.relu(self.conv1.forward(x))
    x = torch.relu(self.conv2.forward(x))
    x = torch.max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    x = torch.flatten(x, 1)
    x = torch.relu(self.fc1.forward(x))
    return self.fc2.forward(x)
)");
    return m;
}

// A basic residual block: two 3x3 conv+BN, with a 1x1 conv+BN shortcut when the shape changes.
Module resBlock(ZooBuilder& b, int64_t in, int64_t out, int64_t stride) {
    Module m = b.module("BasicBlock");
    m.register_module("conv1", b.conv2d(in, out, 3, stride, 1, false));
    m.register_module("bn1", b.batchNorm2d(out));
    m.register_module("conv2", b.conv2d(out, out, 3, 1, 1, false));
    m.register_module("bn2", b.batchNorm2d(out));
    const bool project = stride != 1 || in != out;
    if (project) {
        m.register_module("shortcut_conv", b.conv2d(in, out, 1, stride, 0, false));
        m.register_module("shortcut_bn", b.batchNorm2d(out));
    }
    const std::string shortcut =
        project ? "self.shortcut_bn.forward(self.shortcut_conv.forward(x))" : "x";
    m.define("def forward(self, x: Tensor) -> Tensor:\n"
             "    y = torch.relu(self.bn1.forward(self.conv1.forward(x)))\n"
             "    y = self.bn2.forward(self.conv2.forward(y))\n"
             "    return torch.relu(y + " +
             shortcut + ")\n");
    return m;
}

// ResNet-8 for 32x32x3 images (CIFAR-10): a 16-channel stem and three residual stages of one
// block each (16, 32, 64 channels), global average pooling and a linear classifier.
Module buildResnet8(uint64_t seed) {
    ZooBuilder b("resnet8", seed);
    Module m = b.module("ResNet8");
    m.register_module("conv1", b.conv2d(3, 16, 3, 1, 1, false));
    m.register_module("bn1", b.batchNorm2d(16));
    m.register_module("layer1", resBlock(b, 16, 16, 1));
    m.register_module("layer2", resBlock(b, 16, 32, 2));
    m.register_module("layer3", resBlock(b, 32, 64, 2));
    m.register_module("fc", b.linear(64, 10));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.relu(self.bn1.forward(self.conv1.forward(x)))
    x = self.layer1.forward(x)
    x = self.layer2.forward(x)
    x = self.layer3.forward(x)
    x = torch.mean(x, [2, 3])
    return self.fc.forward(x)
)");
    return m;
}

Error torchError(const QString& what, const std::exception& e) {
    // c10::Error messages carry a C++ backtrace after the first line; the first line is the
    // part a person can act on.
    QString msg = QString::fromUtf8(e.what());
    const qsizetype nl = msg.indexOf(QLatin1Char('\n'));
    if (nl > 0)
        msg.truncate(nl);
    return makeError(ErrorCode::Runtime, QStringLiteral("%1: %2").arg(what, msg));
}

} // namespace

QStringList zooModelNames() {
    return {QStringLiteral("mlp"), QStringLiteral("mnist-cnn"), QStringLiteral("resnet8")};
}

bool isZooModel(const QString& name) {
    return zooModelNames().contains(name);
}

Expected<torch::jit::Module> buildZooModel(const QString& name, uint64_t seed) {
    initTorchRuntime(); // every module Tandem runs is built or loaded here
    try {
        if (name == QLatin1String("mlp"))
            return buildMlp(seed);
        if (name == QLatin1String("mnist-cnn"))
            return buildMnistCnn(seed);
        if (name == QLatin1String("resnet8"))
            return buildResnet8(seed);
    } catch (const std::exception& e) {
        return torchError(QStringLiteral("building model %1").arg(name), e);
    }
    return makeError(ErrorCode::InvalidArgument,
                     QStringLiteral("unknown model \"%1\"; built-in models are %2, or give the "
                                    "path of a TorchScript file")
                         .arg(name, zooModelNames().join(QStringLiteral(", "))));
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
        t.paramNames.push_back(p.name);
        t.params.push_back(p.value);
    }
    for (const auto& b : module.named_buffers(/*recurse=*/true)) {
        t.bufferNames.push_back(b.name);
        t.buffers.push_back(b.value);
    }
    return t;
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
    for (size_t i = 0; i < t.buffers.size(); ++i)
        add("buffer", t.bufferNames[i], t.buffers[i]);
    return h.result().toHex();
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
