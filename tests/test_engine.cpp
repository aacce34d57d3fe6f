// The engine's parts: devices, the model zoo, the optimizers against hand-computed steps, the
// learning-rate schedule, the sampler and tensor conversion.

#include "engine/balancer.h"
#include "engine/devices.h"
#include "engine/modelcheck.h"
#include "engine/optimizer.h"
#include "engine/precision.h"
#include "engine/sampler.h"
#include "engine/scriptmodel.h"
#include "engine/torchcompat.h"
#include "engine/training.h"
#include "engine/wiretensors.h"
#include "engine/worker.h"
#include "formats/ziparchive.h"

#include <QFile>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <ATen/Parallel.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/cuda.h>

#include <cmath>
#include <cstdlib>

using namespace tandem;

namespace {

std::vector<std::pair<std::string, std::vector<int64_t>>> shapes(const torch::jit::Module& m) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> out;
    for (const auto& p : m.named_parameters(true))
        out.emplace_back(p.name, p.value.sizes().vec());
    return out;
}

torch::jit::Module zoo(const char* name, uint64_t seed = 0) {
    auto m = buildZooModel(QLatin1String(name), seed);
    if (!m)
        qFatal("%s", qPrintable(m.error().message));
    return *m;
}

// n random 28x28 images with labels in 0..9, as a Fashion-MNIST stand-in.
std::shared_ptr<const Dataset> randomImages(int64_t n, uint64_t seed = 1,
                                            std::vector<int64_t> shape = {1, 28, 28}) {
    auto d = std::make_shared<Dataset>();
    d->sampleShape = shape;
    QRandomGenerator rng{quint32(seed)};
    d->u8.resize(size_t(n * d->sampleSize()));
    for (uint8_t& v : d->u8)
        v = uint8_t(rng.bounded(256));
    for (int64_t i = 0; i < n; ++i)
        d->labels.push_back(int64_t(rng.bounded(10)));
    return d;
}

std::vector<int64_t> iota(int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = i;
    return v;
}

DeviceInfo cpuDevice() {
    return detectDevices().last();
}

at::Tensor scalarParam(std::initializer_list<float> v) {
    return at::tensor(std::vector<float>(v));
}

} // namespace

class TestEngine : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void devices();
    void runningStatsAreGatheredAgain();
    void mlpNamesAndShapes();
    void mnistCnnIsThePytorchExample();
    void resnet8ShapesAndBuffers();
    void zooInitIsSeededAndBounded();
    void unknownModelIsAnError();
    void batchNormFollowsTrainAndEval();
    void userScriptWithDropoutFollowsTrainAndEval();
    void loadScriptModuleErrors();
    void schemaHashTellsModelsApart();
    void sgdMomentumByHand();
    void sgdNesterovWithWeightDecayByHand();
    void adamByHand();
    void adamWDecouplesWeightDecay();
    void missingGradientLeavesParameterAlone();
    void rmspropByHand();
    void adagradByHand();
    void optimizerStateRoundTrip();
    void learningRateSchedule();
    void samplerIsAPermutationPerEpoch();
    void samplerSeekReproduces();
    void tensorRecordRoundTrip();
    void gatherScalesImages();
    void balancerSplitsByThroughput();
    void balancerIsNotFooledByOneStall();
    void damagedTorchScriptIsRefused();
    void runDescriptionNumbersKeepTheirRange();
    void threadsAreCappedPerCore();
    void trainsPastTheProfilingRuns();
    void choosingDevices();
    void mpsMemoryLimitsUnlessTheUserChose();
    void bf16AutocastOnCpu();
    void precisionFallsBackWithAReason();
    void lossScalerSkipsOverflowAndGrows();
    void fp16OverflowIsRecomputedNotApplied();
    void retriesLeaveNoTraceInBatchNorm();
    void outOfMemoryRetriesInHalves();
    void balancerKeepsAMemoryCap();
    void replicaReadsTheCoordinatorsWeightsInPlace();
    void gradientBundleFillsFromTheFront();
    void replicaStreamsGradientsDuringBackward();
};

void TestEngine::devices() {
    const QList<DeviceInfo> ds = detectDevices();
    QVERIFY(!ds.isEmpty());
    const DeviceInfo& cpu = ds.last();
    QCOMPARE(cpu.kind, QStringLiteral("cpu"));
    QCOMPARE(cpu.cores, QThread::idealThreadCount());
    QVERIFY(cpu.memoryBytes > (int64_t(256) << 20));
    QVERIFY(!cpu.name.isEmpty());
    QVERIFY(!cpu.torchVersion.isEmpty());
    QCOMPARE(cpu.torchDevice(), QStringLiteral("cpu"));
    int cuda = 0, mps = 0;
    for (const DeviceInfo& d : ds) {
        QVERIFY(d.kind == QLatin1String("cuda") || d.kind == QLatin1String("mps") ||
                d.kind == QLatin1String("cpu"));
        cuda += d.kind == QLatin1String("cuda");
        mps += d.kind == QLatin1String("mps");
        const QJsonObject j = d.toJson();
        for (const char* key : {"kind", "name", "memory_bytes", "index"})
            QVERIFY2(j.contains(QLatin1String(key)), key);
    }
    QCOMPARE(cuda, torch::cuda::is_available() ? int(torch::cuda::device_count()) : 0);
    QCOMPARE(mps, at::hasMPS() ? 1 : 0);
    // The order is CUDA, MPS, CPU: the first entry is the device a run prefers.
    if (cuda > 0)
        QCOMPARE(ds.first().kind, QStringLiteral("cuda"));
}

void TestEngine::mlpNamesAndShapes() {
    const auto s = shapes(zoo("mlp"));
    const decltype(s) expect{{"fc1.weight", {256, 784}},
                             {"fc1.bias", {256}},
                             {"fc2.weight", {10, 256}},
                             {"fc2.bias", {10}}};
    QVERIFY(s == expect);
    torch::jit::Module m = zoo("mlp");
    QCOMPARE(m.forward({at::rand({5, 1, 28, 28})}).toTensor().sizes().vec(),
             (std::vector<int64_t>{5, 10}));
}

void TestEngine::mnistCnnIsThePytorchExample() {
    torch::jit::Module m = zoo("mnist-cnn");
    const auto s = shapes(m);
    const decltype(s) expect{{"conv1.weight", {32, 1, 3, 3}},  {"conv1.bias", {32}},
                             {"conv2.weight", {64, 32, 3, 3}}, {"conv2.bias", {64}},
                             {"fc1.weight", {128, 9216}},      {"fc1.bias", {128}},
                             {"fc2.weight", {10, 128}},        {"fc2.bias", {10}}};
    QVERIFY(s == expect);
    int64_t n = 0;
    for (const auto& p : m.parameters())
        n += p.numel();
    QCOMPARE(n, 1199882); // as torch.nn counts the pytorch/examples network
    QCOMPARE(modelTensors(m).buffers.size(), size_t(0));
    QCOMPARE(m.forward({at::rand({3, 1, 28, 28})}).toTensor().sizes().vec(),
             (std::vector<int64_t>{3, 10}));

    // Its forward is conv-relu-conv-relu-pool-fc-relu-fc: recompute it from the parameters.
    at::NoGradGuard g;
    const at::Tensor x = at::rand({2, 1, 28, 28});
    const ModelTensors t = modelTensors(m);
    at::Tensor h = at::relu(at::conv2d(x, t.params[0], t.params[1]));
    h = at::max_pool2d(at::relu(at::conv2d(h, t.params[2], t.params[3])), {2, 2});
    h = at::relu(at::linear(h.flatten(1), t.params[4], t.params[5]));
    h = at::linear(h, t.params[6], t.params[7]);
    QVERIFY(at::allclose(m.forward({x}).toTensor(), h, 1e-5, 1e-6));
}

void TestEngine::resnet8ShapesAndBuffers() {
    torch::jit::Module m = zoo("resnet8");
    QCOMPARE(m.forward({at::rand({4, 3, 32, 32})}).toTensor().sizes().vec(),
             (std::vector<int64_t>{4, 10}));
    const ModelTensors t = modelTensors(m);
    QCOMPARE(t.paramNames.front(), std::string("conv1.weight"));
    QCOMPARE(t.paramNames.back(), std::string("fc.bias"));
    QVERIFY(std::find(t.paramNames.begin(), t.paramNames.end(), "layer2.shortcut_conv.weight") !=
            t.paramNames.end());
    QVERIFY(std::find(t.paramNames.begin(), t.paramNames.end(), "layer1.shortcut_conv.weight") ==
            t.paramNames.end());
    QCOMPARE(t.bufferNames.size(), size_t(3 * 9)); // 9 BatchNorm layers, 3 buffers each
    QCOMPARE(t.bufferNames.front(), std::string("bn1.running_mean"));
    QCOMPARE(t.buffers[2].scalar_type(), at::kLong);
}

void TestEngine::zooInitIsSeededAndBounded() {
    const ModelTensors a = modelTensors(zoo("mlp", 7)), b = modelTensors(zoo("mlp", 7)),
                       c = modelTensors(zoo("mlp", 8));
    QVERIFY(at::equal(a.params[0], b.params[0]));
    QVERIFY(!at::equal(a.params[0], c.params[0]));
    // torch.nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the spread fills it.
    const double bound = 1.0 / std::sqrt(784.0);
    QVERIFY(a.params[0].abs().max().item<double>() <= bound);
    QVERIFY(a.params[0].abs().max().item<double>() > 0.99 * bound);
    QVERIFY(std::abs(a.params[0].mean().item<double>()) < 0.01 * bound);
    // A uniform distribution's standard deviation is bound / sqrt(3).
    QVERIFY(std::abs(a.params[0].std().item<double>() - bound / std::sqrt(3.0)) < 0.01 * bound);
}

void TestEngine::unknownModelIsAnError() {
    auto m = buildZooModel(QStringLiteral("gpt5"), 0);
    QVERIFY(!m.ok());
    QCOMPARE(m.error().code, ErrorCode::InvalidArgument);
    QVERIFY(m.error().message.contains(QStringLiteral("mlp, mnist-cnn, resnet8")));
}

void TestEngine::batchNormFollowsTrainAndEval() {
    torch::jit::Module m = zoo("resnet8");
    ModelTensors t = modelTensors(m);
    const at::Tensor x = at::rand({8, 3, 32, 32}) * 3 + 1;
    at::NoGradGuard g;
    m.train();
    m.forward({x});
    QCOMPARE(t.buffers[2].item<int64_t>(), 1);            // bn1.num_batches_tracked
    QVERIFY(t.buffers[0].abs().sum().item<double>() > 0); // running_mean moved
    const at::Tensor mean = t.buffers[0].clone();
    m.eval();
    const at::Tensor y1 = m.forward({x}).toTensor();
    const at::Tensor y2 = m.forward({x}).toTensor();
    QCOMPARE(t.buffers[2].item<int64_t>(), 1);
    QVERIFY(at::equal(mean, t.buffers[0]));
    QVERIFY(at::equal(y1, y2));
    // Eval uses running statistics, train the batch's own: the outputs differ.
    m.train();
    QVERIFY(!at::allclose(m.forward({x}).toTensor(), y1));
}

void TestEngine::userScriptWithDropoutFollowsTrainAndEval() {
    // A "user" model with dropout, saved to a file and loaded as users' files are.
    torch::jit::Module net(c10::QualifiedName("__torch__.user.DropNet"));
    net.register_attribute("training", c10::BoolType::get(), true);
    net.register_parameter("w", at::ones({4, 4}).requires_grad_(true), false);
    net.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.dropout(torch.linear(x, self.w), 0.5, self.training)
)");
    QTemporaryDir tmp;
    const QString path = tmp.filePath(QStringLiteral("drop.pt"));
    net.save(path.toStdString());
    auto loaded = loadScriptModule(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    torch::jit::Module m = *loaded;
    at::NoGradGuard g;
    const at::Tensor x = at::ones({64, 4});
    m.eval();
    QVERIFY(at::equal(m.forward({x}).toTensor(), at::full({64, 4}, 4.0f)));
    m.train();
    const at::Tensor y = m.forward({x}).toTensor();
    const double zeros = y.eq(0).sum().item<double>() / double(y.numel());
    QVERIFY2(zeros > 0.3 && zeros < 0.7, qPrintable(QString::number(zeros)));
}

void TestEngine::loadScriptModuleErrors() {
    QTemporaryDir tmp;
    auto missing = loadScriptModule(tmp.filePath(QStringLiteral("none.pt")));
    QVERIFY(!missing.ok());
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
    const QString junk = tmp.filePath(QStringLiteral("junk.pt"));
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a zip archive");
    f.close();
    auto bad = loadScriptModule(junk);
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message.contains(QStringLiteral("not a TorchScript file")),
             qPrintable(bad.error().message));
    QVERIFY(!bad.error().message.contains(QLatin1Char('\n')));
    auto badBytes = loadScriptModule(QByteArray("PK\3\4garbage"), QStringLiteral("ckpt"));
    QVERIFY(!badBytes.ok());
}

void TestEngine::schemaHashTellsModelsApart() {
    const QByteArray a = schemaHash(modelTensors(zoo("mlp", 1)));
    QCOMPARE(a, schemaHash(modelTensors(zoo("mlp", 2)))); // weights do not matter
    QVERIFY(a != schemaHash(modelTensors(zoo("mnist-cnn"))));
    QCOMPARE(a.size(), 64);
}

void TestEngine::sgdMomentumByHand() {
    at::Tensor p = scalarParam({1.0f, -2.0f});
    OptimizerConfig c;
    c.kind = OptimizerConfig::Kind::Sgd;
    c.momentum = 0.9;
    Optimizer opt(c, {p});
    opt.step({scalarParam({0.5f, 0.25f})}, 0.1);
    // buf = g; p -= 0.1 * g
    QVERIFY(at::allclose(p, scalarParam({0.95f, -2.025f})));
    opt.step({scalarParam({-1.0f, 0.5f})}, 0.1);
    // buf = 0.9 * [0.5, 0.25] + [-1, 0.5] = [-0.55, 0.725]; p -= 0.1 * buf
    QVERIFY(at::allclose(p, scalarParam({1.005f, -2.0975f})));
    QCOMPARE(opt.stepCount(), 2);
}

void TestEngine::sgdNesterovWithWeightDecayByHand() {
    at::Tensor p = scalarParam({2.0f});
    OptimizerConfig c;
    c.kind = OptimizerConfig::Kind::Sgd;
    c.momentum = 0.5;
    c.nesterov = true;
    c.weightDecay = 0.1;
    Optimizer opt(c, {p});
    opt.step({scalarParam({1.0f})}, 0.1);
    // g = 1 + 0.1*2 = 1.2; buf = 1.2; update = g + 0.5*buf = 1.8; p = 2 - 0.18
    QVERIFY(at::allclose(p, scalarParam({1.82f})));
    opt.step({scalarParam({1.0f})}, 0.1);
    // g = 1 + 0.182 = 1.182; buf = 0.6 + 1.182 = 1.782; update = 1.182 + 0.891 = 2.073
    QVERIFY(at::allclose(p, scalarParam({1.82f - 0.2073f})));
}

void TestEngine::adamByHand() {
    at::Tensor p = scalarParam({1.0f, -2.0f});
    OptimizerConfig c;
    c.kind = OptimizerConfig::Kind::Adam;
    Optimizer opt(c, {p});
    const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const double g1[2] = {0.5, 0.25}, g2[2] = {-0.5, 1.0};
    opt.step({scalarParam({0.5f, 0.25f})}, lr);
    // Step 1: m_hat = g, v_hat = g^2, so p moves by lr * sign(g).
    QVERIFY(at::allclose(p, scalarParam({0.9f, -2.1f}), 1e-6, 1e-6));
    opt.step({scalarParam({-0.5f, 1.0f})}, lr);
    double expect[2];
    const double start[2] = {0.9, -2.1};
    for (int i = 0; i < 2; ++i) {
        const double m = b1 * (1 - b1) * g1[i] + (1 - b1) * g2[i];
        const double v = b2 * (1 - b2) * g1[i] * g1[i] + (1 - b2) * g2[i] * g2[i];
        const double mhat = m / (1 - b1 * b1), vhat = v / (1 - b2 * b2);
        expect[i] = start[i] - lr * mhat / (std::sqrt(vhat) + eps);
    }
    QVERIFY(at::allclose(p, scalarParam({float(expect[0]), float(expect[1])}), 1e-6, 1e-6));
}

void TestEngine::adamWDecouplesWeightDecay() {
    at::Tensor p = scalarParam({1.0f, -2.0f});
    OptimizerConfig c;
    c.kind = OptimizerConfig::Kind::AdamW;
    c.weightDecay = 0.1;
    Optimizer opt(c, {p});
    opt.step({scalarParam({0.5f, 0.25f})}, 0.1);
    // p *= 1 - 0.1*0.1, then the Adam step of lr * sign(g).
    QVERIFY(at::allclose(p, scalarParam({0.99f - 0.1f, -1.98f - 0.1f}), 1e-6, 1e-6));

    // Adam's weight decay is L2 on the gradient instead: with g = 0 the step is still lr.
    at::Tensor q = scalarParam({1.0f});
    c.kind = OptimizerConfig::Kind::Adam;
    Optimizer adam(c, {q});
    adam.step({scalarParam({0.0f})}, 0.1);
    QVERIFY(at::allclose(q, scalarParam({0.9f}), 1e-6, 1e-6));
}

void TestEngine::rmspropByHand() {
    at::Tensor p = scalarParam({1.0f, -2.0f});
    OptimizerConfig c;
    c.kind = OptimizerConfig::Kind::RmsProp;
    Optimizer opt(c, {p});
    const double lr = 0.01, alpha = 0.99, eps = 1e-8;
    const double g1[2] = {0.5, 0.25}, g2[2] = {-0.5, 1.0};
    opt.step({scalarParam({0.5f, 0.25f})}, lr);
    // v = (1 - alpha) g^2, so the first step is lr * g / (0.1 |g|) = 0.1 * sign(g).
    QVERIFY(at::allclose(p, scalarParam({0.9f, -2.1f}), 1e-6, 1e-6));
    opt.step({scalarParam({-0.5f, 1.0f})}, lr);
    const double start[2] = {0.9, -2.1};
    double expect[2];
    for (int i = 0; i < 2; ++i) {
        const double v = alpha * (1 - alpha) * g1[i] * g1[i] + (1 - alpha) * g2[i] * g2[i];
        expect[i] = start[i] - lr * g2[i] / (std::sqrt(v) + eps);
    }
    QVERIFY(at::allclose(p, scalarParam({float(expect[0]), float(expect[1])}), 1e-6, 1e-6));
}

void TestEngine::adagradByHand() {
    at::Tensor p = scalarParam({1.0f, -2.0f});
    OptimizerConfig c;
    c.kind = OptimizerConfig::Kind::Adagrad;
    Optimizer opt(c, {p});
    // sum = g^2, so the first step is lr * sign(g).
    opt.step({scalarParam({0.5f, 0.25f})}, 0.1);
    QVERIFY(at::allclose(p, scalarParam({0.9f, -2.1f}), 1e-6, 1e-6));
    opt.step({scalarParam({-0.5f, 1.0f})}, 0.1);
    const double s0 = 0.25 + 0.25, s1 = 0.0625 + 1.0;
    QVERIFY(at::allclose(
        p, scalarParam({float(0.9 + 0.1 * 0.5 / std::sqrt(s0)), float(-2.1 - 0.1 / std::sqrt(s1))}),
        1e-6, 1e-6));
}

void TestEngine::missingGradientLeavesParameterAlone() {
    at::Tensor a = scalarParam({1.0f}), b = scalarParam({1.0f});
    OptimizerConfig c;
    Optimizer opt(c, {a, b});
    opt.step({scalarParam({1.0f}), at::Tensor()}, 0.1);
    QVERIFY(at::allclose(a, scalarParam({0.9f})));
    QVERIFY(at::equal(b, scalarParam({1.0f})));
}

void TestEngine::optimizerStateRoundTrip() {
    for (const auto& [kind, name] : EnumNames<OptimizerKind>::table) {
        OptimizerConfig c;
        c.kind = kind;
        at::Tensor p1 = at::rand({3, 3}), p2 = p1.clone();
        Optimizer a(c, {p1});
        std::vector<at::Tensor> gs;
        for (int i = 0; i < 5; ++i)
            gs.push_back(at::randn({3, 3}));
        a.step({gs[0]}, 0.01);
        a.step({gs[1]}, 0.01);
        Optimizer b(c, {p2});
        p2.copy_(p1);
        QVERIFY(b.restore(a.stepCount(), a.stateRecords()).ok());
        for (int i = 2; i < 5; ++i) {
            a.step({gs[size_t(i)]}, 0.01);
            b.step({gs[size_t(i)]}, 0.01);
        }
        QVERIFY2(at::equal(p1, p2), name);
        QCOMPARE(b.stepCount(), 5);
        // Restoring no state at all (a run saved before its first step) leaves a working
        // optimizer, including Adagrad, which expects its state to exist from the start.
        Optimizer fresh(c, {p2});
        QVERIFY(fresh.restore(0, {}).ok());
        fresh.step({gs[0]}, 0.01);
        QVERIFY2(!at::equal(p1, p2), name);
    }
    // State that does not fit the parameters is refused.
    OptimizerConfig c;
    at::Tensor p = at::rand({2});
    Optimizer a(c, {p});
    a.step({at::ones({2})}, 0.1);
    at::Tensor other = at::rand({3});
    Optimizer b(c, {other});
    QVERIFY(!b.restore(1, a.stateRecords()).ok());
}

void TestEngine::learningRateSchedule() {
    QCOMPARE(scheduledLr(0.1, 0, 0, 100, false), 0.1);
    QCOMPARE(scheduledLr(0.1, 0, 4, 100, false), 0.025);
    QCOMPARE(scheduledLr(0.1, 3, 4, 100, false), 0.1);
    QCOMPARE(scheduledLr(0.1, 99, 4, 100, false), 0.1);
    QCOMPARE(scheduledLr(0.1, 4, 4, 104, true), 0.1);
    QVERIFY(std::abs(scheduledLr(0.1, 54, 4, 104, true) - 0.05) < 1e-12);
    QVERIFY(scheduledLr(0.1, 104, 4, 104, true) < 1e-12);
}

void TestEngine::samplerIsAPermutationPerEpoch() {
    EpochSampler s(103, 5);
    QCOMPARE(s.stepsPerEpoch(10), 11);
    std::vector<int64_t> e0;
    while (s.remaining() > 0) {
        const auto b = s.next(10);
        QVERIFY(b.size() == 10 || (b.size() == 3 && s.remaining() == 0));
        e0.insert(e0.end(), b.begin(), b.end());
    }
    std::vector<int64_t> sorted = e0;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 103; ++i)
        QCOMPARE(sorted[size_t(i)], i);
    s.nextEpoch();
    const auto e1 = s.next(103);
    QVERIFY(e1 != e0);
    EpochSampler again(103, 5);
    QVERIFY(again.next(103) == e0); // the seed alone fixes the order
    EpochSampler other(103, 6);
    QVERIFY(other.next(103) != e0);
}

void TestEngine::samplerSeekReproduces() {
    EpochSampler a(50, 1);
    a.nextEpoch();
    a.nextEpoch();
    a.next(17);
    const auto rest = a.next(50);
    EpochSampler b(50, 1);
    QVERIFY(b.seek(2, 17));
    QVERIFY(b.next(50) == rest);
    QVERIFY(!b.seek(0, 51));
    QVERIFY(!b.seek(-1, 0));
}

void TestEngine::tensorRecordRoundTrip() {
    for (at::ScalarType t :
         {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong, at::kByte}) {
        const at::Tensor x = (at::rand({2, 3}) * 100).to(t);
        const TensorRecord r = toRecord("x", x.t()); // non-contiguous on purpose
        QCOMPARE(r.shape, (std::vector<int64_t>{3, 2}));
        auto back = fromRecord(r);
        QVERIFY(back.ok());
        QVERIFY(at::equal(*back, x.t()));
    }
    TensorRecord bad = toRecord("y", at::rand({4}));
    bad.data.chop(1);
    QVERIFY(!fromRecord(bad).ok());
}

void TestEngine::runningStatsAreGatheredAgain() {
    // Statistics left far from the data (as an outer step leaves them) come back to what the
    // model's layers see: 32 training-mode passes leave 3% of the stale figures.
    QVERIFY(!hasRunningStats(zoo("mlp")));
    torch::jit::Module m = zoo("resnet8");
    QVERIFY(hasRunningStats(m));
    const auto data = randomImages(512, 3, {3, 32, 32});
    at::Tensor mean, var;
    for (const auto& b : m.named_buffers(true)) {
        if (b.name == "bn1.running_mean")
            mean = b.value;
        if (b.name == "bn1.running_var")
            var = b.value;
    }
    QVERIFY(mean.defined() && var.defined());
    {
        at::NoGradGuard g;
        mean.fill_(50.0);
        var.fill_(1e3);
    }
    refreshRunningStats(m, *data, 64, 32);
    QVERIFY2(mean.abs().max().item<double>() < 5.0,
             qPrintable(QString::number(mean.abs().max().item<double>())));
    QVERIFY2(var.max().item<double>() < 50.0,
             qPrintable(QString::number(var.max().item<double>())));
    // A second refresh starts from figures that already fit: it moves them by 3% of what the
    // first moved them, no more.
    const double firstMove = (mean - 50.0).abs().max().item<double>();
    const at::Tensor once = mean.clone();
    refreshRunningStats(m, *data, 64, 32);
    const double secondMove = (mean - once).abs().max().item<double>();
    QVERIFY2(secondMove < 0.05 * firstMove,
             qPrintable(QStringLiteral("%1 then %2").arg(firstMove).arg(secondMove)));
}

void TestEngine::gatherScalesImages() {
    Dataset d;
    d.sampleShape = {1, 2, 2};
    d.u8 = {0, 255, 51, 102, 1, 2, 3, 4};
    d.labels = {7, 3};
    const at::Tensor x = gatherInputs(d, {1, 0});
    QCOMPARE(x.sizes().vec(), (std::vector<int64_t>{2, 1, 2, 2}));
    QCOMPARE(x.scalar_type(), at::kFloat);
    QVERIFY(at::allclose(x[1].flatten(), at::tensor(std::vector<float>{0.f, 1.f, 0.2f, 0.4f})));
    QCOMPARE(gatherTargets(d, {1, 0, 0})[0].item<int64_t>(), 3);
}

void TestEngine::balancerSplitsByThroughput() {
    ThroughputBalancer b;
    const std::vector<QString> ids{QStringLiteral("fast"), QStringLiteral("slow")};
    // Unmeasured workers share equally.
    QCOMPARE(b.split(64, ids), (std::vector<int64_t>{32, 32}));
    // 600 and 200 samples/s, no overhead: 3 to 1.
    b.record(QStringLiteral("fast"), 60, 100.0, 0);
    b.record(QStringLiteral("slow"), 20, 100.0, 0);
    QCOMPARE(b.split(64, ids), (std::vector<int64_t>{48, 16}));
    // The slow one also spends 40 ms a step communicating, measured over a few steps: equal
    // finish times give it less.
    ThroughputBalancer c;
    for (int i = 0; i < ThroughputBalancer::kMinToJudge; ++i) {
        c.record(QStringLiteral("fast"), 60, 100.0, 0);
        c.record(QStringLiteral("slow"), 20, 100.0, 40.0);
    }
    const auto withComm = c.split(64, ids);
    QCOMPARE(withComm[0] + withComm[1], 64);
    QVERIFY(withComm[1] < 16 && withComm[1] > 0);
    // Overhead longer than the whole step, measured again and again: left out (it would only
    // slow the step down).
    ThroughputBalancer d;
    for (int i = 0; i < ThroughputBalancer::kMinToJudge; ++i) {
        d.record(QStringLiteral("fast"), 60, 100.0, 0);
        d.record(QStringLiteral("slow"), 20, 100.0, 500.0);
    }
    QCOMPARE(d.split(64, ids), (std::vector<int64_t>{64, 0}));
    // A memory cap moves the excess to the others; the total always holds.
    QCOMPARE(b.split(64, ids, {40, 0}), (std::vector<int64_t>{40, 24}));
    QCOMPARE(b.split(1, ids)[0] + b.split(1, ids)[1], 1);
    QCOMPARE(b.split(7, {QStringLiteral("solo")}), (std::vector<int64_t>{7}));
    // A real change in speed is followed within a few steps.
    for (int i = 0; i < ThroughputBalancer::kWindow; ++i)
        b.record(QStringLiteral("fast"), 60, 200.0, 0); // now 300 samples/s
    QCOMPARE(b.speed(QStringLiteral("fast")), 300.0);
}

void TestEngine::balancerIsNotFooledByOneStall() {
    const std::vector<QString> ids{QStringLiteral("desktop"), QStringLiteral("laptop")};
    ThroughputBalancer b;
    for (int i = 0; i < 6; ++i) {
        b.record(QStringLiteral("desktop"), 48, 100.0, 5.0);
        b.record(QStringLiteral("laptop"), 16, 100.0, 5.0);
    }
    const std::vector<int64_t> before = b.split(64, ids);
    QVERIFY(before[1] > 0);
    // The laptop's lid closed for 30 s in the middle of a step: that step's round trip, less
    // its compute, is 30 s. It is a stall, not what moving the weights costs.
    b.record(QStringLiteral("laptop"), 16, 100.0, 30000.0);
    QCOMPARE(b.split(64, ids), before);
    QVERIFY(b.overheadMs(QStringLiteral("laptop")) < 10.0);
    // Frozen in the middle of its compute instead: one slow compute does not halve its share.
    b.record(QStringLiteral("laptop"), 16, 30000.0, 5.0);
    QCOMPARE(b.split(64, ids), before);
    // One measurement of a slow link is not enough to leave a new worker out either.
    ThroughputBalancer fresh;
    fresh.record(QStringLiteral("desktop"), 48, 100.0, 5.0);
    fresh.record(QStringLiteral("laptop"), 16, 100.0, 9120.0);
    QVERIFY(fresh.split(64, ids)[1] > 0);
}

void TestEngine::damagedTorchScriptIsRefused() {
    // A TorchScript archive is a zip of stored and deflated entries; LibTorch checks none of
    // their CRCs, so a flipped bit in a weight would load and train silently.
    const QByteArray good = saveScriptModule(zoo("mlp"));
    QVERIFY(verifyZipArchive(good, QStringLiteral("model.pt")).ok());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("model.pt"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(good);
    f.close();
    auto loaded = loadScriptModule(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
    const auto reference = modelTensors(*loaded).params;

    // 50 random single-byte changes anywhere in the file: each is refused with a message that
    // names the file, or (a byte no entry's content depends on) loads exactly the same weights.
    QRandomGenerator rng(7);
    int refused = 0;
    for (int i = 0; i < 50; ++i) {
        QByteArray bad = good;
        const auto at = qsizetype(rng.bounded(int(bad.size())));
        bad[at] = char(bad[at] ^ char(1 + rng.bounded(255)));
        auto m = loadScriptModule(bad, QStringLiteral("model.pt"));
        if (!m) {
            ++refused;
            QVERIFY2(m.error().message.contains(QStringLiteral("model.pt")),
                     qPrintable(m.error().message));
            QVERIFY2(!m.error().message.contains(QStringLiteral("learning rate")),
                     qPrintable(m.error().message));
            continue;
        }
        const auto params = modelTensors(*m).params;
        QCOMPARE(params.size(), reference.size());
        for (size_t p = 0; p < params.size(); ++p)
            QVERIFY2(at::equal(params[p], reference[p]),
                     qPrintable(QStringLiteral("byte %1 changed a weight silently").arg(at)));
    }
    QVERIFY(refused > 0);
    // The weights are the bulk of the file: a change inside them is always refused, with the
    // entry named. The first stored weight tensor (data/0) holds the first layer's weights.
    const auto u16 = [&](qsizetype at) {
        return qsizetype(uchar(good[at])) | (qsizetype(uchar(good[at + 1])) << 8);
    };
    QByteArray flipped = good;
    const qsizetype name = good.indexOf("data/0");
    QVERIFY(name > 30);
    // Its local header: the signature, 26 bytes of fields, then the name.
    const qsizetype header = good.lastIndexOf("PK\x03\x04", name);
    QCOMPARE(header + 30 + u16(header + 26), name + 6);
    const qsizetype data0 = header + 30 + u16(header + 26) + u16(header + 28);
    flipped[data0] = char(flipped[data0] ^ 0x40);
    const Status st = verifyZipArchive(flipped, QStringLiteral("model.pt"));
    QVERIFY(!st.ok());
    QCOMPARE(st.error().code, ErrorCode::Corrupt);
    QVERIFY2(st.error().message.contains(QStringLiteral("CRC")), qPrintable(st.error().message));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(flipped);
    f.close();
    auto fromFile = loadScriptModule(path);
    QVERIFY(!fromFile.ok());
    QVERIFY2(fromFile.error().message.contains(path), qPrintable(fromFile.error().message));
    // Truncated at any length: refused.
    for (qsizetype n : {qsizetype(0), qsizetype(21), good.size() / 2, good.size() - 1})
        QVERIFY(!verifyZipArchive(good.left(n), QStringLiteral("model.pt")).ok());
}

void TestEngine::runDescriptionNumbersKeepTheirRange() {
    // Seconds that do not fit in an int once made milliseconds used to wrap to 704 ms.
    auto r = RunConfig::fromJson(QJsonObject{{QStringLiteral("worker_timeout"), 4294968}});
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("worker_timeout")) &&
                 r.error().message.contains(QStringLiteral("between 1 and 86400")) &&
                 r.error().message.contains(QStringLiteral("4294968")),
             qPrintable(r.error().message));
    // 2^32 + 1 epochs used to be reported as -2147483648.
    r = RunConfig::fromJson(QJsonObject{{QStringLiteral("epochs"), 4294967297.0}});
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("4294967297")),
             qPrintable(r.error().message));
    r = RunConfig::fromJson(QJsonObject{{QStringLiteral("batch"), 2.5}});
    QVERIFY(!r.ok());
    QVERIFY(r.error().message.contains(QStringLiteral("whole number")));
    r = RunConfig::fromJson(QJsonObject{{QStringLiteral("lr"), 0}});
    QVERIFY(!r.ok());
    QVERIFY(r.error().message.contains(QStringLiteral("above 0")));
    r = RunConfig::fromJson(QJsonObject{{QStringLiteral("seed"), -1}});
    QVERIFY(!r.ok());
    // The limits hold at their edges, and validate() applies the same table.
    r = RunConfig::fromJson(
        QJsonObject{{QStringLiteral("worker_timeout"), 86400}, {QStringLiteral("epochs"), 100000}});
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->workerTimeoutS, 86400);
    RunConfig c;
    c.joinTimeoutS = -5;
    QVERIFY(!c.validate().ok());
    // Every field of the table exists in the description written by toJson.
    const QJsonObject written = RunConfig().toJson();
    for (const RunField& f : runFields())
        QVERIFY2(written.contains(QLatin1String(f.key)), f.key);
}

void TestEngine::threadsAreCappedPerCore() {
    QString warning;
    QCOMPARE(threadsFor(0, 2, &warning), 2);
    QCOMPARE(threadsFor(8, 2, &warning), 8);
    QVERIFY(warning.isEmpty());
    QCOMPARE(threadsFor(1024, 2, &warning), 2);
    QVERIFY2(warning.contains(QStringLiteral("1024")) &&
                 warning.contains(QStringLiteral("using 2")),
             qPrintable(warning));
}

void TestEngine::trainsPastTheProfilingRuns() {
    // LibTorch 2.x profiles a module's first runs and then optimizes its graph; with the
    // TensorExpr fuser on, Debian 13's LibTorch 2.6 never finished compiling the fused kernel
    // of the mlp's third step (a worker hung after two steps). Loading a model turns it off.
    torch::jit::Module m = zoo("mlp");
    QVERIFY(!torch::jit::tensorExprFuserEnabled());
    m.train();
    const at::Tensor x = at::rand({8, 1, 28, 28});
    for (int step = 0; step < 10; ++step) {
        for (const at::Tensor& p : modelTensors(m).params)
            if (p.grad().defined())
                p.mutable_grad().zero_();
        const at::Tensor loss = m.forward({x}).toTensor().sum();
        loss.backward();
        QVERIFY(std::isfinite(loss.item<double>()));
    }
}

void TestEngine::choosingDevices() {
    DeviceInfo cuda0, cuda1, cpu;
    cuda0.kind = cuda1.kind = QStringLiteral("cuda");
    cuda1.index = 1;
    cpu.kind = QStringLiteral("cpu");
    const QList<DeviceInfo> two{cuda0, cuda1, cpu};
    QCOMPARE(chooseDevice(two, {})->torchDevice(), QStringLiteral("cuda:0"));
    QCOMPARE(chooseDevice(two, QStringLiteral("auto"))->torchDevice(), QStringLiteral("cuda:0"));
    QCOMPARE(chooseDevice(two, QStringLiteral("cuda:1"))->torchDevice(), QStringLiteral("cuda:1"));
    QCOMPARE(chooseDevice(two, QStringLiteral("CUDA"))->torchDevice(), QStringLiteral("cuda:0"));
    QCOMPARE(chooseDevice(two, QStringLiteral("cpu"))->torchDevice(), QStringLiteral("cpu"));
    // A device this machine lacks, and a name that is no device, are told apart.
    auto missing = chooseDevice(two, QStringLiteral("cuda:2"));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::InvalidArgument);
    QVERIFY2(missing.error().message.contains(QLatin1String("cuda:0, cuda:1, cpu")),
             qPrintable(missing.error().message));
    auto typo = chooseDevice(two, QStringLiteral("gpu"));
    QVERIFY(!typo);
    QVERIFY(typo.error().message.contains(QLatin1String("unknown device")));
    QVERIFY(!chooseDevice({cpu}, QStringLiteral("mps")));
    // --devices all: every GPU, each a worker; the CPU only where there is no GPU.
    auto all = chooseDevices(two, QStringLiteral("all"));
    QCOMPARE(all->size(), 2);
    QCOMPARE(all->at(1).torchDevice(), QStringLiteral("cuda:1"));
    QCOMPARE(chooseDevices({cpu}, QStringLiteral("all"))->first().kind, QStringLiteral("cpu"));
    QCOMPARE(chooseDevices(two, QStringLiteral("cuda:1,cpu"))->size(), 2);
    QVERIFY(!chooseDevices(two, QStringLiteral("cuda:0,cuda:5")));
    QVERIFY(!chooseDevices(two, QStringLiteral(",")));
    // This machine: the CPU is always there.
    QCOMPARE(chooseDevice(detectDevices(), QStringLiteral("cpu"))->kind, QStringLiteral("cpu"));
}

void TestEngine::mpsMemoryLimitsUnlessTheUserChose() {
    const MpsMemoryDefaults d = mpsMemoryDefaults(nullptr, nullptr);
    QCOMPARE(d.count, 2);
    QCOMPARE(QByteArray(d.settings[0].name), QByteArray("PYTORCH_MPS_HIGH_WATERMARK_RATIO"));
    // The low mark must stay at or below the high one, or MPS refuses to start.
    QVERIFY(std::atof(d.settings[1].value) <= std::atof(d.settings[0].value));
    QVERIFY(std::atof(d.settings[0].value) <= 1.0);
    QCOMPARE(mpsMemoryDefaults("1.7", nullptr).count, 0);
    QCOMPARE(mpsMemoryDefaults(nullptr, "0.5").count, 0);
    QCOMPARE(mpsMemoryDefaults("", "").count, 2);
}

void TestEngine::bf16AutocastOnCpu() {
    QVERIFY(autocastSupported(c10::DeviceType::CPU, at::kBFloat16, nullptr));
    const at::Tensor a = at::rand({4, 8}), w = at::rand({3, 8});
    {
        AutocastScope scope(c10::DeviceType::CPU, at::kBFloat16);
        QCOMPARE(at::linear(a, w).scalar_type(), at::kBFloat16);
    }
    QCOMPARE(at::linear(a, w).scalar_type(), at::kFloat); // the scope put things back

    // A replica in bf16 computes fp32 gradients for its fp32 weights, close to fp32's own.
    const torch::jit::Module m = zoo("mlp", 3);
    auto data = randomImages(64);
    ReplicaOptions bf16;
    bf16.precision = Precision::Bf16;
    ModelReplica full(cpuDevice(), m, data), half(cpuDevice(), m, data, bf16);
    QCOMPARE(half.precision(), Precision::Bf16);
    QVERIFY(half.precisionNote().isEmpty());
    WorkRequest req;
    req.indices = iota(64);
    auto a32 = full.compute(req, QStringLiteral("fp32"));
    auto a16 = half.compute(req, QStringLiteral("bf16"));
    QVERIFY(a32 && a16);
    for (size_t i = 0; i < a32->grads.size(); ++i) {
        QCOMPARE(a16->grads[i].scalar_type(), at::kFloat);
        const double rel = (a16->grads[i] - a32->grads[i]).norm().item<double>() /
                           (a32->grads[i].norm().item<double>() + 1e-12);
        QVERIFY2(rel < 0.05, qPrintable(QString::number(rel)));
        QVERIFY(rel > 0); // bf16 really ran: its rounding shows
    }
    QVERIFY(std::abs(a16->lossSum - a32->lossSum) / a32->lossSum < 0.01);
}

void TestEngine::precisionFallsBackWithAReason() {
    QString note;
    QCOMPARE(effectivePrecision(Precision::Fp16, cpuDevice(), &note), Precision::Fp32);
    QVERIFY2(note.contains(QLatin1String("fp16")) && note.contains(QLatin1String("fp32")),
             qPrintable(note));
    note.clear();
    QCOMPARE(effectivePrecision(Precision::Bf16, cpuDevice(), &note), Precision::Bf16);
    QVERIFY(note.isEmpty());
    DeviceInfo turing;
    turing.kind = QStringLiteral("cuda");
    turing.name = QStringLiteral("GeForce RTX 2080");
    turing.capability = QStringLiteral("7.5");
    QCOMPARE(effectivePrecision(Precision::Bf16, turing, &note), Precision::Fp32);
    QVERIFY2(note.contains(QLatin1String("7.5")), qPrintable(note));
    QCOMPARE(effectivePrecision(Precision::Fp16, turing, &note), Precision::Fp16);
    DeviceInfo mps;
    mps.kind = QStringLiteral("mps");
    std::string why;
    const bool mpsHalf = autocastSupported(c10::DeviceType::MPS, at::kHalf, &why);
    QCOMPARE(mpsHalf, bool(TANDEM_TORCH_AT_LEAST(2, 5)));
    QCOMPARE(effectivePrecision(Precision::Fp16, mps, nullptr),
             mpsHalf ? Precision::Fp16 : Precision::Fp32);
    // The replica applies the same rule and keeps the reason for the log.
    ReplicaOptions fp16;
    fp16.precision = Precision::Fp16;
    ModelReplica r(cpuDevice(), zoo("mlp"), randomImages(8), fp16);
    QCOMPARE(r.precision(), Precision::Fp32);
    QVERIFY(!r.precisionNote().isEmpty());
    QVERIFY(parse<Precision>(QStringLiteral("bf16")) == Precision::Bf16);
    QVERIFY(!parse<Precision>(QStringLiteral("fp8")));
}

void TestEngine::lossScalerSkipsOverflowAndGrows() {
    LossScaler s;
    QCOMPARE(s.scale(), 65536.0);
    std::vector<at::Tensor> g{at::full({3}, 65536.0), at::full({2}, 131072.0)};
    QVERIFY(s.unscale(g));
    QVERIFY(at::allclose(g[0], at::ones({3})));
    QVERIFY(at::allclose(g[1], at::full({2}, 2.0)));
    std::vector<at::Tensor> bad{at::ones({3}), at::tensor(std::vector<float>{1.f, INFINITY})};
    QVERIFY(!s.unscale(bad));
    QCOMPARE(s.scale(), 32768.0);
    std::vector<at::Tensor> nan{at::tensor(std::vector<float>{NAN})};
    QVERIFY(!s.unscale(nan));
    QCOMPARE(s.scale(), 16384.0);
    for (int i = 0; i < LossScaler::kGrowthInterval - 1; ++i) {
        std::vector<at::Tensor> ok{at::ones({1})};
        QVERIFY(s.unscale(ok));
    }
    QCOMPARE(s.scale(), 16384.0);
    std::vector<at::Tensor> ok{at::ones({1})};
    QVERIFY(s.unscale(ok));
    QCOMPARE(s.scale(), 32768.0); // 2000 good steps in a row double it
}

void TestEngine::fp16OverflowIsRecomputedNotApplied() {
    // fp16 autocast needs a GPU, but the loss scaler's part of a step does not: a scale of
    // 3e38 overflows even fp32. The replica must halve the scale and compute the same samples
    // again until the gradients are finite, and return those, which equal the unscaled ones.
    const torch::jit::Module m = zoo("mlp", 7);
    auto data = randomImages(32);
    ReplicaOptions huge;
    huge.lossScale = 3e38;
    ModelReplica plain(cpuDevice(), m, data), scaled(cpuDevice(), m, data, huge);
    WorkRequest req;
    req.indices = iota(32);
    auto a = plain.compute(req, QStringLiteral("plain"));
    auto b = scaled.compute(req, QStringLiteral("scaled"));
    QVERIFY(a);
    QVERIFY2(b, b ? "" : qPrintable(b.error().message));
    QCOMPARE(b->samples, int64_t(32));
    QVERIFY(b->buffers.empty());
    QVERIFY(std::abs(a->lossSum - b->lossSum) < 1e-4 * a->lossSum); // counted once
    for (size_t i = 0; i < a->grads.size(); ++i) {
        QVERIFY(at::isfinite(b->grads[i]).all().item<bool>());
        QVERIFY(at::allclose(a->grads[i], b->grads[i], 1e-3, 1e-6));
    }
}

void TestEngine::retriesLeaveNoTraceInBatchNorm() {
    // The overflowing attempts ran whole forward passes; their BatchNorm statistics must not
    // count. After the step, the buffers are those of one clean pass.
    const torch::jit::Module m = zoo("resnet8", 2);
    auto data = randomImages(16, 3, {3, 32, 32});
    ReplicaOptions huge;
    huge.lossScale = 1e40; // beyond fp32: every attempt overflows until the scale is back in range
    ModelReplica plain(cpuDevice(), m, data), scaled(cpuDevice(), m, data, huge);
    WorkRequest req;
    req.indices = iota(16);
    auto a = plain.compute(req, QStringLiteral("plain"));
    auto b = scaled.compute(req, QStringLiteral("scaled"));
    QVERIFY(a && b);
    QCOMPARE(a->buffers.size(), b->buffers.size());
    QVERIFY(!a->buffers.empty());
    for (size_t i = 0; i < a->buffers.size(); ++i)
        QVERIFY2(
            at::allclose(a->buffers[i].to(at::kDouble), b->buffers[i].to(at::kDouble), 1e-4, 1e-6),
            qPrintable(QString::number(i)));
}

void TestEngine::outOfMemoryRetriesInHalves() {
    const torch::jit::Module m = zoo("mlp", 5);
    auto data = randomImages(64);
    ReplicaOptions small;
    small.faultOomAbove = 20; // more than 20 samples at once fails as an allocator would
    ModelReplica whole(cpuDevice(), m, data), parts(cpuDevice(), m, data, small);
    WorkRequest req;
    req.indices = iota(64);
    auto a = whole.compute(req, QStringLiteral("whole"));
    auto b = parts.compute(req, QStringLiteral("parts"));
    QVERIFY(a);
    QVERIFY2(b, b ? "" : qPrintable(b.error().message));
    // 64 failed, then 32; 16 fits. The step is the same mean gradient over all 64 samples.
    QCOMPARE(a->memoryCap, int64_t(0));
    QCOMPARE(b->memoryCap, int64_t(16));
    QCOMPARE(b->notes.size(), 2);
    QVERIFY2(b->notes[0].contains(QLatin1String("64")) && b->notes[0].contains(QLatin1String("32")),
             qPrintable(b->notes[0]));
    QCOMPARE(b->samples, int64_t(64));
    QVERIFY(std::abs(a->lossSum - b->lossSum) < 1e-3 * a->lossSum);
    QCOMPARE(a->correct, b->correct);
    for (size_t i = 0; i < a->grads.size(); ++i)
        QVERIFY(at::allclose(a->grads[i], b->grads[i], 1e-4, 1e-6));
    // Later steps start at the size that worked, with nothing more to say.
    auto c = parts.compute(req, QStringLiteral("parts"));
    QVERIFY(c);
    QVERIFY(c->notes.isEmpty());
    QCOMPARE(c->memoryCap, int64_t(16));
}

void TestEngine::balancerKeepsAMemoryCap() {
    // A worker that ran out of memory at 64 and fits 32 never gets more than 32, however fast.
    ThroughputBalancer b;
    const std::vector<QString> ws{QStringLiteral("gpu"), QStringLiteral("cpu")};
    for (int i = 0; i < 6; ++i) {
        b.record(ws[0], 100, 10.0, 1.0);  // 10,000 samples/s
        b.record(ws[1], 100, 100.0, 1.0); // 1,000 samples/s
    }
    const auto free = b.split(128, ws);
    QVERIFY(free[0] > 100);
    const auto capped = b.split(128, ws, {32, 0});
    QCOMPARE(capped[0], int64_t(32));
    QCOMPARE(capped[1], int64_t(96));
}

void TestEngine::replicaReadsTheCoordinatorsWeightsInPlace() {
    const torch::jit::Module m = zoo("mlp", 5);
    auto data = randomImages(32);
    ModelTensors master = modelTensors(m.deepcopy());
    std::vector<at::Tensor> params, buffers;
    for (const at::Tensor& p : master.params)
        params.push_back(p.detach().clone().add_(0.01));
    for (const at::Tensor& b : master.buffers)
        buffers.push_back(b.detach().clone());
    ModelReplica shared(cpuDevice(), m, data), copied(cpuDevice(), m, data);
    WorkRequest req;
    req.indices = iota(32);
    req.params = &params;
    req.buffers = &buffers;
    auto a = shared.compute(req, QStringLiteral("shared"));
    QVERIFY(a);
    // No copy: the replica's parameters are the coordinator's memory.
    for (size_t i = 0; i < params.size(); ++i)
        QCOMPARE(shared.params()[i].data_ptr(), params[i].data_ptr());
    // The coordinator's step in place is what the next request computes with, exactly as a
    // copy of the new weights would be.
    {
        at::NoGradGuard noGrad;
        for (at::Tensor& p : params)
            p.mul_(0.5);
    }
    auto b = shared.compute(req, QStringLiteral("shared"));
    std::vector<at::Tensor> fresh;
    for (const at::Tensor& p : params)
        fresh.push_back(p.clone());
    req.params = &fresh;
    auto c = copied.compute(req, QStringLiteral("copied"));
    QVERIFY(b && c);
    QCOMPARE(b->lossSum, c->lossSum);
    for (size_t i = 0; i < b->grads.size(); ++i)
        QVERIFY(at::equal(b->grads[i], c->grads[i]));
    // Local-SGD's inner steps write to the replica's parameters: those get memory of their own
    // and the coordinator's weights stay as they were.
    req.params = &params;
    req.innerSteps = 2;
    req.innerLr = 0.1;
    std::vector<at::Tensor> before;
    for (const at::Tensor& p : params)
        before.push_back(p.clone());
    auto d = shared.compute(req, QStringLiteral("shared"));
    QVERIFY(d);
    for (size_t i = 0; i < params.size(); ++i) {
        QVERIFY(shared.params()[i].data_ptr() != params[i].data_ptr());
        QVERIFY(at::equal(params[i], before[i]));
    }
    QVERIFY(d->grads[0].abs().sum().item<double>() > 0); // the delta of real inner steps
}

void TestEngine::gradientBundleFillsFromTheFront() {
    // Three parameters; a result bundle holds them last first, then the buffer.
    const std::vector<at::Tensor> params{at::zeros({2}), at::zeros({3}), at::zeros({4})};
    const std::vector<at::Tensor> buffers{at::zeros({1})};
    const ModelLayout layout = ModelLayout::of({"a", "b", "c"}, params, {"n"}, buffers);
    GradientBundle g(layout, DType::F32);
    QCOMPARE(g.size(), qint64((2 + 3 + 4 + 1) * 4));
    QByteArray bytes = g.begin();
    QCOMPARE(g.ready(), qint64(0));
    // Out of order: "b" is final before "c", but nothing can go before "c" does.
    QCOMPARE(g.add(1, at::full({3}, 2.0)), qint64(-1));
    QCOMPARE(g.ready(), qint64(0));
    QCOMPARE(g.add(2, at::full({4}, 3.0)), qint64((4 + 3) * 4));
    QCOMPARE(g.add(2, at::full({4}, 9.0)), qint64(-1)); // once only
    // "a" never had a gradient: zeros, and the buffers, when the step ends.
    g.finish({at::Tensor(), at::Tensor(), at::Tensor()}, {at::full({1}, 7.0)});
    QCOMPARE(g.ready(), g.size());
    std::vector<at::Tensor> gp, gb;
    QVERIFY(unpackBundle(bytes, layout, DType::F32, &gp, &gb, BundleOrder::Backward).ok());
    QVERIFY(at::equal(gp[0], at::zeros({2})));
    QVERIFY(at::equal(gp[1], at::full({3}, 2.0)));
    QVERIFY(at::equal(gp[2], at::full({4}, 3.0)));
    QVERIFY(at::equal(gb[0], at::full({1}, 7.0)));
    // The same bytes as packing the finished gradients in one go.
    QCOMPARE(packBundle({at::zeros({2}), at::full({3}, 2.0), at::full({4}, 3.0)},
                        {at::full({1}, 7.0)}, DType::F32, nullptr, BundleOrder::Backward),
             bytes);
    // In fp16 on the wire, converted on the way in.
    GradientBundle h(layout, DType::F16);
    const QByteArray half = h.begin();
    h.add(2, at::full({4}, 0.5));
    h.finish({at::full({2}, 1.0), at::full({3}, 2.0), at::Tensor()}, {at::full({1}, 7.0)});
    QVERIFY(unpackBundle(half, layout, DType::F16, &gp, &gb, BundleOrder::Backward).ok());
    QVERIFY(at::equal(gp[2], at::full({4}, 0.5)));
    QVERIFY(at::equal(gp[0], at::full({2}, 1.0)));
}

void TestEngine::replicaStreamsGradientsDuringBackward() {
    const torch::jit::Module m = zoo("mnist-cnn", 3);
    auto data = randomImages(16);
    ModelReplica r(cpuDevice(), m, data);
    WorkRequest req;
    req.indices = iota(16);
    std::vector<at::Tensor> streamed(r.params().size());
    std::vector<size_t> order;
    req.onGradient = [&](size_t i, const at::Tensor& g) {
        order.push_back(i);
        streamed[i] = g.clone();
    };
    auto a = r.compute(req, QStringLiteral("streamed"));
    QVERIFY(a);
    QVERIFY(a->streamed);
    // Every parameter's gradient came once, during the pass, and is the step's gradient.
    QCOMPARE(order.size(), r.params().size());
    for (size_t i = 0; i < streamed.size(); ++i)
        QVERIFY(at::equal(streamed[i], a->grads[i]));
    // The last layer's first: backward order, which result bundles follow.
    QCOMPARE(order.front(), r.params().size() - 1);
    // A step computed in parts (after running out of memory) is not streamed.
    ReplicaOptions small;
    small.faultOomAbove = 8;
    ModelReplica parts(cpuDevice(), m, data, small);
    order.clear();
    auto b = parts.compute(req, QStringLiteral("parts"));
    QVERIFY(b);
    QVERIFY(!b->streamed);
    QVERIFY(order.empty());
    // Nor are local-SGD's rounds.
    req.innerSteps = 2;
    req.innerLr = 0.01;
    auto c = r.compute(req, QStringLiteral("local"));
    QVERIFY(c);
    QVERIFY(!c->streamed);
}

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
