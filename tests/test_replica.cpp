// A model replica's step: out-of-memory retries in halves that leave no trace, the
// coordinator's weights read in place, and gradients streamed into the bundle during the
// backward pass.

#include "engine/coordinator/balancer.h"
#include "engine/devices.h"
#include "engine/modes/rounds.h"
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

using namespace tandem;
using namespace tandem::testing;

class TestReplica : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void retriesLeaveNoTraceInBatchNorm();
    void outOfMemoryRetriesInHalves();
    void replicaReadsTheCoordinatorsWeightsInPlace();
    void aReplicaThatSharesWeightsHoldsNoCopyFromTheStart();
    void resultsOnTheDeviceAreTheSameResults();
    void gradientBundleFillsFromTheFront();
    void replicaStreamsGradientsDuringBackward();
    void aWorkerTakesOnlyTheRoundsItsRunSaid();
};

void TestReplica::retriesLeaveNoTraceInBatchNorm() {
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

void TestReplica::outOfMemoryRetriesInHalves() {
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

void TestReplica::replicaReadsTheCoordinatorsWeightsInPlace() {
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
    req.local = localSgdRound(2, 0.1);
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
    // The delta is start - end exactly (computed in the start's own memory), and a second round
    // on the same round state takes its start afresh.
    std::unique_ptr<RoundState> state;
    auto e = copied.compute(req, QStringLiteral("copied"), &state);
    QVERIFY(e);
    for (size_t i = 0; i < params.size(); ++i)
        QVERIFY(at::equal(e->grads[i], params[i] - copied.params()[i]));
    std::vector<at::Tensor> second;
    for (const at::Tensor& p : copied.params())
        second.push_back(p.detach().clone());
    req.params = nullptr;
    req.buffers = nullptr;
    auto f = copied.compute(req, QStringLiteral("copied"), &state);
    QVERIFY(f);
    for (size_t i = 0; i < params.size(); ++i)
        QVERIFY(at::equal(f->grads[i], second[i] - copied.params()[i]));
}

void TestReplica::aReplicaThatSharesWeightsHoldsNoCopyFromTheStart() {
    // The in-process worker that reads the coordinator's weights in place (sharesWeights) does
    // so from the start: no copy of the model's weights lives beside them while the run sets up
    // (for a 1.5 B model, 5.8 GiB until the first step), and its steps compute what a replica
    // with a copy of its own computes.
    const Model model(zoo("mlp", 5));
    auto data = randomImages(32);
    const ModelTensors master = modelTensors(model);
    ReplicaOptions sharing;
    sharing.sharesWeights = true;
    ModelReplica shared(cpuDevice(), model, data, sharing), copied(cpuDevice(), model, data);
    QCOMPARE(shared.params().size(), master.params.size());
    for (size_t i = 0; i < master.params.size(); ++i) {
        QVERIFY(shared.params()[i].is_alias_of(master.params[i]));
        QVERIFY(!copied.params()[i].is_alias_of(master.params[i]));
    }
    std::vector<at::Tensor> params = master.params, buffers = master.buffers;
    WorkRequest req;
    req.indices = iota(32);
    req.params = &params;
    req.buffers = &buffers;
    auto a = shared.compute(req, QStringLiteral("shared"));
    auto b = copied.compute(req, QStringLiteral("copied"));
    QVERIFY(a && b);
    QCOMPARE(a->lossSum, b->lossSum);
    for (size_t i = 0; i < a->grads.size(); ++i)
        QVERIFY(at::equal(a->grads[i], b->grads[i]));
}

void TestReplica::resultsOnTheDeviceAreTheSameResults() {
    // The in-process worker of a run whose weights live on its device keeps its results there
    // (ReplicaOptions::resultsOnDevice): the same gradients and batch-norm statistics, the
    // statistics a copy of their own, since the next step's forward pass writes the replica's.
    const torch::jit::Module m = zoo("resnet8", 3);
    auto data = randomImages(8, 3, {3, 32, 32});
    ReplicaOptions onDevice;
    onDevice.resultsOnDevice = true;
    ModelReplica plain(cpuDevice(), m, data), kept(cpuDevice(), m, data, onDevice);
    WorkRequest req;
    req.indices = iota(8);
    auto a = plain.compute(req, QStringLiteral("plain"));
    auto b = kept.compute(req, QStringLiteral("kept"));
    QVERIFY(a && b);
    // The figures stay on the device too, for the coordinator to read when one is due.
    QVERIFY(b->figures.defined());
    QCOMPARE(b->lossSum, 0.0);
    QCOMPARE(a->lossSum, b->figures.lossSum.item<double>());
    QCOMPARE(a->correct, b->figures.correct.item<int64_t>());
    QCOMPARE(a->counted, b->figures.counted.item<int64_t>());
    QCOMPARE(a->grads.size(), b->grads.size());
    for (size_t i = 0; i < a->grads.size(); ++i)
        QVERIFY(at::equal(a->grads[i], b->grads[i]));
    QVERIFY(!b->buffers.empty());
    for (size_t i = 0; i < b->buffers.size(); ++i) {
        QVERIFY(at::equal(a->buffers[i], b->buffers[i]));
        QVERIFY(b->buffers[i].data_ptr() != kept.buffers()[i].data_ptr());
    }
}

void TestReplica::gradientBundleFillsFromTheFront() {
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

void TestReplica::replicaStreamsGradientsDuringBackward() {
    const torch::jit::Module m = zoo("mnist-cnn", 3);
    auto data = randomImages(16);
    ModelReplica r(cpuDevice(), m, data);
    WorkRequest req;
    req.indices = iota(16);
    std::vector<at::Tensor> streamed(r.params().size());
    std::vector<size_t> order;
    int64_t mostHeld = 0; // of the gradients already taken, the most the replica still held
    req.onGradient = [&](size_t i, const at::Tensor& g) {
        int64_t held = 0;
        for (size_t j : order)
            held += r.params()[j].grad().defined() ? 1 : 0;
        mostHeld = std::max(mostHeld, held);
        order.push_back(i);
        streamed[i] = g.clone();
    };
    auto a = r.compute(req, QStringLiteral("streamed"));
    QVERIFY(a);
    QVERIFY(a->streamed);
    // Every parameter's gradient came once, during the pass, and is the step's gradient, which
    // a replica that streams nothing computes.
    ModelReplica plain(cpuDevice(), m, data);
    WorkRequest whole;
    whole.indices = req.indices;
    auto p = plain.compute(whole, QStringLiteral("whole"));
    QVERIFY(p);
    QVERIFY(!p->streamed);
    QCOMPARE(order.size(), r.params().size());
    for (size_t i = 0; i < streamed.size(); ++i)
        QVERIFY(at::equal(streamed[i], p->grads[i]));
    // The replica kept none of them: while the pass ran it held at most the one whose hook came
    // last (the engine stores it after the hook), and at the end none, so the model's gradients
    // are never held twice beside the sink's copy.
    QVERIFY2(mostHeld <= 1, qPrintable(QString::number(mostHeld)));
    for (size_t i = 0; i < streamed.size(); ++i) {
        QVERIFY(!a->grads[i].defined());
        QVERIFY(!r.params()[i].grad().defined());
    }
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
    req.local = localSgdRound(2, 0.01);
    auto c = r.compute(req, QStringLiteral("local"));
    QVERIFY(c);
    QVERIFY(!c->streamed);
}

QTEST_GUILESS_MAIN(TestReplica)
#include "test_replica.moc"

void TestReplica::aWorkerTakesOnlyTheRoundsItsRunSaid() {
    // A worker of a run that said it streams in 4 fragments is planned for streaming's copies:
    // it takes that run's rounds, and refuses a whole local-SGD round or one cut otherwise,
    // which would keep more than its plan counts on. A run that said nothing (a coordinator
    // before the field: 1) plans for local-SGD's copies, which cover any round.
    wire::Assign streaming;
    streaming.innerSteps = 2;
    streaming.lr = 0.1;
    streaming.fragments = 4;
    streaming.sendFragment = 1;
    wire::Assign whole = streaming;
    whole.fragments = 0;
    whole.sendFragment = 0;
    wire::Assign other = streaming;
    other.fragments = 2;
    wire::Assign gradient;
    QVERIFY(requestFrom(streaming, 4).ok());
    QVERIFY(requestFrom(gradient, 4).ok());
    for (const wire::Assign* a : {&whole, &other}) {
        auto r = requestFrom(*a, 4);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.contains(QStringLiteral("in a run it said streams 4")),
                 qPrintable(r.error().message));
    }
    for (const wire::Assign* a : {&streaming, &whole, &other})
        QVERIFY(requestFrom(*a, 1).ok());
}
