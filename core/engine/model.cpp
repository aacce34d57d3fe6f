#include "engine/model.h"

#include "engine/hf/hfmodel.h"
#include "engine/training.h"

#include <stdexcept>

namespace tandem {

namespace {

class ScriptModel final : public ModelImpl {
public:
    explicit ScriptModel(torch::jit::Module module)
        : m_module(std::move(module)) {}

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
    QByteArray archive(bool) const override { return saveScriptModule(m_module); }
    torch::jit::Module* script() override { return &m_module; }

private:
    torch::jit::Module m_module;
};

} // namespace

NotOneTensor::NotOneTensor(const std::string& kind)
    : std::runtime_error("the model returns a " + kind + ", not one tensor")
    , kind(kind) {}

at::Tensor ModelImpl::loss(const at::Tensor&, const at::Tensor&) {
    throw std::runtime_error("the model has no loss method");
}

Model::Model(torch::jit::Module module)
    : m_impl(std::make_shared<ScriptModel>(std::move(module))) {}

Model Model::copy() const {
    at::NoGradGuard noGrad;
    return Model(m_impl->copy());
}

ModelTensors modelTensors(const Model& model) {
    ModelTensors t;
    for (auto& [name, value] : model.parameters()) {
        if (value.requires_grad()) {
            t.paramNames.push_back(name);
            t.params.push_back(value);
        } else {
            t.frozenNames.push_back(name);
            t.frozen.push_back(value);
        }
    }
    for (auto& [name, value] : model.buffers()) {
        t.bufferNames.push_back(name);
        t.buffers.push_back(value);
    }
    return t;
}

QList<TensorRecord> stateDictRecords(const Model& model) {
    // Trainable and frozen parameters alike, in the model's own order, as state_dict() has
    // them.
    QList<TensorRecord> out;
    for (const auto& [name, value] : model.parameters())
        out << toRecord(name, value);
    for (const auto& [name, value] : model.buffers())
        out << toRecord(name, value);
    return out;
}

QString hfFolderOf(const QString& model) {
    return model.startsWith(QLatin1String("hf:")) ? model.mid(3) : QString();
}

Expected<Model> openModel(const RunConfig& cfg) {
    const QString hf = hfFolderOf(cfg.model);
    if (!hf.isEmpty())
        return openHfModel(hf, cfg.lora, cfg.checkpointActivations, cfg.seed);
    // What validate() says of these, without the rest of a run's settings (the form checks a
    // model before it knows which machines take part).
    if (!cfg.lora.isEmpty() || cfg.checkpointActivations)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("adapters (--lora) and recomputed activations "
                                        "(--checkpoint-activations) are for a Hugging Face model "
                                        "(--model hf:DIR); %1 is not one")
                             .arg(cfg.model));
    auto m =
        isZooModel(cfg.model) ? buildZooModel(cfg.model, cfg.seed) : loadScriptModule(cfg.model);
    if (!m)
        return m.error();
    return Model(*m);
}

Expected<Model> modelFromArchive(const QByteArray& archive, const QString& name) {
    if (isHfArchive(archive))
        return hfModelFromArchive(archive, name);
    auto m = loadScriptModule(archive, name);
    if (!m)
        return m.error();
    return Model(*m);
}

} // namespace tandem
