// What a step minimises and what the figures mean: the loss `auto` picks from a model's output
// and the data's targets, every refusal of a model and data that do not fit, each loss against
// its formula, the test figures (accuracy, perplexity, R², MAE), and parameters left frozen.

#include "engine/modes/rounds.h"
#include "engine/record/runcheckpoint.h"
#include "engine/step/batch.h"
#include "engine/step/modelcheck.h"
#include "engine/step/objective.h"
#include "engine/step/preference.h"
#include "engine/step/replica.h"
#include "engine/wire/workwire.h"
#include "formats/tokenstream.h"
#include "model/scriptmodel.h"
#include "testpaths.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <ATen/Parallel.h>

#include <cmath>

using namespace tandem;
using torch::jit::Module;

namespace {

// A model's parameter by name.
at::Tensor param(const Model& m, const char* name) {
    for (const auto& [n, t] : m.parameters())
        if (n == name)
            return t;
    return {};
}

int g_class = 0;

Module scripted(const std::string& source,
                std::initializer_list<std::pair<const char*, at::Tensor>> params) {
    Module m(c10::QualifiedName("__torch__.test.M" + std::to_string(g_class++)));
    m.register_attribute("training", c10::BoolType::get(), true);
    for (const auto& [name, value] : params)
        m.register_parameter(name, value.clone().requires_grad_(true), false);
    m.define(source);
    return m;
}

// [B, 4] floats to [B, 3] class scores.
Module classifier() {
    at::manual_seed(1);
    return scripted("def forward(self, x: Tensor) -> Tensor:\n"
                    "    return torch.linear(x, self.weight, self.bias)\n",
                    {{"weight", at::randn({3, 4})}, {"bias", at::randn({3})}});
}

// [B, T] token ids (below `embedded`) to [B, T, V] logits over a vocabulary of `vocab`.
Module sequenceModel(int64_t vocab, int64_t embedded = 0) {
    at::manual_seed(2);
    return scripted("def forward(self, x: Tensor) -> Tensor:\n"
                    "    return torch.linear(torch.embedding(self.emb, x), self.head)\n",
                    {{"emb", at::randn({embedded > 0 ? embedded : vocab, 5})},
                     {"head", at::randn({vocab, 5})}});
}

// [B, 3] floats to [B, outputs].
Module regressor(int64_t outputs = 1, const std::string& extra = {}) {
    at::manual_seed(3);
    return scripted("def forward(self, x: Tensor) -> Tensor:\n"
                    "    return torch.linear(x, self.weight, self.bias)\n" +
                        extra,
                    {{"weight", at::randn({outputs, 3})}, {"bias", at::randn({outputs})}});
}

Dataset table(int64_t n, int64_t features, uint64_t seed) {
    Dataset d;
    d.storage = Dataset::Storage::F32;
    d.sampleShape = {features};
    at::manual_seed(seed);
    const at::Tensor x = at::rand({n, features});
    d.f32.assign(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
    return d;
}

DatasetSplits classes(int numClasses) {
    DatasetSplits s;
    s.description = QStringLiteral("the test table");
    s.numClasses = numClasses;
    s.train = table(6, 4, 1);
    s.test = table(4, 4, 2);
    s.train.labels = {0, 1, 2, 0, 1, 2};
    s.test.labels = {2, 1, 0, 1};
    return s;
}

// Values targets of `outputs` per sample, y = x·w + 0.5 for a fixed w.
DatasetSplits values(int64_t outputs = 1, bool probabilities = false) {
    DatasetSplits s;
    s.description = QStringLiteral("the test regression");
    for (Dataset* d : {&s.train, &s.test}) {
        *d = table(d == &s.train ? 8 : 5, 3, d == &s.train ? 3 : 4);
        d->targets = Dataset::Targets::Values;
        d->targetShape = {outputs};
        for (int64_t i = 0; i < int64_t(d->f32.size()) / 3; ++i)
            for (int64_t o = 0; o < outputs; ++o) {
                const float* x = d->f32.data() + i * 3;
                const float y = 0.5f + x[0] - 2 * x[1] + 0.25f * x[2] * float(o + 1);
                d->values.push_back(probabilities ? float(y > 0) : y);
            }
    }
    return s;
}

// Windows of `context` over a stream of ids up to `maxId`.
DatasetSplits tokens(int64_t context, int64_t maxId) {
    QByteArray bytes;
    for (int i = 0; i < 41; ++i)
        bytes.append(char(i * 7 % (maxId + 1)));
    auto stream = TokenStream::fromBytes(bytes, TokenType::U8, QStringLiteral("stream"));
    if (!stream)
        qFatal("%s", qPrintable(stream.error().message));
    DatasetSplits s;
    s.description = QStringLiteral("the token stream");
    s.numClasses = int(maxId + 1);
    for (Dataset* d : {&s.train, &s.test}) {
        d->storage = Dataset::Storage::Windows;
        d->targets = Dataset::Targets::Ids;
        d->sampleShape = d->targetShape = {context};
        d->stream = *stream;
        d->windows = (41 - 1) / context;
    }
    return s;
}

QString refusal(LossKind loss, Module m, const DatasetSplits& data) {
    auto o = resolveObjective(loss, m, data, QStringLiteral("m.pt"));
    return o ? QString() : o.error().message;
}

QJsonArray flat(const at::Tensor& t) {
    const at::Tensor d = t.to(at::kDouble).contiguous().reshape(-1);
    QJsonArray a;
    for (int64_t i = 0; i < d.numel(); ++i)
        a.append(d[i].item<double>());
    return a;
}

// The largest difference between `t` and the reference's `values`, relative to the largest of
// them (a gradient's entries range over orders of magnitude; its largest sets the scale).
double relativeError(const at::Tensor& t, const QJsonArray& values) {
    const at::Tensor d = t.to(at::kDouble).contiguous().reshape(-1);
    double worst = 0, scale = 0;
    for (qsizetype i = 0; i < values.size(); ++i)
        scale = std::max(scale, std::abs(values[i].toDouble()));
    if (d.numel() != values.size())
        return INFINITY;
    for (qsizetype i = 0; i < values.size(); ++i)
        worst = std::max(worst, std::abs(d[i].item<double>() - values[i].toDouble()));
    return worst / std::max(scale, 1e-30);
}

} // namespace

class TestObjectives : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }

    void autoPicksFromOutputAndTargets() {
        Module c = classifier();
        auto o = resolveObjective(LossKind::Auto, c, classes(3), QStringLiteral("c"));
        QVERIFY2(o, qPrintable(o ? QString() : o.error().message));
        QCOMPARE(o->loss, LossKind::CrossEntropy);
        QCOMPARE(o->task, Task::Classification);

        Module s = sequenceModel(12);
        o = resolveObjective(LossKind::Auto, s, tokens(8, 11), QStringLiteral("s"));
        QVERIFY2(o, qPrintable(o ? QString() : o.error().message));
        QCOMPARE(o->loss, LossKind::CrossEntropy);
        QCOMPARE(o->task, Task::Sequence);

        Module r = regressor();
        o = resolveObjective(LossKind::Auto, r, values(), QStringLiteral("r"));
        QVERIFY(o);
        QCOMPARE(o->loss, LossKind::Mse);
        QCOMPARE(o->task, Task::Regression);

        // A model with its own loss method gets it.
        Module own = regressor(1, "def loss(self, output: Tensor, target: Tensor) -> Tensor:\n"
                                  "    return torch.mean(torch.abs(output - target)) * 3.0\n");
        o = resolveObjective(LossKind::Auto, own, values(), QStringLiteral("own"));
        QVERIFY2(o, qPrintable(o ? QString() : o.error().message));
        QCOMPARE(o->loss, LossKind::Model);
        QCOMPARE(o->task, Task::Custom);

        Module bce = regressor(2);
        o = resolveObjective(LossKind::Bce, bce, values(2, true), QStringLiteral("bce"));
        QVERIFY2(o, qPrintable(o ? QString() : o.error().message));
        QCOMPARE(o->task, Task::MultiLabel);
    }

    void mismatchesAreRefusedWithShapes() {
        // Logits [B, T, V] against one class per sample.
        DatasetSplits seqAsClasses = tokens(8, 11);
        for (Dataset* d : {&seqAsClasses.train, &seqAsClasses.test}) {
            Dataset flat = table(5, 8, 9);
            flat.storage = Dataset::Storage::I64;
            for (int i = 0; i < 40; ++i)
                flat.i64.push_back(i % 12);
            flat.f32.clear();
            flat.labels = {1, 2, 3, 4, 5};
            *d = flat;
        }
        QString why = refusal(LossKind::Auto, sequenceModel(12), seqAsClasses);
        QVERIFY2(why.contains(QLatin1String("[2, 8, 12]")) && why.contains(QLatin1String("[2]")) &&
                     why.contains(QLatin1String("needs [2, 12]")),
                 qPrintable(why));

        // A target id at or above the model's vocabulary, and an input id beyond its embedding.
        why = refusal(LossKind::Auto, sequenceModel(12, 20), tokens(8, 19));
        QVERIFY2(why.contains(QLatin1String("12 scores per position")) &&
                     why.contains(QLatin1String("token ids up to 19")),
                 qPrintable(why));
        why = refusal(LossKind::Auto, sequenceModel(12), tokens(8, 19));
        QVERIFY2(why.contains(QLatin1String("cannot take inputs of shape [2, 8]")) &&
                     why.contains(QLatin1String("ids up to 19")),
                 qPrintable(why));

        // MSE on integer targets, and cross-entropy on floats.
        why = refusal(LossKind::Mse, classifier(), classes(3));
        QVERIFY2(why.contains(QLatin1String("integer class labels")) &&
                     why.contains(QLatin1String("cross-entropy")),
                 qPrintable(why));
        why = refusal(LossKind::CrossEntropy, regressor(), values());
        QVERIFY2(why.contains(QLatin1String("float targets")), qPrintable(why));

        // Shapes that do not hold the same number of values.
        why = refusal(LossKind::Mse, regressor(2), values(1));
        QVERIFY2(why.contains(QLatin1String("[2, 2]")) && why.contains(QLatin1String("[2, 1]")),
                 qPrintable(why));

        // BCE on targets outside [0, 1]; a loss method that is not there or returns a vector.
        why = refusal(LossKind::Bce, regressor(), values());
        QVERIFY2(why.contains(QLatin1String("between 0 and 1")), qPrintable(why));
        why = refusal(LossKind::Model, regressor(), values());
        QVERIFY2(why.contains(QLatin1String("no method loss")), qPrintable(why));
        why = refusal(LossKind::Model,
                      regressor(1, "def loss(self, output: Tensor, target: Tensor) -> Tensor:\n"
                                   "    return output - target\n"),
                      values());
        QVERIFY2(why.contains(QLatin1String("one floating-point number")), qPrintable(why));

        // Too few classes for the labels.
        why = refusal(LossKind::Auto, classifier(), classes(5));
        QVERIFY2(why.contains(QLatin1String("3 scores per sample")), qPrintable(why));
    }

    void lossesFollowTheirFormulas() {
        Module none = regressor();
        const at::Tensor out = at::tensor({0.5f, -1.0f, 2.0f, 0.0f}).reshape({4, 1});
        const at::Tensor t = at::tensor({1.0f, -1.0f, 0.0f, 0.5f});
        auto value = [&](LossKind k) {
            return batchLoss(Objective{k, Task::Regression}, none, out, t).loss.item<double>();
        };
        // (0.25 + 0 + 4 + 0.25) / 4, (0.5 + 0 + 2 + 0.5) / 4, Huber with delta 1.
        QVERIFY(std::abs(value(LossKind::Mse) - 1.125) < 1e-6);
        QVERIFY(std::abs(value(LossKind::L1) - 0.75) < 1e-6);
        QVERIFY(std::abs(value(LossKind::Huber) - (0.125 + 0 + 1.5 + 0.125) / 4) < 1e-6);

        // BCE with logits, and its per-label hits.
        const at::Tensor probs = at::tensor({1.0f, 0.0f, 1.0f, 0.0f});
        const BatchLoss bce =
            batchLoss(Objective{LossKind::Bce, Task::MultiLabel}, none, out, probs);
        double want = 0;
        const float o[] = {0.5f, -1.0f, 2.0f, 0.0f}, p[] = {1, 0, 1, 0};
        for (int i = 0; i < 4; ++i)
            want += std::log1p(std::exp(-std::abs(o[i]))) + std::max(o[i], 0.0f) - o[i] * p[i];
        QVERIFY(std::abs(bce.loss.item<double>() - want / 4) < 1e-6);
        QCOMPARE(bce.correct.item<int64_t>(),
                 int64_t(4)); // a logit of 0 says "not", as its target does
        QCOMPARE(bce.counted.item<int64_t>(), int64_t(4));

        // Cross-entropy over the last dimension, positions with -100 ignored.
        const at::Tensor logits =
            at::tensor({2.0f, 0.0f, 0.0f, 0.0f, 3.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f, 5.0f})
                .reshape({1, 4, 3});
        const at::Tensor ids =
            at::tensor({int64_t(0), int64_t(0), kIgnoredTarget, int64_t(2)}).reshape({1, 4});
        const BatchLoss ce =
            batchLoss(Objective{LossKind::CrossEntropy, Task::Sequence}, none, logits, ids);
        const at::Tensor lp = at::log_softmax(logits.reshape({4, 3}), 1);
        const double expect =
            -(lp[0][0].item<double>() + lp[1][0].item<double>() + lp[3][2].item<double>()) / 3;
        QVERIFY(std::abs(ce.loss.item<double>() - expect) < 1e-6);
        QCOMPARE(ce.counted.item<int64_t>(), int64_t(3));
        QCOMPARE(ce.correct.item<int64_t>(), int64_t(2)); // position 1 guesses class 1

        // Every position ignored: no loss, no gradient, and nothing counted.
        const at::Tensor ignored = at::full({1, 4}, kIgnoredTarget, at::kLong);
        at::Tensor leaf = logits.clone().requires_grad_(true);
        const BatchLoss nothing =
            batchLoss(Objective{LossKind::CrossEntropy, Task::Sequence}, none, leaf, ignored);
        QCOMPARE(nothing.loss.item<double>(), 0.0);
        QCOMPARE(nothing.counted.item<int64_t>(), int64_t(0));
        nothing.loss.backward();
        QCOMPARE(leaf.grad().abs().sum().item<double>(), 0.0);

        // The model's own loss.
        Module own = regressor(1, "def loss(self, output: Tensor, target: Tensor) -> Tensor:\n"
                                  "    return torch.mean(torch.abs(output - target)) * 3.0\n");
        const BatchLoss m =
            batchLoss(Objective{LossKind::Model, Task::Custom}, own, out, t.reshape({4, 1}));
        QVERIFY(std::abs(m.loss.item<double>() - 3 * 0.75) < 1e-6);
    }

    // The cross-entropy taken a few rows at a time gives today's loss and gradients, within
    // fp32 rounding, on fp32 and bf16 logits, with ignored positions, and parts that do not
    // divide the rows; a wrong softmax, a lost row or an ignored row counted would move them by
    // far more than the tolerance.
    void chunkedCrossEntropyMatchesWholeLogits() {
        at::manual_seed(5);
        for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
            const at::Tensor base = (at::randn({37, 29}) * 3).to(dtype);
            at::Tensor target = at::randint(0, 29, {37}, at::kLong);
            target.index_put_({at::arange(0, 37, 5)}, kIgnoredTarget);
            at::Tensor whole = base.clone().requires_grad_(true);
            at::Tensor parts = base.clone().requires_grad_(true);
            const at::Tensor want = at::nll_loss(at::log_softmax(whole.to(at::kFloat), 1), target,
                                                 {}, at::Reduction::Sum, kIgnoredTarget);
            const at::Tensor got = chunkedCrossEntropySum(parts, target, 8);
            QVERIFY(std::abs(want.item<double>() - got.item<double>()) <=
                    1e-5 * std::abs(want.item<double>()));
            const at::Tensor upstream = at::scalar_tensor(0.7);
            want.backward(upstream);
            got.backward(upstream);
            QCOMPARE(parts.grad().scalar_type(), dtype);
            const double tol = dtype == at::kFloat ? 1e-6 : 1e-2;
            QVERIFY2(
                at::allclose(parts.grad().to(at::kFloat), whole.grad().to(at::kFloat), tol, tol),
                qPrintable(
                    QString::number((parts.grad().to(at::kFloat) - whole.grad().to(at::kFloat))
                                        .abs()
                                        .max()
                                        .item<double>())));
            // Ignored rows get no gradient at all.
            QCOMPARE(parts.grad().narrow(0, 0, 1).abs().sum().item<double>(), 0.0);
        }
        // batchLoss takes the parts where the logits are larger than one.
        const int64_t vocab = 1 << 16;
        QVERIFY(crossEntropyRows(vocab) < 300);
        const at::Tensor big = at::randn({1, 300, vocab});
        const at::Tensor ids = at::randint(0, vocab, {1, 300}, at::kLong);
        Module none = regressor();
        const BatchLoss b =
            batchLoss(Objective{LossKind::CrossEntropy, Task::Sequence}, none, big, ids);
        const at::Tensor ref =
            at::nll_loss(at::log_softmax(big.reshape({300, vocab}), 1), ids.reshape({-1}));
        QVERIFY(std::abs(b.loss.item<double>() - ref.item<double>()) < 1e-5);
    }

    void testFiguresMeanWhatTheySay() {
        Module none = regressor();
        Evaluation reg(Objective{LossKind::Mse, Task::Regression});
        // Two batches; targets 1, 2, 3, 4 (mean 2.5, SST 5), errors 0.5, -0.5, 1, 0.
        reg.add(none, at::tensor({1.5f, 1.5f}).reshape({2, 1}), at::tensor({1.0f, 2.0f}));
        reg.add(none, at::tensor({4.0f, 4.0f}).reshape({2, 1}), at::tensor({3.0f, 4.0f}));
        TestMetrics m = reg.result();
        QVERIFY(m.evaluated);
        QVERIFY(std::abs(m.r2 - (1 - 1.5 / 5)) < 1e-9);
        QVERIFY(std::abs(m.mae - 0.5) < 1e-9);
        QVERIFY(std::abs(m.loss - 1.5 / 4) < 1e-6);
        QVERIFY(std::isnan(m.accuracy) && std::isnan(m.perplexity));

        Evaluation seq(Objective{LossKind::CrossEntropy, Task::Sequence});
        const at::Tensor logits = at::zeros({2, 3, 4}); // uniform over 4: loss ln 4
        seq.add(none, logits,
                at::tensor({int64_t(1), kIgnoredTarget, int64_t(2), int64_t(0), int64_t(0),
                            kIgnoredTarget})
                    .reshape({2, 3}));
        m = seq.result();
        QVERIFY(std::abs(m.loss - std::log(4.0)) < 1e-6);
        QVERIFY(std::abs(m.perplexity - 4.0) < 1e-5);
        QVERIFY(std::isnan(m.r2));

        QJsonObject o;
        m.writeTo(o);
        QVERIFY(o.value(QStringLiteral("test_r2")).isNull());
        const TestMetrics back = TestMetrics::readFrom(o);
        QVERIFY(back.evaluated);
        QCOMPARE(back.perplexity, m.perplexity);
    }

    void replicaTrainsEveryObjective() {
        // One step on each kind of data through the replica a worker computes with: the loss it
        // reports is the objective's, and every trainable parameter gets a gradient.
        const DeviceInfo cpu = detectDevices().last();
        struct Case {
            Module model;
            DatasetSplits data;
            LossKind loss;
        };
        Case cases[] = {{classifier(), classes(3), LossKind::CrossEntropy},
                        {sequenceModel(12), tokens(8, 11), LossKind::CrossEntropy},
                        {regressor(), values(), LossKind::Huber},
                        {regressor(2), values(2, true), LossKind::Bce}};
        for (Case& c : cases) {
            ReplicaOptions ro;
            ro.loss = c.loss;
            auto train = std::make_shared<const Dataset>(c.data.train);
            ModelReplica replica(cpu, c.model, train, ro);
            WorkRequest req;
            req.indices = {0, 1, 2, 3};
            auto r = replica.compute(req, QStringLiteral("w"));
            QVERIFY2(r, qPrintable(r ? QString() : r.error().message));
            Evaluation e(Objective{c.loss, taskOf(c.loss, c.data.train.targets)});
            std::vector<int64_t> idx = req.indices;
            {
                at::NoGradGuard g;
                e.add(c.model, c.model.forward({gatherInputs(c.data.train, idx)}).toTensor(),
                      gatherTargets(c.data.train, idx));
            }
            QVERIFY2(std::abs(r->lossSum / 4 - e.result().loss) < 1e-5,
                     qPrintable(
                         QStringLiteral("%1 against %2").arg(r->lossSum / 4).arg(e.result().loss)));
            for (const at::Tensor& g : r->grads)
                QVERIFY(g.defined() && g.abs().sum().item<double>() > 0);
        }
    }

    void frozenParametersGetNoGradientAndStayPut() {
        at::manual_seed(4);
        Module m = scripted("def forward(self, x: Tensor) -> Tensor:\n"
                            "    return torch.linear(torch.relu(torch.linear(x, self.w1)), "
                            "self.w2)\n",
                            {{"w1", at::randn({5, 4})}, {"w2", at::randn({3, 5})}});
        const QByteArray before = schemaHash(modelTensors(m));
        m.attr("w1").toTensor().requires_grad_(false);
        const ModelTensors t = modelTensors(m);
        QCOMPARE(t.paramNames, std::vector<std::string>{"w2"});
        QCOMPARE(t.frozenNames, std::vector<std::string>{"w1"});
        QCOMPARE(t.trainableCount(), 15);
        QCOMPARE(t.frozenCount(), 20);
        QVERIFY(schemaHash(t) != before); // which parameters are frozen is part of the schema
        const at::Tensor w1 = m.attr("w1").toTensor().clone();

        // The replica (deep-copied under no_grad, which clears requires_grad) keeps it frozen:
        // one gradient, for w2, and local-SGD's inner steps leave w1 as it was.
        ReplicaOptions ro;
        ro.innerOptimizer.kind = OptimizerKind::Sgd;
        auto data = std::make_shared<const Dataset>(classes(3).train);
        ModelReplica replica(detectDevices().last(), m, data, ro);
        QCOMPARE(replica.params().size(), size_t(1));
        WorkRequest req;
        req.indices = {0, 1, 2, 3, 4, 5};
        req.local = localSgdRound(3, 0.5);
        auto r = replica.compute(req, QStringLiteral("w"));
        QVERIFY(r);
        QCOMPARE(r->grads.size(), size_t(1));
        QVERIFY(r->grads[0].abs().sum().item<double>() > 0);
        QVERIFY(at::equal(param(replica.module(), "w1"), w1));
        QVERIFY(!param(replica.module(), "w1").requires_grad());

        // A checkpoint keeps both, and which is frozen.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("c.tandem"));
        RunState s;
        s.config.model = dir.filePath(QStringLiteral("m.pt"));
        s.schemaHash = QString::fromLatin1(schemaHash(t));
        std::vector<at::Tensor> params = t.params;
        Optimizer opt(OptimizerConfig{}, params);
        QVERIFY(writeRunCheckpoint(path, m, opt, s));
        auto loaded = loadRunCheckpoint(path);
        QVERIFY2(loaded, qPrintable(loaded ? QString() : loaded.error().message));
        QVERIFY(at::equal(param(loaded->module, "w1"), w1));
        QVERIFY(!param(loaded->module, "w1").requires_grad());
        QCOMPARE(modelTensors(loaded->module).frozenNames, t.frozenNames);
        QCOMPARE(stateDictRecords(m).size(), 2);
    }
    // DPO and ORPO against a float64 reference written from the papers' equations
    // (python/preference_reference.py): on three pairs of sequences of seven positions over a
    // vocabulary of eleven, with the prompt's positions and padding not counted, the loss, each
    // answer's reward and log-probability, and the gradient of the loss for every logit agree
    // to 1e-6 relative in fp32. A wrong sign, a sum for a mean, the reference's graph kept or the
    // NLL over the wrong tokens each move some figure by far more.
    void preferenceLossesMatchTheReference() {
        at::manual_seed(3);
        const int64_t pairs = 3, positions = 7, vocab = 11;
        const at::Tensor logits = at::randn({2 * pairs, positions, vocab}) * 2;
        const at::Tensor reference = logits + at::randn_like(logits) * 0.5;
        at::Tensor targets = at::randint(vocab, {2 * pairs, positions}, at::kLong);
        // Each answer starts after a prompt of 1 to 3 positions; two end early (padding).
        for (int64_t s = 0; s < 2 * pairs; ++s)
            targets[s].narrow(0, 0, 1 + s % 3).fill_(kIgnoredTarget);
        targets[1].narrow(0, 5, 2).fill_(kIgnoredTarget);
        targets[4].narrow(0, 6, 1).fill_(kIgnoredTarget);
        const double beta = 0.1, lambda = 0.25;
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("case.json"));
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QJsonDocument(QJsonObject{{QStringLiteral("shape"),
                                               QJsonArray{qint64(2 * pairs), qint64(positions),
                                                          qint64(vocab)}},
                                              {QStringLiteral("logits"), flat(logits)},
                                              {QStringLiteral("reference"), flat(reference)},
                                              {QStringLiteral("targets"), flat(targets)},
                                              {QStringLiteral("beta"), beta},
                                              {QStringLiteral("lambda"), lambda}})
                        .toJson(QJsonDocument::Compact));
        }
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3")))
            QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed; cannot run the "
                  "float64 reference");
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"),
                 {testpaths::pythonDir() + QStringLiteral("/preference_reference.py"), file});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        const QJsonObject want = QJsonDocument::fromJson(py.readAllStandardOutput()).object();
        QVERIFY(!want.isEmpty());
        for (const QString& kind : {QStringLiteral("dpo"), QStringLiteral("orpo")}) {
            const at::Tensor x = logits.clone().requires_grad_();
            const SequenceLogps policy = sequenceLogps(x, targets);
            const PreferenceLoss l = kind == QLatin1String("dpo")
                                         ? dpoLoss(policy, sequenceLogps(reference, targets), beta)
                                         : orpoLoss(policy, lambda);
            l.loss.backward();
            const QJsonObject w = want.value(kind).toObject();
            const std::pair<const char*, at::Tensor> figures[] = {
                {"loss", l.loss.detach().reshape({1})},  {"chosen_rewards", l.chosenRewards},
                {"rejected_rewards", l.rejectedRewards}, {"chosen_logps", l.chosenLogps},
                {"rejected_logps", l.rejectedLogps},     {"grad", x.grad()}};
            for (const auto& [name, t] : figures) {
                const QJsonValue v = w.value(QLatin1String(name));
                const QJsonArray values = v.isArray() ? v.toArray() : QJsonArray{v};
                const double err = relativeError(t, values);
                QVERIFY2(err < 1e-6, qPrintable(QStringLiteral("%1 %2: %3 relative")
                                                    .arg(kind, QLatin1String(name))
                                                    .arg(err)));
            }
            // TRL's batch figures follow from the rewards.
            const PreferenceFigures f = preferenceFigures(l);
            const QJsonArray rc = w.value(QStringLiteral("chosen_rewards")).toArray();
            const QJsonArray rr = w.value(QStringLiteral("rejected_rewards")).toArray();
            double wins = 0;
            for (qsizetype i = 0; i < rc.size(); ++i)
                wins += rc[i].toDouble() > rr[i].toDouble() ? 1 : 0;
            QCOMPARE(f.accuracy, wins / double(pairs));
            QVERIFY(std::abs(f.margin - (f.chosenReward - f.rejectedReward)) < 1e-9);
        }
    }
};

QTEST_GUILESS_MAIN(TestObjectives)
#include "test_objectives.moc"
