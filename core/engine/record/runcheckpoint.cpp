#include "engine/record/runcheckpoint.h"

#include "engine/step/basepack.h"
#include "model/model.h"
#include "model/openmodel.h"
#include "net/identity.h"

#include <QDir>
#include <QJsonArray>

#include <set>

namespace tandem {

namespace {
const QString kParam = QStringLiteral("param/");
const QString kBuffer = QStringLiteral("buffer/");
const QString kOptim = QStringLiteral("optim/");
const QString kArchive = QStringLiteral("model.torchscript");
const QString kHfArchive = QStringLiteral("model.hf");
QJsonObject lastTestJson(const TestMetrics& t) {
    QJsonObject o;
    t.writeTo(o);
    return o;
}

} // namespace

Status writeRunCheckpoint(const QString& path, const Model& module, const Optimizer& optimizer,
                          const RunState& state) {
    QList<LazyTensor> optimizerState;
    for (const auto& [name, value] : optimizer.stateTensors())
        optimizerState << toLazy(name, value);
    return writeRunCheckpoint(path, module, optimizerState, optimizer.stepCount(), state);
}

Status writeRunCheckpoint(const QString& path, const Model& module,
                          const QList<LazyTensor>& optimizerState, int64_t optimizerSteps,
                          const RunState& s) {
    TensorFile f;
    f.meta = QJsonObject{
        {QStringLiteral("kind"), QStringLiteral("tandem-run")},
        {QStringLiteral("config"), s.config.toJson()},
        {QStringLiteral("step"), static_cast<qint64>(s.step)},
        {QStringLiteral("epoch"), s.epoch},
        {QStringLiteral("position"), static_cast<qint64>(s.position)},
        {QStringLiteral("completed_epochs"), s.completedEpochs},
        {QStringLiteral("epoch_loss_sum"), s.epochLossSum},
        {QStringLiteral("epoch_correct"), static_cast<qint64>(s.epochCorrect)},
        {QStringLiteral("epoch_counted"), static_cast<qint64>(s.epochCounted)},
        {QStringLiteral("epoch_samples"), static_cast<qint64>(s.epochSamples)},
        {QStringLiteral("epoch_steps"), static_cast<qint64>(s.epochSteps)},
        {QStringLiteral("last_test"), lastTestJson(s.lastTest)},
        {QStringLiteral("dataset_hash"), s.datasetHash},
        {QStringLiteral("schema_hash"), s.schemaHash},
        {QStringLiteral("optimizer_steps"), static_cast<qint64>(optimizerSteps)},
        {QStringLiteral("model_source"), ModelSource::parse(s.config.model).isBuiltIn()
                                             ? QStringLiteral("zoo")
                                             : QStringLiteral("archive")},
    };
    // Each tensor is turned into bytes only when the writer reaches it: writing a checkpoint
    // never holds a second copy of the model or its optimizer state.
    // A contiguous CPU tensor's bytes are written where they lie, not copied first.
    auto add = [&f](const QString& prefix, const std::string& name, const at::Tensor& t) {
        LazyTensor l = toLazy(name, t);
        l.name.prepend(prefix);
        f.lazy.append(std::move(l));
    };
    std::set<std::string> base;
    if (!s.baseHash.isEmpty()) {
        f.meta.insert(QStringLiteral("base_manifest"), QString::fromLatin1(s.baseManifest));
        f.meta.insert(QStringLiteral("base_hash"), s.baseHash);
        const ModelTensors t = modelTensors(module);
        base.insert(t.frozenNames.begin(), t.frozenNames.end());
    }
    for (const auto& [name, value] : module.parameters())
        if (!base.count(name))
            add(kParam, name, value);
    for (const auto& [name, value] : module.buffers())
        add(kBuffer, name, value);
    for (LazyTensor l : optimizerState) {
        l.name.prepend(kOptim);
        f.lazy.append(std::move(l));
    }
    // The weights are the records above: a native transformer's archive holds only its
    // structure. A TorchScript archive is its code and cannot leave its weights out.
    if (!ModelSource::parse(s.config.model).isBuiltIn()) {
        auto archive = module.archive(/*withWeights=*/false);
        if (!archive)
            return archive.error();
        f.blobs.insert(module.kind() == ModelKind::Transformer ? kHfArchive : kArchive, *archive);
    }
    return writeCheckpoint(path, f);
}

namespace {

// Where the run stood: its step, epoch, position, sums and last test figures.
Status readCounters(const QJsonObject& m, const QString& path, LoadedCheckpoint& out) {
    RunState& s = out.state;
    auto i64 = [&](const char* k) {
        return static_cast<int64_t>(m.value(QLatin1String(k)).toDouble());
    };
    s.step = i64("step");
    s.epoch = static_cast<int>(i64("epoch"));
    s.position = i64("position");
    s.completedEpochs = static_cast<int>(i64("completed_epochs"));
    s.epochLossSum = m.value(QStringLiteral("epoch_loss_sum")).toDouble();
    s.epochCorrect = i64("epoch_correct");
    // Checkpoints from before other objectives counted accuracy over samples.
    s.epochCounted =
        m.contains(QStringLiteral("epoch_counted")) ? i64("epoch_counted") : i64("epoch_samples");
    s.epochSamples = i64("epoch_samples");
    s.epochSteps = i64("epoch_steps");
    if (m.contains(QStringLiteral("last_test"))) {
        s.lastTest = TestMetrics::readFrom(m.value(QStringLiteral("last_test")).toObject());
    } else if (m.value(QStringLiteral("last_test_accuracy")).toDouble(-1) >= 0) {
        s.lastTest.evaluated = true;
        s.lastTest.accuracy = m.value(QStringLiteral("last_test_accuracy")).toDouble();
        s.lastTest.loss = m.value(QStringLiteral("last_test_loss")).toDouble();
    }
    s.datasetHash = m.value(QStringLiteral("dataset_hash")).toString();
    s.schemaHash = m.value(QStringLiteral("schema_hash")).toString();
    s.baseManifest = m.value(QStringLiteral("base_manifest")).toString().toLatin1();
    s.baseHash = m.value(QStringLiteral("base_hash")).toString();
    out.optimizerSteps = i64("optimizer_steps");
    if (s.step < 0 || s.epoch < 0 || s.position < 0 || s.completedEpochs < 0 ||
        out.optimizerSteps < 0)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: negative step or epoch counts").arg(path));
    return success();
}

// The frozen base a checkpoint names: the folder the run was trained from, opened as the run
// opened it, when its base has the same hash (then `pack` is that base, its parts hashed); else
// this machine's model cache.
Expected<NamedTensors> findBase(const RunState& s, const QString& path,
                                std::shared_ptr<const BasePack>* pack) {
    auto manifest = BaseManifest::parse(s.baseManifest, s.baseHash);
    if (!manifest)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: %2").arg(path, manifest.error().message));
    const ModelSource source = ModelSource::parse(s.config.model);
    QString found = QStringLiteral("is gone");
    if (source.isHf() && QDir(source.path).exists()) {
        auto model =
            openModel(source, {s.config.lora, s.config.checkpointActivations, s.config.seed});
        if (model)
            *pack = BasePack::withHash(*model, s.baseHash);
        if (*pack)
            return (*pack)->tensors();
        found = model ? QStringLiteral("holds other weights now")
                      : QStringLiteral("cannot be read (%1)").arg(model.error().message);
    }
    const BaseCache cache = BaseCache::of(QString(), nodeHome(s.config.home));
    if (auto cached = cache.find(*manifest))
        return std::move(*cached);
    return makeError(ErrorCode::NotFound,
                     QStringLiteral("%1 holds the adapters of a base model (hash %2) that is not "
                                    "here: %3 %4, and the model cache %5 does not hold it. Put "
                                    "the folder back as it was when the run began, then resume")
                         .arg(path, s.baseHash.left(12), source.path, found, cache.dir()));
}

} // namespace

Expected<LoadedCheckpoint> loadRunCheckpoint(const QString& path) {
    // A tensor at a time: the weights go straight into the model, and the optimizer's state
    // stays in the file until the optimizer takes it.
    auto file = openCheckpoint(path);
    if (!file)
        return file.error();
    const QJsonObject m = file->meta;
    if (m.value(QStringLiteral("kind")).toString() != QLatin1String("tandem-run"))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is not a Tandem run checkpoint").arg(path));
    auto cfg = RunConfig::fromJson(m.value(QStringLiteral("config")).toObject());
    if (!cfg)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: %2").arg(path, cfg.error().message));

    LoadedCheckpoint out;
    RunState& s = out.state;
    s.config = *cfg;
    if (auto st = readCounters(m, path, out); !st)
        return st.error();

    if (const ModelSource source = ModelSource::parse(s.config.model); source.isBuiltIn()) {
        auto mod = openModel(source, ModelOptions{QString(), false, s.config.seed});
        if (!mod)
            return mod.error();
        out.module = *mod;
    } else {
        const QString key = file->blobs.contains(kHfArchive) ? kHfArchive : kArchive;
        if (!file->blobs.contains(key))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 does not hold its model").arg(path));
        std::optional<NamedTensors> base;
        if (!s.baseHash.isEmpty()) {
            auto found = findBase(s, path, &out.base);
            if (!found)
                return found.error();
            base = std::move(*found);
        }
        auto mod = modelFromArchive(file->blobs.value(key), path, base ? &*base : nullptr);
        if (!mod)
            return mod.error();
        out.module = *mod;
    }

    // Overwrite every parameter and buffer from the records; every one must be present with
    // the module's own shape.
    QHash<QString, const LazyTensor*> byName;
    for (const LazyTensor& r : file->lazy) {
        if (r.name.startsWith(kOptim)) {
            LazyTensor o = r;
            o.name.remove(0, kOptim.size());
            out.optimizerState << o;
        } else {
            byName.insert(r.name, &r);
        }
    }
    ModelTensors t = modelTensors(out.module);
    if (schemaHash(t) != s.schemaHash.toLatin1())
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("%1: the stored model's parameters do not match the "
                                        "checkpoint's schema")
                             .arg(path));
    at::NoGradGuard noGrad;
    auto fill = [&](const QString& prefix, const std::vector<std::string>& names,
                    std::vector<at::Tensor>& tensors) -> Status {
        for (size_t i = 0; i < names.size(); ++i) {
            const QString key = prefix + QString::fromStdString(names[i]);
            const LazyTensor* r = byName.value(key);
            if (!r)
                return makeError(ErrorCode::Corrupt,
                                 QStringLiteral("%1: %2 is missing").arg(path, key));
            auto v = readLazy(*r);
            if (!v)
                return makeError(v.error().code,
                                 QStringLiteral("%1: %2").arg(path, v.error().message));
            if (!v->sizes().equals(tensors[i].sizes()) ||
                v->scalar_type() != tensors[i].scalar_type())
                return makeError(
                    ErrorCode::Corrupt,
                    QStringLiteral("%1: %2 has the wrong shape or type").arg(path, key));
            tensors[i].copy_(*v);
        }
        return success();
    };
    if (auto st = fill(kParam, t.paramNames, t.params); !st)
        return st.error();
    // A base found by its hash is filled already.
    if (s.baseHash.isEmpty())
        if (auto st = fill(kParam, t.frozenNames, t.frozen); !st)
            return st.error();
    if (auto st = fill(kBuffer, t.bufferNames, t.buffers); !st)
        return st.error();
    return out;
}

} // namespace tandem
