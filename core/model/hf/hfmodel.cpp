#include "model/hf/hfmodel.h"

#include "common/files.h"
#include "model/generation.h"
#include "model/hf/transformer.h"
#include "model/hf/weights.h"
#include "model/torchcompat.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QLoggingCategory>
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

Q_LOGGING_CATEGORY(lcModel, "tandem.model")

namespace tandem {

namespace {

const QString kKind = QStringLiteral("tandem-hf-model");

// A generation over one transformer: its KV cache and position.
class HfGeneration final : public GenerationSession {
public:
    explicit HfGeneration(std::shared_ptr<const HfTransformer> t)
        : m_t(std::move(t)) {
        const NamedTensors& p = m_t->parameters();
        if (!p.empty())
            m_device = p.front().second.device();
    }

    Expected<at::Tensor> next(const std::vector<int64_t>& ids) override {
        if (ids.empty())
            return makeError(ErrorCode::InvalidArgument, QStringLiteral("no tokens to go on from"));
        at::NoGradGuard noGrad;
        const at::Tensor in =
            at::tensor(ids, at::kLong).reshape({1, int64_t(ids.size())}).to(m_device);
        auto logits = m_t->forward(in, {false, 0, &m_cache});
        if (!logits)
            return logits.error();
        return (*logits)[0][logits->size(1) - 1].to(at::kFloat).cpu();
    }
    int64_t length() const override { return m_cache.length; }
    int64_t limit() const override { return m_t->config().positionLimit(); }

private:
    std::shared_ptr<const HfTransformer> m_t;
    c10::Device m_device{c10::kCPU};
    HfTransformer::KvCache m_cache;
};

// What a user of the adapters is told the base is, as PEFT writes it: the hub id config.json's
// _name_or_path gives, where it gives one, else the folder's path.
QString baseModelName(const HfConfig& c, const ModelSource& source) {
    const QString id = c.source.value(QStringLiteral("_name_or_path")).toString();
    if (!id.isEmpty() && !id.startsWith(QLatin1Char('/')) && !id.startsWith(QLatin1Char('.')) &&
        id.count(QLatin1Char('/')) == 1 && !QFileInfo::exists(id))
        return id;
    return source.isHf() ? QFileInfo(source.path).absoluteFilePath() : QString();
}

class HfModel final : public ModelImpl {
public:
    explicit HfModel(std::shared_ptr<HfTransformer> t)
        : m_t(std::move(t)) {}

    ModelKind kind() const override { return ModelKind::Transformer; }
    at::Tensor forward(const at::Tensor& x) override { return forwardAt(x, {}); }
    bool outputsAtRows() const override { return true; }
    at::Tensor forwardAt(const at::Tensor& x, const at::Tensor& rows) override {
        HfTransformer::Pass pass;
        pass.training = m_training.load();
        pass.rows = rows;
        // Dropout draws its masks from the process's generator, which the worker seeds every
        // step, as torch.nn.Dropout does.
        if (pass.training && m_t->lora() && m_t->lora()->dropout > 0)
            pass.seed = uint64_t(at::empty({1}, at::kLong).random_().item<int64_t>());
        return m_t->logits(x, pass);
    }
    void train(bool on) override { m_training = on; }
    NamedTensors parameters() const override { return m_t->parameters(); }
    NamedTensors buffers() const override { return {}; }
    std::shared_ptr<ModelImpl> copy() const override {
        auto c = std::make_shared<HfModel>(std::make_shared<HfTransformer>(m_t->copy()));
        c->m_training = m_training.load();
        return c;
    }
    void to(const c10::Device& device) override { m_t->to(device); }
    Expected<QByteArray> archive(bool withWeights) const override {
        return serializeCheckpoint(archiveFile(withWeights));
    }
    Expected<qint64> writeArchive(bool withWeights, QIODevice& out) const override;
    bool hasAdapters() const override { return m_t->lora().has_value(); }
    at::Tensor forwardBase(const at::Tensor& x) override {
        HfTransformer::Pass pass;
        pass.adapters = false;
        return m_t->logits(x, pass);
    }
    Status exportAs(ExportFormat format, const QString& out,
                    const ExportContext& context) const override;
    int64_t bytesPerSample(const std::vector<int64_t>& shape, int64_t elem) const override {
        // A sample of several sequences (a preference pair: {2, T}) keeps each one's.
        if (shape.size() == 2)
            return shape[0] * m_t->bytesPerSample(shape[1], elem);
        return shape.empty() ? 0 : m_t->bytesPerSample(shape.front(), elem);
    }
    std::unique_ptr<GenerationSession> startGeneration(int64_t) const override {
        return std::make_unique<HfGeneration>(m_t);
    }
    int64_t widenFrozenBase() override { return m_t->widenFrozenBase(); }
    int64_t widenedBaseBytes() const override { return m_t->widenedBytes(); }
    int64_t transientWeightBytes(int64_t elem) const override {
        return m_t->dequantizedBytes(elem);
    }
    int64_t transientGradientBytes() const override { return m_t->tiedGradientBytes(); }
    int64_t nf4SavingBytes() const override {
        return m_t->lora() && m_t->baseQuant() == BaseQuant::None ? m_t->nf4Saving() : 0;
    }

    HfTransformer& transformer() { return *m_t; }

private:
    // What archive() serialises: the config, the adapters' settings, and the weights (lazily,
    // from where they lie) or only their layout.
    TensorFile archiveFile(bool withWeights) const;

    std::shared_ptr<HfTransformer> m_t;
    std::atomic<bool> m_training{false};
};

Status HfModel::exportAs(ExportFormat format, const QString& out,
                         const ExportContext& context) const {
    switch (format) {
    case ExportFormat::Hf:
    case ExportFormat::Merged:
        if (auto st = m_t->saveHfModel(out); !st)
            return st;
        return context.source.isHf() ? copyCompanionFiles(context.source.path, out) : success();
    case ExportFormat::Peft:
        if (!QDir().mkpath(out))
            return makeError(ErrorCode::Io, QStringLiteral("cannot create the folder %1").arg(out));
        return m_t->saveLoraAdapter(out, baseModelName(m_t->config(), context.source));
    case ExportFormat::Safetensors:
        return writeStateDict(out, m_t->parameters(), {}, context.source.text());
    case ExportFormat::Gguf: {
        // The merged model is written as a Hugging Face folder beside the file, converted from
        // there (mapped, a tensor at a time) and removed.
        QTemporaryDir tmp(QFileInfo(out).absolutePath() + QStringLiteral("/.tandem-gguf-XXXXXX"));
        if (!tmp.isValid())
            return makeError(ErrorCode::Io,
                             QStringLiteral("cannot create a temporary folder beside %1: %2")
                                 .arg(out, tmp.errorString()));
        if (auto st = m_t->saveHfModel(tmp.path()); !st)
            return st;
        if (context.source.isHf())
            if (auto st = copyCompanionFiles(context.source.path, tmp.path()); !st)
                return st;
        GgufOptions g = context.gguf;
        if (g.loraRank == 0 && m_t->lora()) {
            g.loraRank = m_t->lora()->rank;
            g.loraAlpha = m_t->lora()->alpha;
        }
        if (g.baseModel.isEmpty())
            g.baseModel = baseModelName(m_t->config(), context.source);
        if (QFileInfo(g.baseModel).isAbsolute()) // a folder here: its name, not this machine's path
            g.baseModel = QFileInfo(g.baseModel).fileName();
        if (g.name.isEmpty())
            g.name = QFileInfo(out).completeBaseName();
        return exportGgufFromFolder(tmp.path(), out, g);
    }
    case ExportFormat::TorchScript:
        break;
    }
    return makeError(ErrorCode::InvalidArgument, QStringLiteral("not an export of this model"));
}

QJsonObject loraJson(const LoraConfig& l) {
    return QJsonObject{{QStringLiteral("r"), qint64(l.rank)},
                       {QStringLiteral("base"), baseQuantName(l.base)},
                       {QStringLiteral("alpha"), l.alpha},
                       {QStringLiteral("dropout"), l.dropout},
                       {QStringLiteral("targets"), QJsonArray::fromStringList(l.targets)}};
}

// The adapters' settings an archive holds, as --lora spells them, so that one rule checks them
// whoever wrote them.
QString loraSpecOf(const QJsonObject& o) {
    QStringList targets;
    for (const QJsonValue& v : o.value(QStringLiteral("targets")).toArray())
        targets << v.toString();
    const QString base = o.value(QStringLiteral("base")).toString(QStringLiteral("bf16"));
    return QStringLiteral("r=%1,base=%5,alpha=%2,dropout=%3,targets=%4")
        .arg(o.value(QStringLiteral("r")).toInteger())
        .arg(o.value(QStringLiteral("alpha")).toDouble(), 0, 'g', 17)
        .arg(o.value(QStringLiteral("dropout")).toDouble(), 0, 'g', 17)
        .arg(targets.join(QLatin1Char(',')), base);
}

Expected<LoraConfig> loraFrom(const QJsonObject& o, const Family& family, const QString& name) {
    auto l = parseLoraSpec(loraSpecOf(o), family);
    if (!l)
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1: its adapters' settings: %2").arg(name, l.error().message));
    return l;
}

Expected<qint64> HfModel::writeArchive(bool withWeights, QIODevice& out) const {
    return writeCheckpointTo(out, archiveFile(withWeights));
}

TensorFile HfModel::archiveFile(bool withWeights) const {
    TensorFile f;
    f.meta = QJsonObject{{QStringLiteral("kind"), kKind},
                         {QStringLiteral("config"), m_t->config().source},
                         {QStringLiteral("checkpoint_activations"), m_t->checkpointActivations()}};
    if (m_t->lora())
        f.meta.insert(QStringLiteral("lora"), loraJson(*m_t->lora()));
    QJsonArray layout;
    for (const auto& [name, t] : m_t->parameters()) {
        // A quantized weight's state (its shape, dtype and offset, as JSON) is a few bytes that
        // its layout cannot say: it goes along.
        if (name.find(".quant_state.") != std::string::npos) {
            f.tensors << toRecord(name, t);
            continue;
        }
        // The weights are written from where they lie, not copied first: the archive of a
        // model of gigabytes is then as large again beside it, not twice as large.
        if (withWeights) {
            f.lazy << toLazy(name, t);
            continue;
        }
        DType d = DType::F32;
        dtypeOf(t.scalar_type(), &d);
        QJsonArray shape;
        for (int64_t s : t.sizes())
            shape << qint64(s);
        layout << QJsonObject{{QStringLiteral("name"), QString::fromStdString(name)},
                              {QStringLiteral("dtype"), dtypeName(d)},
                              {QStringLiteral("shape"), shape}};
    }
    if (!withWeights)
        f.meta.insert(QStringLiteral("layout"), layout);
    return f;
}

// The archive's tensors; for its layout's, those of `given` by name where it has them (each of
// the layout's shape and dtype), else empty ones. Given tensors, every base weight must be there.
Expected<NamedTensors> archiveTensors(const TensorFile& f, const QString& name,
                                      const NamedTensors* given, int64_t parameters,
                                      int64_t maxBytes) {
    // The layout's sizes come from a peer: what they add up to is checked against what the
    // config's model holds, and what would be allocated here (all but the given tensors, which
    // are held already) against the memory this machine has for the model, before anything is.
    std::set<QString> held;
    if (given)
        for (const auto& [n, t] : *given)
            held.insert(QString::fromStdString(n));
    double elements = 0, bytes = 0;
    for (const QJsonValue& v : f.meta.value(QStringLiteral("layout")).toArray()) {
        double n = 1;
        for (const QJsonValue& s : v.toObject().value(QStringLiteral("shape")).toArray())
            n *= std::max(0.0, s.toDouble());
        DType d = DType::F32;
        (void)dtypeFromName(v.toObject().value(QStringLiteral("dtype")).toString(), &d);
        elements += n;
        if (!held.count(v.toObject().value(QStringLiteral("name")).toString()))
            bytes += n * dtypeSize(d);
    }
    for (const TensorRecord& r : f.tensors)
        bytes += double(r.data.size());
    if (maxBytes > 0 && bytes > double(maxBytes))
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 needs %2 GB for its weights, more than the %3 GB "
                                        "this machine has")
                             .arg(name)
                             .arg(bytes / 1e9, 0, 'f', 1)
                             .arg(double(maxBytes) / 1e9, 0, 'f', 1));
    // Adapters and a quantized base's parts add far less than the model itself.
    if (elements > 2.0 * double(parameters) + 1e6)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 lists tensors of %2 million values, and its config's "
                                        "model holds %3 million")
                             .arg(name)
                             .arg(elements / 1e6, 0, 'f', 0)
                             .arg(double(parameters) / 1e6, 0, 'f', 0));
    std::map<std::string, const at::Tensor*> byName;
    if (given)
        for (const auto& [n, t] : *given)
            byName.emplace(n, &t);
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
        const std::string tensorName = o.value(QStringLiteral("name")).toString().toStdString();
        const auto it = byName.find(tensorName);
        if (it == byName.end()) {
            if (given && tensorName.find(".lora_") == std::string::npos)
                return makeError(ErrorCode::Corrupt,
                                 QStringLiteral("%1: the base model lacks %2")
                                     .arg(name, QString::fromStdString(tensorName)));
            out.emplace_back(tensorName, at::empty(shape, scalarTypeOf(d)));
            continue;
        }
        const at::Tensor& t = *it->second;
        if (!t.sizes().equals(shape) || t.scalar_type() != scalarTypeOf(d))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: the base model's %2 has another shape or dtype")
                                 .arg(name, QString::fromStdString(tensorName)));
        out.emplace_back(tensorName, t);
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

Expected<Model> buildFromArchive(const QByteArray& archive, const QString& name,
                                 const NamedTensors* given, int64_t maxBytes) {
    // The records are views into `archive`, which outlives them: each weight is copied once,
    // into its tensor, and a worker holds a model of gigabytes twice at most, not three times.
    auto f = parseCheckpointInPlace(archive, name);
    if (!f)
        return f.error();
    if (f->meta.value(QStringLiteral("kind")).toString() != kKind)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 does not hold a Hugging Face model").arg(name));
    // What archive() writes, and nothing more: a coordinator tokenizes the data itself and sends
    // no tokenizer or chat template, so an archive holding anything else was not made by Tandem,
    // and none of it is read.
    static const QStringList kKeys{QStringLiteral("kind"), QStringLiteral("config"),
                                   QStringLiteral("checkpoint_activations"), QStringLiteral("lora"),
                                   QStringLiteral("layout")};
    for (const QString& key : f->meta.keys())
        if (!kKeys.contains(key))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 holds \"%2\", which a model archive does not: a "
                                            "worker reads a model's config and weights, never a "
                                            "tokenizer or a chat template")
                                 .arg(name, key.left(64)));
    auto config = parseHfConfig(
        QJsonDocument(f->meta.value(QStringLiteral("config")).toObject()).toJson(), name);
    if (!config)
        return config.error();
    auto t = std::make_shared<HfTransformer>(*config);
    auto tensors = archiveTensors(*f, name, given, t->parameterCount(), maxBytes);
    if (!tensors)
        return tensors.error();
    NamedTensors base, adapters;
    for (auto& entry : *tensors)
        (entry.first.find(".lora_") != std::string::npos ? adapters : base)
            .push_back(std::move(entry));
    if (auto st = t->load(base); !st)
        return makeError(st.error().code, QStringLiteral("%1: %2").arg(name, st.error().message));
    const QJsonObject lora = f->meta.value(QStringLiteral("lora")).toObject();
    if (!lora.isEmpty()) {
        auto l = loraFrom(lora, *config->family, name);
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

int64_t bytesOf(const NamedTensors& tensors) {
    int64_t b = 0;
    for (const auto& [name, t] : tensors)
        b += t.numel() * int64_t(t.element_size());
    return b;
}

// Quantizing an 8B base takes a minute or more on a laptop's cores: the log says how far it is.
Status quantizeWithProgress(HfTransformer& t, BaseQuant kind) {
    if (kind == BaseQuant::None || t.baseQuant() != BaseQuant::None)
        return success();
    const QString name = baseQuantName(kind);
    const int64_t before = bytesOf(t.parameters());
    QElapsedTimer clock;
    clock.start();
    int shown = 0;
    auto st = t.quantizeBase(kind, [&](int done, int of) {
        const int tenth = done * 10 / std::max(1, of);
        if (tenth > shown && done < of && clock.elapsed() > 2000) {
            shown = tenth;
            qCInfo(lcModel).noquote()
                << QStringLiteral("quantizing the base to %1: %2 of %3 weights")
                       .arg(name)
                       .arg(done)
                       .arg(of);
        }
    });
    if (!st)
        return st;
    qCInfo(lcModel).noquote() << QStringLiteral(
                                     "the base is held in %1: %2 of weights instead of %3 (%4 s)")
                                     .arg(name,
                                          QLocale::c().formattedDataSize(bytesOf(t.parameters())),
                                          QLocale::c().formattedDataSize(before))
                                     .arg(double(clock.elapsed()) / 1000.0, 0, 'f', 1);
    return success();
}

} // namespace

Expected<Model> openHfModel(const QString& dir, const ModelOptions& options) {
    initTorchRuntime();
    auto config = readHfConfig(dir);
    if (!config)
        return config.error();
    auto t = std::make_shared<HfTransformer>(*config);
    {
        auto weights = mapHfWeights(dir);
        if (!weights)
            return weights.error();
        if (auto st = t->load(*weights); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1: %2").arg(dir, st.error().message));
    }
    if (!options.lora.isEmpty()) {
        auto lora = parseLoraSpec(options.lora, *config->family);
        if (!lora)
            return lora.error();
        // A folder already quantized (a published -bnb-4bit one) stays as it is.
        if (auto st = quantizeWithProgress(*t, lora->base); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1: %2").arg(dir, st.error().message));
        if (auto st = t->addLora(*lora, options.seed); !st)
            return makeError(st.error().code, QStringLiteral("--lora: %1").arg(st.error().message));
    } else if (t->baseQuant() != BaseQuant::None) {
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 holds a %2 base, which trains only through adapters: "
                                        "add --lora (for example --lora r=16)")
                             .arg(dir, baseQuantName(t->baseQuant())));
    } else {
        // Every weight trains: the coordinator's masters and the optimizer's state are fp32,
        // as for any other model; --precision picks what the forward pass computes in.
        t->convertWeights(at::kFloat);
    }
    t->setCheckpointActivations(options.checkpointActivations);
    return Model(std::make_shared<HfModel>(std::move(t)));
}

Expected<Model> openHfFolderAs(const QString& dir, const QByteArray& archive) {
    auto meta = checkpointMeta(archive, QStringLiteral("the run's model"));
    if (!meta)
        return meta.error();
    QFile file(QDir(dir).filePath(QStringLiteral("config.json")));
    if (!file.open(QIODevice::ReadOnly) || file.size() > (qint64(1) << 20) ||
        QJsonDocument::fromJson(file.readAll()).object() !=
            meta->value(QStringLiteral("config")).toObject())
        return makeError(ErrorCode::NotFound, QStringLiteral("%1 is not the run's model").arg(dir));
    const QJsonObject l = meta->value(QStringLiteral("lora")).toObject();
    ModelOptions options;
    options.checkpointActivations = meta->value(QStringLiteral("checkpoint_activations")).toBool();
    if (!l.isEmpty())
        options.lora = loraSpecOf(l);
    return openHfModel(dir, options);
}

bool isHfArchive(const QByteArray& archive) {
    if (!isTandemCheckpoint(archive))
        return false;
    auto meta = checkpointMeta(archive, QString());
    return meta && meta->value(QStringLiteral("kind")).toString() == kKind;
}

Expected<Model> hfModelFromArchive(const QByteArray& archive, const QString& name,
                                   const NamedTensors* base, int64_t maxBytes) {
    initTorchRuntime();
    // The archive comes from a peer: whatever LibTorch makes of its figures is an error, never
    // a crash.
    try {
        return buildFromArchive(archive, name, base, maxBytes);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Corrupt, QStringLiteral("%1: %2").arg(name, firstLine(e)));
    }
}

const HfTransformer* transformerOf(const Model& model) {
    auto* m = dynamic_cast<HfModel*>(model.impl());
    return m ? &m->transformer() : nullptr;
}

HfTransformer* transformerOf(Model& model) {
    auto* m = dynamic_cast<HfModel*>(model.impl());
    return m ? &m->transformer() : nullptr;
}

Status copyCompanionFiles(const QString& sourceDir, const QString& dir) {
    if (sourceDir.isEmpty())
        return success();
    for (const char* name :
         {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
          "vocab.json", "merges.txt", "generation_config.json", "chat_template.jinja"}) {
        const QString from = QDir(sourceDir).filePath(QLatin1String(name));
        if (!QFileInfo(from).isFile())
            continue;
        const QString to = QDir(dir).filePath(QLatin1String(name));
        QFile::remove(to);
        if (!QFile::copy(from, to))
            return Error{ErrorCode::Io, QStringLiteral("cannot copy %1 to %2").arg(from, dir)};
    }
    return success();
}

} // namespace tandem
