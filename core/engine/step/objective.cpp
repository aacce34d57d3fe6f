#include "engine/step/objective.h"

#include "engine/step/batch.h"
#include "engine/step/preference.h"

#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tandem {

namespace {

QString shapeText(at::IntArrayRef s) {
    QStringList parts;
    for (int64_t d : s)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString dtypeText(const at::Tensor& t) {
    return QString::fromLatin1(c10::toString(t.scalar_type())).toLower();
}

Error refuse(const QString& text) {
    return makeError(ErrorCode::Incompatible, text);
}

// The target as the output's shape when both hold one value per element, so that a [B, 1]
// regression output meets a [B] target (and the reverse) without broadcasting to [B, B].
at::Tensor alignedTarget(const at::Tensor& output, const at::Tensor& target) {
    return output.sizes() == target.sizes() ? target : target.reshape(output.sizes());
}

Status checkCrossEntropy(const at::Tensor& out, const at::Tensor& y, const DatasetSplits& data,
                         const QString& modelName) {
    if (data.train.targets == Dataset::Targets::Values)
        return refuse(QStringLiteral("cross-entropy needs integer class or token targets, but %1 "
                                     "has float targets of shape %2; use --loss mse, l1, huber "
                                     "or bce")
                          .arg(data.description, shapeText(y.sizes())));
    std::vector<int64_t> want = y.sizes().vec();
    want.push_back(std::max(1, data.numClasses));
    if (out.dim() != y.dim() + 1 || out.sizes().slice(0, size_t(y.dim())) != y.sizes())
        return refuse(QStringLiteral("model %1 returns %2 (%3), but cross-entropy against the "
                                     "targets %4 (int64) of %5 needs %6: the targets' shape with "
                                     "one score per class last")
                          .arg(modelName, shapeText(out.sizes()), dtypeText(out),
                               shapeText(y.sizes()), data.description, shapeText(want)));
    if (out.size(-1) < data.numClasses)
        return refuse(
            QStringLiteral("model %1 returns %2 scores per %3, but %4 has %5 up to %6; "
                           "the model must score at least %7")
                .arg(modelName)
                .arg(out.size(-1))
                .arg(y.dim() > 1 ? QStringLiteral("position") : QStringLiteral("sample"),
                     data.description,
                     y.dim() > 1 ? QStringLiteral("token ids") : QStringLiteral("class indices"))
                .arg(data.numClasses - 1)
                .arg(data.numClasses));
    return success();
}

Status checkValues(LossKind loss, const at::Tensor& out, const at::Tensor& y,
                   const DatasetSplits& data, const QString& modelName) {
    if (data.train.targets != Dataset::Targets::Values)
        return refuse(QStringLiteral("--loss %1 compares numbers, but %2 has integer %3 of shape "
                                     "%4; use --loss cross-entropy, or give float targets")
                          .arg(nameOf(loss), data.description,
                               data.train.targets == Dataset::Targets::Class
                                   ? QStringLiteral("class labels")
                                   : QStringLiteral("ids"),
                               shapeText(y.sizes())));
    if (out.numel() != y.numel())
        return refuse(QStringLiteral("model %1 returns %2, but the targets of %3 are %4; --loss "
                                     "%5 compares them element by element, so the model must "
                                     "return %4")
                          .arg(modelName, shapeText(out.sizes()), data.description,
                               shapeText(y.sizes()), nameOf(loss)));
    if (loss == LossKind::Bce)
        for (const Dataset* split : {&data.train, &data.test})
            for (float v : split->values)
                if (!(v >= 0.f && v <= 1.f))
                    return refuse(QStringLiteral("--loss bce needs targets between 0 and 1, but "
                                                 "%1 holds %2; use --loss mse for other values")
                                      .arg(data.description)
                                      .arg(double(v)));
    return success();
}

Status checkModelLoss(const Model& model, const at::Tensor& out, const at::Tensor& y,
                      const QString& modelName) {
    if (!model.hasLoss())
        return refuse(QStringLiteral("model %1 has no method loss(self, output: Tensor, target: "
                                     "Tensor) -> Tensor; define one with @torch.jit.export, or "
                                     "choose another --loss")
                          .arg(modelName));
    try {
        const at::Tensor v = model.loss(out, y);
        if (v.numel() != 1 || !v.is_floating_point())
            throw NotOneTensor("tensor of " + std::to_string(v.numel()) + " values");
    } catch (const NotOneTensor&) {
        return refuse(QStringLiteral("model %1's loss(output, target) must return one "
                                     "floating-point number as a tensor")
                          .arg(modelName));
    } catch (const std::exception& e) {
        return refuse(
            QStringLiteral("model %1's loss(output, target) fails on output %2 and "
                           "targets %3: %4")
                .arg(modelName, shapeText(out.sizes()), shapeText(y.sizes()), firstLine(e)));
    }
    return success();
}

// The loss over parts of the rows; the backward pass recomputes each part's softmax from the
// logits and the log-sum-exp the forward pass kept (one fp32 value a row).
struct ChunkedCrossEntropy : torch::autograd::Function<ChunkedCrossEntropy> {
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                              const at::Tensor& target, int64_t rows) {
        const int64_t n = logits.size(0);
        at::Tensor total = at::zeros({}, logits.options().dtype(at::kFloat));
        std::vector<at::Tensor> lse;
        for (int64_t from = 0; from < n; from += rows) {
            const int64_t m = std::min(rows, n - from);
            const at::Tensor f = logits.narrow(0, from, m).to(at::kFloat);
            const at::Tensor t = target.narrow(0, from, m);
            const at::Tensor kept = t.ne(kIgnoredTarget);
            const at::Tensor l = at::logsumexp(f, {1});
            const at::Tensor picked = f.gather(1, t.clamp_min(0).unsqueeze(1)).squeeze(1);
            total.add_(l.sub(picked).mul(kept).sum());
            lse.push_back(l);
        }
        ctx->save_for_backward({logits, target, at::cat(lse)});
        ctx->saved_data["rows"] = rows;
        return total;
    }

    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor& logits = saved[0];
        const at::Tensor& target = saved[1];
        const at::Tensor& lse = saved[2];
        const int64_t rows = ctx->saved_data["rows"].toInt();
        const at::Tensor g = grads[0].to(at::kFloat);
        at::Tensor out = at::empty_like(logits);
        const int64_t n = logits.size(0);
        for (int64_t from = 0; from < n; from += rows) {
            const int64_t m = std::min(rows, n - from);
            const at::Tensor t = target.narrow(0, from, m);
            const at::Tensor kept = t.ne(kIgnoredTarget).to(at::kFloat).unsqueeze(1);
            // softmax - one-hot, on the rows that count, times the loss's gradient
            at::Tensor p = logits.narrow(0, from, m)
                               .to(at::kFloat)
                               .sub_(lse.narrow(0, from, m).unsqueeze(1))
                               .exp_();
            p.scatter_add_(1, t.clamp_min(0).unsqueeze(1), kept.neg());
            out.narrow(0, from, m).copy_(p.mul_(kept).mul_(g));
        }
        return {out, at::Tensor(), at::Tensor()};
    }
};

} // namespace

at::Tensor chunkedCrossEntropySum(const at::Tensor& logits, const at::Tensor& target,
                                  int64_t rows) {
    return ChunkedCrossEntropy::apply(logits, target, std::max<int64_t>(1, rows));
}

int64_t crossEntropyRows(int64_t vocab) {
    return std::max<int64_t>(1, (int64_t(64) << 20) / (4 * std::max<int64_t>(1, vocab)));
}

Task taskOf(LossKind loss, Dataset::Targets targets) {
    switch (loss) {
    case LossKind::Auto:
    case LossKind::CrossEntropy:
        return targets == Dataset::Targets::Ids ? Task::Sequence : Task::Classification;
    case LossKind::Mse:
    case LossKind::L1:
    case LossKind::Huber:
        return Task::Regression;
    case LossKind::Bce:
        return Task::MultiLabel;
    case LossKind::Model:
        return Task::Custom;
    case LossKind::Dpo:
    case LossKind::Orpo:
        return Task::Preference;
    }
    return Task::Custom;
}

bool holdsPairs(const Dataset& d) {
    return d.integerInputs() && d.targets == Dataset::Targets::Ids && d.sampleShape.size() == 2 &&
           d.sampleShape[0] == 2 && d.targetShape == d.sampleShape;
}

namespace {

// Pairs [B, 2, ...] as 2B rows, the B chosen first.
at::Tensor pairRows(const at::Tensor& t) {
    std::vector<int64_t> shape = t.sizes().vec();
    shape.erase(shape.begin());
    shape[0] = 2 * t.size(0);
    return t.transpose(0, 1).reshape(shape);
}

Status checkPreference(LossKind loss, const DatasetSplits& data) {
    if (!holdsPairs(data.train) || !holdsPairs(data.test))
        return refuse(QStringLiteral("--loss %1 trains on preference pairs, but %2 holds none; "
                                     "use prefs:FILE (a JSON object a line with \"prompt\", "
                                     "\"chosen\" and \"rejected\")")
                          .arg(nameOf(loss), data.description));
    return success();
}

} // namespace

at::Tensor countedRows(const Objective& objective, const Model& model, const at::Tensor& target) {
    const bool crossEntropy =
        objective.loss == LossKind::Auto || objective.loss == LossKind::CrossEntropy;
    if (objective.task != Task::Sequence || !crossEntropy || !model.outputsAtRows() ||
        !target.defined() || !target.device().is_cpu() || target.dim() != 2 ||
        target.scalar_type() != at::kLong)
        return {};
    const at::Tensor kept = target.reshape({-1}).ne(kIgnoredTarget);
    const at::Tensor rows = kept.nonzero().reshape({-1});
    // Every position counted: the whole output, as it is.
    return rows.numel() < kept.numel() ? rows : at::Tensor();
}

ObjectiveOutput objectiveForward(const Objective& objective, const Model& model,
                                 const at::Tensor& x, const float* referenceRows,
                                 const at::Tensor& counted) {
    if (objective.task != Task::Preference && counted.defined()) {
        ObjectiveOutput out;
        out.output = model.forwardAt(x, counted);
        out.rows = counted;
        return out;
    }
    if (objective.task != Task::Preference)
        return {model.forward(x), {}, {}};
    const at::Tensor rows = pairRows(x);
    ObjectiveOutput out;
    if (objective.loss == LossKind::Dpo && model.hasAdapters()) {
        at::NoGradGuard noGrad;
        out.reference = model.forwardBase(rows);
    } else if (objective.loss == LossKind::Dpo) {
        if (!referenceRows)
            throw std::logic_error("DPO without adapters needs the reference's log-probabilities");
        // Two a pair (chosen, rejected) as the batch's rows hold them: every chosen first.
        const int64_t n = x.size(0);
        std::vector<float> ordered(size_t(2 * n));
        for (int64_t i = 0; i < n; ++i) {
            ordered[size_t(i)] = referenceRows[2 * i];
            ordered[size_t(n + i)] = referenceRows[2 * i + 1];
        }
        out.referenceLogps = at::tensor(ordered, at::kFloat).to(x.device());
    }
    out.output = model.forward(rows);
    return out;
}

std::vector<float> referenceRowsOf(const std::vector<float>& table,
                                   const std::vector<int64_t>& samples) {
    std::vector<float> rows;
    rows.reserve(2 * samples.size());
    for (int64_t s : samples) {
        rows.push_back(table.at(size_t(2 * s)));
        rows.push_back(table.at(size_t(2 * s + 1)));
    }
    return rows;
}

std::vector<float> referenceLogps(const Model& model, const Dataset& pairs, int batch,
                                  const std::function<void(int64_t, int64_t)>& progress) {
    at::NoGradGuard noGrad;
    model.eval();
    c10::Device device(at::kCPU);
    for (const auto& [name, value] : model.parameters()) {
        device = value.device();
        break;
    }
    // As the evaluation does: one pair first, to learn the logits' size, then batches whose
    // logits stay under 2^25 values (a 152 k vocabulary's would otherwise take gigabytes).
    constexpr int64_t kMaxOutputValues = int64_t(1) << 25;
    std::vector<float> table(size_t(2 * pairs.count()));
    std::vector<int64_t> idx;
    int64_t step = 1;
    for (int64_t from = 0; from < pairs.count(); from += int64_t(idx.size())) {
        idx.clear();
        for (int64_t i = from; i < std::min(pairs.count(), from + step); ++i)
            idx.push_back(i);
        const at::Tensor x = pairRows(gatherInputs(pairs, idx).to(device));
        const at::Tensor y = pairRows(gatherTargets(pairs, idx).to(device));
        const at::Tensor logits = model.forward(x);
        const at::Tensor sums = sequenceLogps(logits, y).sum.to(at::kCPU).contiguous();
        const auto n = int64_t(idx.size());
        step = std::clamp<int64_t>(kMaxOutputValues / std::max<int64_t>(1, logits.numel() / n), 1,
                                   std::max(1, batch));
        for (int64_t i = 0; i < n; ++i) {
            table[size_t(2 * idx[size_t(i)])] = sums[i].item<float>();
            table[size_t(2 * idx[size_t(i)] + 1)] = sums[n + i].item<float>();
        }
        if (progress)
            progress(from + n, pairs.count());
    }
    model.train();
    return table;
}

Expected<Objective> resolveObjective(LossKind asked, const Model& model, const DatasetSplits& data,
                                     const QString& modelName) {
    const int64_t n = std::min<int64_t>(2, data.train.count());
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < n; ++i)
        idx.push_back(i);
    at::Tensor x = gatherInputs(data.train, idx);
    at::Tensor y = gatherTargets(data.train, idx);
    if (holdsPairs(data.train)) {
        x = pairRows(x);
        y = pairRows(y);
    }
    if (model.kind() == ModelKind::Transformer && x.dim() == 2 && y.sizes() == x.sizes()) {
        // Windows of tokens: a few positions of one say what the model's output is, where
        // whole windows through an 8B base would take minutes before the run starts.
        const int64_t t = std::min<int64_t>(x.size(1), 4);
        x = x.narrow(0, 0, 1).narrow(1, 0, t);
        y = y.narrow(0, 0, 1).narrow(1, 0, t);
    }
    at::Tensor out;
    try {
        at::NoGradGuard noGrad;
        model.eval();
        out = model.forward(x);
        model.train();
    } catch (const NotOneTensor& e) {
        model.train();
        return refuse(QStringLiteral("model %1 must return one tensor (scores, logits or "
                                     "values); it returns a %2")
                          .arg(modelName, QString::fromStdString(e.kind)));
    } catch (const std::exception& e) {
        model.train();
        // Token ids beyond a model's embedding fail inside it, with LibTorch's words.
        const QString ids = data.train.integerInputs() && data.numClasses > 0
                                ? QStringLiteral(" (ids up to %1: does the model embed at least "
                                                 "%2 tokens?)")
                                      .arg(data.numClasses - 1)
                                      .arg(data.numClasses)
                                : QString();
        return refuse(QStringLiteral("model %1 cannot take inputs of shape %2 (%3) from %4%5: %6")
                          .arg(modelName, shapeText(x.sizes()), dtypeText(x), data.description, ids,
                               firstLine(e)));
    }
    LossKind loss = asked;
    if (loss == LossKind::Auto && holdsPairs(data.train)) {
        loss = LossKind::Dpo;
    } else if (loss == LossKind::Auto) {
        if (model.hasLoss())
            loss = LossKind::Model;
        else
            loss = data.train.targets == Dataset::Targets::Values ? LossKind::Mse
                                                                  : LossKind::CrossEntropy;
    }
    Status st = success();
    switch (loss) {
    case LossKind::Auto:
    case LossKind::CrossEntropy:
        st = checkCrossEntropy(out, y, data, modelName);
        break;
    case LossKind::Mse:
    case LossKind::L1:
    case LossKind::Huber:
    case LossKind::Bce:
        st = checkValues(loss, out, y, data, modelName);
        break;
    case LossKind::Model:
        st = checkModelLoss(model, out.detach().to(at::kFloat), y, modelName);
        break;
    case LossKind::Dpo:
    case LossKind::Orpo:
        st = checkPreference(loss, data);
        if (st)
            st = checkCrossEntropy(out, y, data, modelName);
        break;
    }
    if (!st)
        return st.error();
    if (loss != LossKind::Dpo && loss != LossKind::Orpo && holdsPairs(data.train))
        return refuse(QStringLiteral("%1 holds preference pairs, which --loss %2 cannot train "
                                     "on; use --loss dpo or orpo")
                          .arg(data.description, nameOf(loss)));
    return Objective{loss, taskOf(loss, data.train.targets)};
}

BatchLoss batchLoss(const Objective& objective, const Model& model, const ObjectiveOutput& output,
                    const at::Tensor& target) {
    if (output.rows.defined())
        return batchLoss(objective, model, output.output,
                         target.reshape({-1}).index_select(0, output.rows));
    if (objective.task != Task::Preference)
        return batchLoss(objective, model, output.output, target);
    const at::Tensor rows = pairRows(target);
    const SequenceLogps policy = sequenceLogps(output.output, rows);
    const auto reference = [&] {
        return output.referenceLogps.defined() ? SequenceLogps{output.referenceLogps, {}}
                                               : sequenceLogps(output.reference, rows);
    };
    const PreferenceLoss l = objective.loss == LossKind::Dpo
                                 ? dpoLoss(policy, reference(), objective.beta)
                                 : orpoLoss(policy, objective.beta);
    BatchLoss b;
    b.loss = l.loss;
    b.correct = l.chosenRewards.gt(l.rejectedRewards).sum();
    b.counted = at::scalar_tensor(target.size(0), b.correct.options());
    b.pairSums = at::stack({l.chosenRewards.sum(), l.rejectedRewards.sum(),
                            (l.chosenRewards - l.rejectedRewards).sum(), l.chosenLogps.sum(),
                            l.rejectedLogps.sum()})
                     .to(at::kFloat);
    return b;
}

BatchLoss batchLoss(const Objective& objective, const Model& model, const at::Tensor& output,
                    const at::Tensor& target) {
    BatchLoss b;
    const bool crossEntropy =
        objective.loss == LossKind::Auto || objective.loss == LossKind::CrossEntropy;
    if (crossEntropy) {
        // Over the last dimension: [B, C] against [B], or [B, T, V] against [B, T]; positions
        // whose target is -100 count for nothing, as in PyTorch. In fp32, as autocast computes
        // log_softmax anyway; logits larger than a part of rows are taken a part at a time.
        const at::Tensor logits = output.reshape({-1, output.size(-1)});
        const at::Tensor t = target.reshape({-1});
        const at::Tensor kept = t.ne(kIgnoredTarget);
        b.counted = kept.sum();
        const int64_t rows = crossEntropyRows(logits.size(1));
        const at::Tensor sum = logits.size(0) > rows
                                   ? chunkedCrossEntropySum(logits, t, rows)
                                   : at::nll_loss(at::log_softmax(logits.to(at::kFloat), 1), t, {},
                                                  at::Reduction::Sum, kIgnoredTarget);
        b.loss = sum.div(b.counted.clamp_min(1));
        b.correct = logits.argmax(1).eq(t).logical_and(kept).sum();
        return b;
    }
    // The loss in fp32, as autocast computes the losses anyway.
    const at::Tensor out = output.to(at::kFloat);
    switch (objective.loss) {
    case LossKind::Auto:
    case LossKind::CrossEntropy:
        break;
    case LossKind::Mse:
        b.loss = at::mse_loss(out, alignedTarget(out, target));
        break;
    case LossKind::L1:
        b.loss = at::l1_loss(out, alignedTarget(out, target));
        break;
    case LossKind::Huber:
        b.loss = at::huber_loss(out, alignedTarget(out, target), at::Reduction::Mean, 1.0);
        break;
    case LossKind::Bce: {
        const at::Tensor t = alignedTarget(out, target);
        b.loss = at::binary_cross_entropy_with_logits(out, t);
        b.correct = out.gt(0).eq(t.gt(0.5)).sum();
        b.counted = at::scalar_tensor(t.numel(), t.options().dtype(at::kLong));
        break;
    }
    case LossKind::Model:
        b.loss = model.loss(out, target).to(at::kFloat).reshape({});
        break;
    case LossKind::Dpo:
    case LossKind::Orpo:
        throw std::logic_error("a preference loss needs objectiveForward()'s output");
    }
    return b;
}

PairFigures pairFiguresOf(const at::Tensor& sums, int64_t pairs) {
    const at::Tensor s = sums.to(at::kCPU).to(at::kDouble).contiguous();
    PairFigures f;
    for (int i = 0; i < PairFigures::kCount && i < s.numel(); ++i)
        f.sums[size_t(i)] = s[i].item<double>();
    f.pairs = pairs;
    return f;
}

void Evaluation::add(const Model& model, const at::Tensor& output, const at::Tensor& target) {
    add(model, ObjectiveOutput{output, {}}, target);
}

void Evaluation::add(const Model& model, const ObjectiveOutput& output, const at::Tensor& target) {
    const BatchLoss b = batchLoss(m_objective, model, output, target);
    const int64_t correct = b.correct.defined() ? b.correct.item<int64_t>() : 0;
    const int64_t counted = b.counted.defined() ? b.counted.item<int64_t>() : 0;
    // A sequence's loss is a mean over the positions counted, so batches weigh by those; every
    // other loss is a mean over the batch.
    const double weight = m_objective.task == Task::Sequence     ? double(counted)
                          : m_objective.task == Task::Preference ? double(target.size(0))
                                                                 : double(output.output.size(0));
    m_lossSum += b.loss.item<double>() * weight;
    m_weight += weight;
    m_correct += correct;
    m_counted += counted;
    if (b.pairSums.defined())
        m_pairs.add(pairFiguresOf(b.pairSums, counted));
    if (m_objective.task == Task::Regression) {
        const at::Tensor out = output.output.to(at::kDouble);
        const at::Tensor t = alignedTarget(out, target).to(at::kDouble);
        const at::Tensor err = out.sub(t);
        m_n += double(t.numel());
        m_sum += t.sum().item<double>();
        m_sumSq += t.square().sum().item<double>();
        m_sse += err.square().sum().item<double>();
        m_sae += err.abs().sum().item<double>();
    }
}

TestMetrics Evaluation::result() const {
    TestMetrics m;
    m.evaluated = true;
    m.loss = m_weight > 0 ? m_lossSum / m_weight : 0;
    m.pairs = m_pairs;
    switch (m_objective.task) {
    case Task::Classification:
    case Task::MultiLabel:
    case Task::Preference:
        m.accuracy = m_counted > 0 ? double(m_correct) / double(m_counted) : 0;
        break;
    case Task::Sequence:
        m.accuracy = m_counted > 0 ? double(m_correct) / double(m_counted) : 0;
        m.perplexity = std::exp(m.loss);
        break;
    case Task::Regression: {
        // R² = 1 - SSE / SST, SST the targets' squared deviation from their own mean. Targets
        // that do not vary leave it undefined.
        const double sst = m_sumSq - (m_n > 0 ? m_sum * m_sum / m_n : 0);
        if (sst > 0)
            m.r2 = 1.0 - m_sse / sst;
        m.mae = m_n > 0 ? m_sae / m_n : 0;
        break;
    }
    case Task::Custom:
        break;
    }
    return m;
}

} // namespace tandem
