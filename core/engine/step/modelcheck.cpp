#include "engine/step/modelcheck.h"

#include "common/clocktext.h"

#include "engine/record/runcheckpoint.h"
#include "engine/step/batch.h"
#include "engine/step/objective.h"
#include "engine/training.h"
#include "formats/tokenizer.h"
#include "model/ggufexport.h"
#include "model/hf/config.h"
#include "model/model.h"
#include "model/openmodel.h"
#include "model/tensormemory.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QThread>

#include <ATen/Parallel.h>

#include <algorithm>

namespace tandem {

bool hasRunningStats(const Model& model) {
    for (const auto& [name, value] : model.buffers())
        if (QString::fromStdString(name).endsWith(QLatin1String("running_mean")))
            return true;
    return false;
}

namespace {
// Where the model's weights are, for its inputs to go there too.
c10::Device deviceOf(const Model& model) {
    for (const auto& [name, value] : model.parameters())
        return value.device();
    return c10::Device(at::kCPU);
}
} // namespace

void refreshRunningStats(const Model& model, const Dataset& train, int batch, int batches) {
    const int64_t n = train.count();
    if (n == 0 || batch <= 0 || batches <= 0)
        return;
    at::NoGradGuard noGrad;
    const c10::Device device = deviceOf(model);
    model.train();
    // A fixed, even spread through the split: the same samples every time, and every part of
    // it (the split may be sorted by class); a small split is gone through more than once.
    const int64_t total = int64_t(batch) * batches;
    const double stride = std::max(1.0, double(n) / double(total));
    std::vector<int64_t> idx;
    for (int64_t start = 0; start < total; start += batch) {
        idx.clear();
        for (int64_t i = start; i < std::min(total, start + batch); ++i)
            idx.push_back(int64_t(double(i) * stride) % n);
        model.forward(gatherInputs(train, idx).to(device));
    }
}

TestMetrics evaluate(const Model& model, const Objective& objective, const Dataset& test, int batch,
                     const EvaluationProgress& progress) {
    // A language model's output is a vocabulary's logits per position: a thousand windows of
    // them at once would take tens of gigabytes. Batches are cut so that one's output stays
    // under this many values, from the size of the first sample's.
    constexpr int64_t kMaxOutputValues = int64_t(1) << 25;
    // Training's kept blocks are not this pass's sizes; what this pass leaves is not training's.
    releaseCachedTensorMemory();
    at::NoGradGuard noGrad;
    const c10::Device device = deviceOf(model);
    model.eval();
    Evaluation e(objective);
    std::vector<int64_t> idx;
    int64_t step = 1; // one sample first, to learn the output's size
    for (int64_t start = 0; start < test.count();) {
        idx.clear();
        for (int64_t i = start; i < std::min(test.count(), start + step); ++i)
            idx.push_back(i);
        std::vector<float> rows;
        if (objective.testReference)
            rows = referenceRowsOf(*objective.testReference, idx);
        // Only the positions the loss counts, where the model can compute those alone.
        const at::Tensor targets = gatherTargets(test, idx);
        const at::Tensor counted = countedRows(objective, model, targets);
        const ObjectiveOutput out = objectiveForward(
            objective, model, gatherInputs(test, idx).to(device),
            rows.empty() ? nullptr : rows.data(), counted.defined() ? counted.to(device) : counted);
        e.add(model, out, targets.to(device));
        start += int64_t(idx.size());
        if (progress)
            progress(start, test.count());
        // A sample's output as if every position were computed: the next batch's samples may
        // count more of theirs.
        const int64_t perSample = counted.defined() ? targets[0].numel() * out.output.size(-1)
                                                    : out.output.numel() / int64_t(idx.size());
        step = std::clamp<int64_t>(kMaxOutputValues / std::max<int64_t>(1, perSample), 1,
                                   std::max(1, batch));
    }
    model.train();
    releaseCachedTensorMemory();
    return e.result();
}

int setTorchThreads(int threads, QString* warning) {
    at::set_num_threads(threadsFor(threads, QThread::idealThreadCount(), warning));
    return at::get_num_threads();
}

Expected<RunConfig> checkpointConfig(const QString& checkpoint) {
    auto f = openCheckpoint(checkpoint); // its config, without holding its tensors
    if (!f)
        return f.error();
    if (f->meta.value(QStringLiteral("kind")).toString() != QLatin1String("tandem-run"))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is not a Tandem run checkpoint").arg(checkpoint));
    return RunConfig::fromJson(f->meta.value(QStringLiteral("config")).toObject());
}

Status checkModelFolder(const ModelSource& source) {
    if (!source.isHf())
        return success();
    const QString holds = QStringLiteral(
        "a Hugging Face model folder holds config.json, its weights (model.safetensors, or "
        "shards with model.safetensors.index.json) and tokenizer.json, as downloaded from the "
        "model's page");
    auto refuse = [&](const QString& what) {
        return Error{ErrorCode::NotFound, QStringLiteral("%1 %2; %3").arg(source.path, what, holds),
                     ErrorSubject::Model};
    };
    if (!QFileInfo(source.path).isDir())
        return refuse(QStringLiteral("is not a folder"));
    if (!QFileInfo::exists(QDir(source.path).filePath(QStringLiteral("config.json"))))
        return refuse(QStringLiteral("has no config.json"));
    if (QDir(source.path).entryList({QStringLiteral("*.safetensors")}, QDir::Files).isEmpty())
        return refuse(QStringLiteral("has no weights (no .safetensors file)"));
    return success();
}

Status checkContext(const ModelSource& source, const QString& dataSpec, const DatasetSplits* data) {
    if (!source.isHf())
        return success();
    int64_t context = 0;
    if (data) {
        if (data->train.targets != Dataset::Targets::Ids || data->train.sampleShape.empty())
            return success();
        context = data->train.sampleShape.back();
    } else {
        static const QRegularExpression asked(QStringLiteral(",context=(\\d+)"));
        const auto m = asked.match(dataSpec);
        if (!m.hasMatch())
            return success();
        context = m.captured(1).toLongLong();
    }
    auto config = readHfConfig(source.path);
    if (!config || config->maxPositions <= 0 || context <= config->maxPositions)
        return success(); // a config that cannot be read is the model's load to refuse
    return Error{ErrorCode::InvalidArgument,
                 QStringLiteral("a context of %1 tokens is longer than the %2 positions %3 reads "
                                "at once (max_position_embeddings in its config.json); choose a "
                                "context of %2 or less")
                     .arg(countText(context), countText(config->maxPositions), source.path),
                 ErrorSubject::Dataset};
}

Status checkRunExports(const QString& model, const QString& gguf) {
    GgufQuant quant;
    if (gguf.isEmpty() || !ggufQuantFromName(gguf, &quant))
        return success();
    if (auto size = ggufExportBytes(ModelSource::parse(model).path, {quant}); !size)
        return makeError(size.error().code,
                         QStringLiteral("--gguf %1: %2").arg(gguf, size.error().message));
    return success();
}

int proposedBatch(int64_t windows, int epochs) {
    return int(std::min<int64_t>(windows * std::max(epochs, 0) / kUsefulSteps, 1 << 20));
}

QString fewStepsWarning(int64_t windows, int batch, int epochs, int64_t maxSteps) {
    if (windows <= 0 || batch <= 0 || epochs <= 0)
        return {};
    const auto stepsWith = [&](int64_t b) { return (windows + b - 1) / b * epochs; };
    const int64_t steps = stepsWith(batch);
    if (steps >= kUsefulSteps || (maxSteps > 0 && maxSteps < steps))
        return {};
    const int64_t proposed = proposedBatch(windows, epochs);
    if (proposed < 1)
        return QStringLiteral("this run makes only %1 step(s): %2 training window(s) over %3 "
                              "epoch(s) are too few to learn from; use more text, a shorter "
                              "context or more epochs")
            .arg(steps)
            .arg(windows)
            .arg(epochs);
    return QStringLiteral("this run makes only %1 step(s) (%2 training windows in batches of %3, "
                          "%4 epoch(s)); a batch of %5 makes %6")
        .arg(steps)
        .arg(windows)
        .arg(batch)
        .arg(epochs)
        .arg(proposed)
        .arg(stepsWith(proposed));
}

namespace {

// The first pair of preference data as the model reads it: the prompt as its tokens say it
// (special tokens and the chat template's markup shown), then each answer's tokens, the ones
// its loss counts.
QString pairPreview(const Dataset& d, const Tokenizer& tok) {
    const int64_t t = d.sampleShape[1];
    QStringList rows;
    for (int side = 0; side < 2; ++side) {
        const int64_t* in = d.i64.data() + side * t;
        const int64_t* target = d.labels.data() + side * t;
        std::vector<int32_t> prompt, answer;
        // The input up to the position whose target is the answer's first token.
        for (int64_t k = 0; k < t; ++k) {
            if (answer.empty())
                prompt.push_back(int32_t(in[k]));
            if (target[k] != kIgnoredTarget)
                answer.push_back(int32_t(target[k]));
        }
        if (side == 0)
            rows << QStringLiteral("prompt «%1»").arg(QString::fromUtf8(tok.decode(prompt)));
        rows << QStringLiteral("%1 «%2»").arg(side == 0 ? QStringLiteral("chosen")
                                                        : QStringLiteral("rejected"),
                                              QString::fromUtf8(tok.decode(answer)));
    }
    return QStringLiteral("the first pair as the model reads it: ") +
           rows.join(QStringLiteral("; "));
}

// What the samples' targets are, in words. A tokenizer's ids may be fewer than the model's
// output rows (Llama 3's 128,256 rows, its tokenizer's 128,010 ids): each number is named.
QString targetsText(const ModelSource& source, const DatasetSplits& data) {
    if (data.train.targets == Dataset::Targets::Values)
        return QStringLiteral("float targets");
    if (data.train.targets != Dataset::Targets::Ids)
        return QStringLiteral("%1 classes").arg(countText(data.numClasses));
    const auto config = source.isHf() ? readHfConfig(source.path) : Expected<HfConfig>(HfConfig{});
    const int64_t rows = config ? config->vocab : 0;
    if (rows > 0 && rows != data.numClasses)
        return QStringLiteral("token ids below %1 (the tokenizer's; the model's output has %2 "
                              "rows)")
            .arg(countText(data.numClasses), countText(rows));
    return QStringLiteral("a vocabulary of %1 tokens").arg(countText(data.numClasses));
}

} // namespace

Expected<RunCheck> checkRunInputs(const RunConfig& cfg) {
    const ModelSource source = ModelSource::parse(cfg.model);
    if (auto st = checkModelFolder(source); !st)
        return st.error();
    // The exports it asks for at its end, as the run itself checks them before it loads.
    if (auto st = checkRunExports(cfg.model, cfg.gguf); !st)
        return about(st.error(), ErrorSubject::Model);
    if (auto st = checkContext(source, cfg.data); !st)
        return st.error();
    auto data = loadDataset(cfg.data, source.isHf() ? source.path : QString());
    if (!data)
        return about(data.error(), ErrorSubject::Dataset);
    if (auto st = checkContext(source, cfg.data, &*data); !st)
        return st.error();
    auto m = openModel(source, {cfg.lora, cfg.checkpointActivations, cfg.seed});
    if (!m)
        return about(m.error(), ErrorSubject::Model);
    auto objective = resolveObjective(cfg.loss, *m, *data, cfg.model);
    if (!objective)
        return about(objective.error(), ErrorSubject::Model);
    const ModelTensors t = modelTensors(*m);
    const QString frozen = t.frozenCount() > 0
                               ? QStringLiteral(" (%1 frozen)").arg(countText(t.frozenCount()))
                               : QString();
    RunCheck check;
    check.summary =
        QStringLiteral("%1: %2 trainable parameters%3; %4: %5 training and %6 test samples, "
                       "%7; loss %8 (%9)")
            .arg(source.isHf() ? cfg.model : QFileInfo(source.path).fileName(),
                 countText(t.trainableCount()), frozen, data->description,
                 countText(data->train.count()), countText(data->test.count()),
                 targetsText(source, *data), nameOf(objective->loss), nameOf(objective->task));
    if (holdsPairs(data->train) && data->train.count() > 0 && source.isHf())
        if (auto tok = Tokenizer::fromFolder(source.path))
            check.preview = pairPreview(data->train, **tok);
    if (data->train.targets == Dataset::Targets::Ids) {
        int64_t windows = data->train.count();
        if (cfg.limitTrain > 0)
            windows = std::min<int64_t>(windows, cfg.limitTrain);
        check.warning = fewStepsWarning(windows, cfg.batch, cfg.epochs, cfg.maxSteps);
        if (!check.warning.isEmpty())
            check.proposedBatch = proposedBatch(windows, cfg.epochs);
    }
    return check;
}

} // namespace tandem
