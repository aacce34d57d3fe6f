#include "engine/hf/hfmodel.h"

#include "engine/hf/transformer.h"
#include "engine/hf/weights.h"
#include "engine/torchcompat.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <map>
#include <stdexcept>

namespace tandem {

namespace {

const QString kKind = QStringLiteral("tandem-hf-model");

class HfModel final : public ModelImpl {
public:
    explicit HfModel(std::shared_ptr<HfTransformer> t)
        : m_t(std::move(t)) {}

    at::Tensor forward(const at::Tensor& x) override { return m_t->logits(x); }
    void train(bool on) override { m_t->setTraining(on); }
    NamedTensors parameters() const override { return m_t->parameters(); }
    NamedTensors buffers() const override { return {}; }
    std::shared_ptr<ModelImpl> copy() const override {
        return std::make_shared<HfModel>(std::make_shared<HfTransformer>(m_t->copy()));
    }
    void to(const c10::Device& device) override { m_t->to(device); }
    QByteArray archive(bool withWeights) const override;
    HfTransformer* transformer() override { return m_t.get(); }

private:
    std::shared_ptr<HfTransformer> m_t;
};

QJsonObject loraJson(const LoraConfig& l) {
    return QJsonObject{{QStringLiteral("r"), qint64(l.rank)},
                       {QStringLiteral("alpha"), l.alpha},
                       {QStringLiteral("dropout"), l.dropout},
                       {QStringLiteral("targets"), QJsonArray::fromStringList(l.targets)}};
}

Expected<LoraConfig> loraFrom(const QJsonObject& o, const QString& name) {
    LoraConfig l;
    l.rank = o.value(QStringLiteral("r")).toInteger();
    l.alpha = o.value(QStringLiteral("alpha")).toDouble();
    l.dropout = o.value(QStringLiteral("dropout")).toDouble();
    for (const QJsonValue& v : o.value(QStringLiteral("targets")).toArray())
        l.targets << v.toString();
    if (l.rank < 1 || l.rank > 65536 || !(l.dropout >= 0 && l.dropout < 1) ||
        !std::isfinite(l.alpha))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: the adapters' settings are out of range").arg(name));
    return l;
}

QByteArray HfModel::archive(bool withWeights) const {
    TensorFile f;
    f.meta = QJsonObject{{QStringLiteral("kind"), kKind},
                         {QStringLiteral("config"), m_t->config().source},
                         {QStringLiteral("checkpoint_activations"), m_t->checkpointActivations()}};
    if (m_t->lora())
        f.meta.insert(QStringLiteral("lora"), loraJson(*m_t->lora()));
    QJsonArray layout;
    for (const auto& [name, t] : m_t->parameters()) {
        const at::Tensor c = t.detach().cpu().contiguous();
        if (withWeights) {
            f.tensors << toRecord(name, c);
            continue;
        }
        const TensorRecord r = toRecord(name, c.flatten().narrow(0, 0, 0));
        QJsonArray shape;
        for (int64_t d : c.sizes())
            shape << qint64(d);
        layout << QJsonObject{{QStringLiteral("name"), QString::fromStdString(name)},
                              {QStringLiteral("dtype"), dtypeName(r.dtype)},
                              {QStringLiteral("shape"), shape}};
    }
    if (!withWeights)
        f.meta.insert(QStringLiteral("layout"), layout);
    auto bytes = serializeCheckpoint(f);
    if (!bytes)
        throw std::runtime_error(bytes.error().message.toStdString());
    return *bytes;
}

Expected<Model> buildFromArchive(const QByteArray& archive, const QString& name);

// The archive's tensors, or empty ones of its layout's shapes and dtypes.
Expected<NamedTensors> archiveTensors(const TensorFile& f, const QString& name) {
    NamedTensors out;
    for (const TensorRecord& r : f.tensors) {
        auto t = fromRecord(r);
        if (!t)
            return t.error();
        out.emplace_back(r.name.toStdString(), *t);
    }
    for (const QJsonValue& v : f.meta.value(QStringLiteral("layout")).toArray()) {
        const QJsonObject o = v.toObject();
        DType d;
        if (!dtypeFromName(o.value(QStringLiteral("dtype")).toString(), &d))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: a tensor has an unknown dtype").arg(name));
        std::vector<int64_t> shape;
        for (const QJsonValue& s : o.value(QStringLiteral("shape")).toArray()) {
            if (s.toInteger(-1) < 0)
                return makeError(ErrorCode::Corrupt,
                                 QStringLiteral("%1: a tensor has a negative size").arg(name));
            shape.push_back(s.toInteger());
        }
        out.emplace_back(o.value(QStringLiteral("name")).toString().toStdString(),
                         at::empty(shape, scalarTypeOf(d)));
    }
    return out;
}

// The adapters' values, by name, into a model that has just been given adapters.
Status fillAdapters(HfTransformer& t, const NamedTensors& adapters, const QString& name) {
    std::map<std::string, at::Tensor> own(t.parameters().begin(), t.parameters().end());
    at::NoGradGuard noGrad;
    size_t filled = 0;
    for (const auto& [n, v] : adapters) {
        auto it = own.find(n);
        if (it == own.end() || !it->second.sizes().equals(v.sizes()))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: adapter %2 does not fit the model")
                                 .arg(name, QString::fromStdString(n)));
        it->second.copy_(v);
        ++filled;
    }
    size_t expected = 0;
    for (const auto& [n, v] : t.parameters())
        expected += n.find(".lora_") != std::string::npos ? 1 : 0;
    if (filled != expected)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 holds %2 of the model's %3 adapter tensors")
                             .arg(name)
                             .arg(filled)
                             .arg(expected));
    return success();
}

} // namespace

Expected<Model> openHfModel(const QString& dir, const QString& loraSpec, bool checkpointActivations,
                            uint64_t seed) {
    initTorchRuntime();
    auto config = readHfConfig(dir);
    if (!config)
        return config.error();
    auto t = std::make_shared<HfTransformer>(*config);
    {
        auto weights = readHfWeights(dir);
        if (!weights)
            return weights.error();
        if (auto st = t->load(*weights); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1: %2").arg(dir, st.error().message));
    }
    if (!loraSpec.isEmpty()) {
        auto lora = parseLoraSpec(loraSpec, config->family);
        if (!lora)
            return makeError(lora.error().code,
                             QStringLiteral("--lora: %1").arg(lora.error().message));
        if (auto st = t->addLora(*lora, seed); !st)
            return makeError(st.error().code, QStringLiteral("--lora: %1").arg(st.error().message));
    } else {
        // Every weight trains: the coordinator's masters and the optimizer's state are fp32,
        // as for any other model; --precision picks what the forward pass computes in.
        t->convertWeights(at::kFloat);
    }
    t->setCheckpointActivations(checkpointActivations);
    return Model(std::make_shared<HfModel>(std::move(t)));
}

bool isHfArchive(const QByteArray& archive) {
    return archive.startsWith("TANDEMCK");
}

Expected<Model> hfModelFromArchive(const QByteArray& archive, const QString& name) {
    initTorchRuntime();
    // The archive comes from a peer: whatever LibTorch makes of its figures is an error, never
    // a crash.
    try {
        return buildFromArchive(archive, name);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: %2").arg(
                             name, QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
    }
}

namespace {

Expected<Model> buildFromArchive(const QByteArray& archive, const QString& name) {
    auto f = parseCheckpoint(archive, name);
    if (!f)
        return f.error();
    if (f->meta.value(QStringLiteral("kind")).toString() != kKind)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 does not hold a Hugging Face model").arg(name));
    auto config = parseHfConfig(
        QJsonDocument(f->meta.value(QStringLiteral("config")).toObject()).toJson(), name);
    if (!config)
        return config.error();
    auto tensors = archiveTensors(*f, name);
    if (!tensors)
        return tensors.error();
    NamedTensors base, adapters;
    for (auto& entry : *tensors)
        (entry.first.find(".lora_") != std::string::npos ? adapters : base)
            .push_back(std::move(entry));
    auto t = std::make_shared<HfTransformer>(*config);
    if (auto st = t->load(base); !st)
        return makeError(st.error().code, QStringLiteral("%1: %2").arg(name, st.error().message));
    const QJsonObject lora = f->meta.value(QStringLiteral("lora")).toObject();
    if (!lora.isEmpty()) {
        auto l = loraFrom(lora, name);
        if (!l)
            return l.error();
        if (auto st = t->addLora(*l, 0); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1: %2").arg(name, st.error().message));
    }
    if (auto st = fillAdapters(*t, adapters, name); !st)
        return st.error();
    t->setCheckpointActivations(f->meta.value(QStringLiteral("checkpoint_activations")).toBool());
    return Model(std::make_shared<HfModel>(std::move(t)));
}

} // namespace

} // namespace tandem
