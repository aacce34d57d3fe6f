// The model zoo and models read as TorchScript: names and shapes against the PyTorch
// originals, seeded initialisation, train and eval modes, loading errors, schema hashes and
// running statistics.

#include "engine/coordinator/balancer.h"
#include "engine/devices.h"
#include "engine/step/batch.h"
#include "engine/step/modelcheck.h"
#include "engine/step/optimizer.h"
#include "engine/step/precision.h"
#include "engine/step/replica.h"
#include "engine/step/sampler.h"
#include "engine/training.h"
#include "engine/wire/wiretensors.h"
#include "engine/wire/workwire.h"
#include "formats/ziparchive.h"
#include "model/scriptmodel.h"
#include "model/torchcompat.h"

#include "enginetestutil.h"
#include "testutil.h"

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
#include <mutex>
#include <thread>

using namespace tandem;

using namespace tandem;
using namespace tandem::testing;

class TestZoo : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void mlpNamesAndShapes();
    void mnistCnnIsThePytorchExample();
    void resnet8ShapesAndBuffers();
    void zooInitIsSeededAndBounded();
    void unknownModelIsAnError();
    void batchNormFollowsTrainAndEval();
    void userScriptWithDropoutFollowsTrainAndEval();
    void loadScriptModuleErrors();
    void schemaHashTellsModelsApart();
    void damagedTorchScriptIsRefused();
    void runningStatsAreGatheredAgain();
    void trainsPastTheProfilingRuns();
    void runKeepsItsOperatorsOnTheComputeThread();
};

void TestZoo::mlpNamesAndShapes() {
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

void TestZoo::mnistCnnIsThePytorchExample() {
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

void TestZoo::resnet8ShapesAndBuffers() {
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

void TestZoo::zooInitIsSeededAndBounded() {
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

void TestZoo::unknownModelIsAnError() {
    auto m = buildZooModel(QStringLiteral("gpt5"), 0);
    QVERIFY(!m.ok());
    QCOMPARE(m.error().code, ErrorCode::InvalidArgument);
    QVERIFY(m.error().message.contains(QStringLiteral("mlp, mnist-cnn, resnet8")));
}

void TestZoo::batchNormFollowsTrainAndEval() {
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

void TestZoo::userScriptWithDropoutFollowsTrainAndEval() {
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

void TestZoo::loadScriptModuleErrors() {
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

void TestZoo::schemaHashTellsModelsApart() {
    const QByteArray a = schemaHash(modelTensors(zoo("mlp", 1)));
    QCOMPARE(a, schemaHash(modelTensors(zoo("mlp", 2)))); // weights do not matter
    QVERIFY(a != schemaHash(modelTensors(zoo("mnist-cnn"))));
    QCOMPARE(a.size(), 64);
}

void TestZoo::damagedTorchScriptIsRefused() {
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

void TestZoo::runningStatsAreGatheredAgain() {
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

void TestZoo::trainsPastTheProfilingRuns() {
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

// A CPU run at two threads has one OpenMP team: the thread that coordinates runs its
// operators serially (its steps' optimizer work is small), and the evaluation, its large work,
// runs on the local worker's thread with the run's threads. The caller's thread gets its
// thread count back when the run ends.
void TestZoo::runKeepsItsOperatorsOnTheComputeThread() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    testutil::writeIdxDataset(tmp.filePath(QStringLiteral("data")), 256, 64, false);
    struct Seen : RunObserver {
        std::mutex mutex;
        std::thread::id stepThread, evalThread;
        int stepThreads = 0, evalThreads = 0;
        void onStep(const StepMetrics&) override {
            std::lock_guard<std::mutex> lock(mutex);
            stepThread = std::this_thread::get_id();
            stepThreads = at::get_num_threads();
        }
        void onEvaluating(int64_t done, int64_t) override {
            if (done == 0)
                return; // announced by the run before the evaluation starts
            std::lock_guard<std::mutex> lock(mutex);
            evalThread = std::this_thread::get_id();
            evalThreads = at::get_num_threads();
        }
    };
    auto run = [&](int threads, Seen& seen) {
        RunConfig cfg;
        // At two threads a model above a million trainable values, whose optimizer step then
        // runs on the compute thread too.
        cfg.model = threads > 1 ? QStringLiteral("mnist-cnn") : QStringLiteral("mlp");
        cfg.data = QStringLiteral("mnist:") + tmp.filePath(QStringLiteral("data"));
        cfg.batch = 32;
        cfg.evalBatch = 16;
        cfg.threads = threads;
        cfg.outDir = tmp.filePath(QStringLiteral("run%1").arg(threads));
        return runTraining(cfg, QString(), &seen, nullptr);
    };
    if (QThread::idealThreadCount() < 2) {
        at::set_num_threads(1);
        QSKIP("one core: a run has one thread, and no second team to avoid");
    }
    Seen two;
    auto r = run(2, two);
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(two.stepThreads, 1);
    QCOMPARE(two.evalThreads, 2);
    QVERIFY(two.evalThread != two.stepThread);
    QCOMPARE(at::get_num_threads(), 2); // given back
    QVERIFY(r->test.hasAccuracy());

    Seen one; // one thread: nothing to keep apart, the evaluation stays where it was
    r = run(1, one);
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(one.stepThreads, 1);
    QCOMPARE(one.evalThreads, 1);
    QVERIFY(one.evalThread == one.stepThread);
    at::set_num_threads(1);
}

QTEST_GUILESS_MAIN(TestZoo)
#include "test_zoo.moc"
