#include "model/scriptmodel.h"

#include "common/files.h"
#include "formats/ziparchive.h"
#include "model/generation.h"
#include "model/torchcompat.h"

#include <QFile>
#include <QFileInfo>

#include <sstream>
#include <unordered_map>

namespace tandem {

namespace {

constexpr int64_t kByteVocabulary = 256;
constexpr int64_t kDefaultContext = 256;

// A byte-level language model's generation: the bytes so far, of which the model reads the last
// `context` at once ([1, T] ids in, [1, T, 256] next-byte scores out).
class ScriptGeneration final : public GenerationSession {
public:
    ScriptGeneration(torch::jit::Module module, int64_t context)
        : m_module(std::move(module))
        , m_context(context > 0 ? context : kDefaultContext) {}

    Expected<at::Tensor> next(const std::vector<int64_t>& ids) override {
        m_ids.insert(m_ids.end(), ids.begin(), ids.end());
        if (m_ids.empty())
            return makeError(ErrorCode::InvalidArgument, QStringLiteral("no bytes to go on from"));
        const size_t from = m_ids.size() > size_t(m_context) ? m_ids.size() - size_t(m_context) : 0;
        const std::vector<int64_t> window(m_ids.begin() + long(from), m_ids.end());
        const int64_t t = int64_t(window.size());
        at::NoGradGuard noGrad;
        c10::IValue out;
        try {
            out = m_module.forward({at::tensor(window, at::kLong).reshape({1, t})});
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("it is not a byte-level language model: it fails on "
                                            "[1, %1] token ids: %2")
                                 .arg(t)
                                 .arg(firstLine(e)));
        }
        const at::Tensor logits = out.isTensor() ? out.toTensor() : at::Tensor();
        if (!logits.defined() || logits.dim() != 3 || logits.size(0) != 1 || logits.size(1) != t ||
            logits.size(2) < kByteVocabulary)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("it is not a byte-level language model: it must "
                                            "return [1, T, 256] next-byte logits for [1, T] ids"));
        return logits[0][t - 1].slice(0, 0, kByteVocabulary).to(at::kFloat).cpu();
    }
    int64_t length() const override { return int64_t(m_ids.size()); }
    int64_t limit() const override { return 0; }

private:
    torch::jit::Module m_module;
    int64_t m_context;
    std::vector<int64_t> m_ids;
};

class ScriptModel final : public ModelImpl {
public:
    explicit ScriptModel(torch::jit::Module module)
        : m_module(std::move(module)) {}

    ModelKind kind() const override { return ModelKind::TorchScript; }
    at::Tensor forward(const at::Tensor& x) override {
        const c10::IValue v = m_module.forward({x});
        if (!v.isTensor())
            throw NotOneTensor(v.tagKind());
        return v.toTensor();
    }
    void train(bool on) override { m_module.train(on); }
    bool hasLoss() const override { return m_module.find_method("loss").has_value(); }
    at::Tensor loss(const at::Tensor& output, const at::Tensor& target) override {
        const c10::IValue v = m_module.run_method("loss", output, target);
        if (!v.isTensor())
            throw NotOneTensor(v.tagKind());
        return v.toTensor();
    }
    NamedTensors parameters() const override {
        NamedTensors out;
        for (const auto& p : m_module.named_parameters(/*recurse=*/true))
            out.emplace_back(p.name, p.value);
        return out;
    }
    NamedTensors buffers() const override {
        NamedTensors out;
        for (const auto& b : m_module.named_buffers(/*recurse=*/true))
            out.emplace_back(b.name, b.value);
        return out;
    }
    std::shared_ptr<ModelImpl> copy() const override {
        torch::jit::Module c = m_module.deepcopy();
        copyTrainability(m_module, c);
        return std::make_shared<ScriptModel>(std::move(c));
    }
    void to(const c10::Device& device) override { m_module.to(device); }
    Expected<QByteArray> archive(bool) const override { return saveScriptModule(m_module); }
    Status exportAs(ExportFormat format, const QString& out,
                    const ExportContext& context) const override {
        if (format == ExportFormat::Safetensors)
            return writeStateDict(out, parameters(), buffers(), context.source.text());
        // Saved in evaluation mode, as torch.jit.load users expect it; the run's own module
        // goes back to the mode it was in.
        torch::jit::Module m = m_module;
        const bool training = m.is_training();
        QByteArray bytes;
        try {
            m.eval();
            bytes = saveScriptModule(m);
            m.train(training);
        } catch (const std::exception& e) {
            m.train(training);
            return torchError(QStringLiteral("exporting TorchScript failed"), e);
        }
        return writeFileAtomically(out, bytes);
    }
    std::unique_ptr<GenerationSession> startGeneration(int64_t context) const override {
        return std::make_unique<ScriptGeneration>(m_module, context);
    }

    torch::jit::Module& module() { return m_module; }

private:
    torch::jit::Module m_module;
};

} // namespace

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

Expected<Model> openScriptModel(const ModelSource& source, uint64_t seed) {
    auto m = source.isBuiltIn() ? buildZooModel(source.path, seed) : loadScriptModule(source.path);
    if (!m)
        return m.error();
    return Model(std::move(*m));
}

Expected<Model> scriptModelFromArchive(const QByteArray& archive, const QString& name) {
    auto m = loadScriptModule(archive, name);
    if (!m)
        return m.error();
    return Model(std::move(*m));
}

Model::Model(torch::jit::Module module)
    : m_impl(std::make_shared<ScriptModel>(std::move(module))) {}

torch::jit::Module* scriptOf(const Model& model) {
    auto* m = dynamic_cast<ScriptModel*>(model.impl());
    return m ? &m->module() : nullptr;
}

} // namespace tandem
