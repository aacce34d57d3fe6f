#include "engine/modelcheck.h"

#include "engine/runcheckpoint.h"
#include "engine/scriptmodel.h"
#include "engine/training.h"
#include "engine/worker.h"

#include <QFileInfo>
#include <QThread>

#include <ATen/Parallel.h>

namespace tandem {

namespace {

QString shapeText(at::IntArrayRef s) {
    QStringList parts;
    for (int64_t d : s)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

} // namespace

QString firstLine(const std::exception& e) {
    QString m = QString::fromUtf8(e.what());
    const qsizetype nl = m.indexOf(QLatin1Char('\n'));
    return nl > 0 ? m.left(nl) : m;
}

Status checkModelFits(torch::jit::Module& module, const DatasetSplits& data,
                      const QString& modelName) {
    const int64_t n = std::min<int64_t>(2, data.train.count());
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < n; ++i)
        idx.push_back(i);
    at::Tensor x = gatherInputs(data.train, idx);
    try {
        at::NoGradGuard noGrad;
        module.eval();
        c10::IValue out = module.forward({x});
        module.train();
        if (!out.isTensor())
            return makeError(
                ErrorCode::Incompatible,
                QStringLiteral("model %1 must return one tensor of class scores").arg(modelName));
        const at::Tensor y = out.toTensor();
        if (y.dim() != 2 || y.size(0) != n || y.size(1) < data.numClasses)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("model %1 returns shape %2 for inputs of shape %3; "
                                            "it must return [batch, %4] class scores for %5")
                                 .arg(modelName, shapeText(y.sizes()), shapeText(x.sizes()))
                                 .arg(data.numClasses)
                                 .arg(data.description));
    } catch (const std::exception& e) {
        module.train();
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("model %1 cannot take inputs of shape %2 from %3: %4")
                             .arg(modelName, shapeText(x.sizes()), data.description, firstLine(e)));
    }
    return success();
}

bool hasRunningStats(const torch::jit::Module& module) {
    for (const auto& b : module.named_buffers(true))
        if (QString::fromStdString(b.name).endsWith(QLatin1String("running_mean")))
            return true;
    return false;
}

void refreshRunningStats(torch::jit::Module& module, const Dataset& train, int batch, int batches) {
    const int64_t n = train.count();
    if (n == 0 || batch <= 0 || batches <= 0)
        return;
    at::NoGradGuard noGrad;
    module.train();
    // A fixed, even spread through the split: the same samples every time, and every part of
    // it (the split may be sorted by class); a small split is gone through more than once.
    const int64_t total = int64_t(batch) * batches;
    const double stride = std::max(1.0, double(n) / double(total));
    std::vector<int64_t> idx;
    for (int64_t start = 0; start < total; start += batch) {
        idx.clear();
        for (int64_t i = start; i < std::min(total, start + batch); ++i)
            idx.push_back(int64_t(double(i) * stride) % n);
        module.forward({gatherInputs(train, idx)});
    }
}

std::pair<double, double> evaluate(torch::jit::Module& module, const Dataset& test, int batch) {
    at::NoGradGuard noGrad;
    module.eval();
    double lossSum = 0;
    int64_t correct = 0;
    std::vector<int64_t> idx;
    for (int64_t start = 0; start < test.count(); start += batch) {
        idx.clear();
        for (int64_t i = start; i < std::min(test.count(), start + batch); ++i)
            idx.push_back(i);
        at::Tensor x = gatherInputs(test, idx);
        at::Tensor y = gatherLabels(test, idx);
        at::Tensor logits = module.forward({x}).toTensor();
        lossSum +=
            at::nll_loss(at::log_softmax(logits, 1), y, {}, at::Reduction::Sum).item<double>();
        correct += logits.argmax(1).eq(y).sum().item<int64_t>();
    }
    module.train();
    const double n = double(std::max<int64_t>(1, test.count()));
    return {lossSum / n, double(correct) / n};
}

int setTorchThreads(int threads, QString* warning) {
    at::set_num_threads(threadsFor(threads, QThread::idealThreadCount(), warning));
    return at::get_num_threads();
}

Expected<RunConfig> checkpointConfig(const QString& checkpoint) {
    auto f = readCheckpoint(checkpoint);
    if (!f)
        return f.error();
    if (f->meta.value(QStringLiteral("kind")).toString() != QLatin1String("tandem-run"))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is not a Tandem run checkpoint").arg(checkpoint));
    return RunConfig::fromJson(f->meta.value(QStringLiteral("config")).toObject());
}

Expected<QString> checkRunInputs(const RunConfig& cfg) {
    auto data = loadDataset(cfg.data);
    if (!data)
        return about(data.error(), ErrorSubject::Dataset);
    auto m =
        isZooModel(cfg.model) ? buildZooModel(cfg.model, cfg.seed) : loadScriptModule(cfg.model);
    if (!m)
        return about(m.error(), ErrorSubject::Model);
    if (auto st = checkModelFits(*m, *data, cfg.model); !st)
        return about(st.error(), ErrorSubject::Model);
    int64_t parameters = 0;
    for (const at::Tensor& p : modelTensors(*m).params)
        parameters += p.numel();
    return QStringLiteral("%1: %2 parameters; %3: %4 training and %5 test samples, %6 classes")
        .arg(QFileInfo(cfg.model).fileName())
        .arg(parameters)
        .arg(data->description)
        .arg(data->train.count())
        .arg(data->test.count())
        .arg(data->numClasses);
}

} // namespace tandem
