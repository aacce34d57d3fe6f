// The optimizers against steps computed by hand, their state's round trip, and the
// learning-rate schedule.

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

class TestOptimizers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void sgdMomentumByHand();
    void sgdNesterovWithWeightDecayByHand();
    void adamByHand();
    void adamWDecouplesWeightDecay();
    void missingGradientLeavesParameterAlone();
    void rmspropByHand();
    void adagradByHand();
    void optimizerStateRoundTrip();
    void multiTensorMatchesPerTensor();
    void aLargeUpdateGoesInPasses();
    void learningRateSchedule();
};

void TestOptimizers::sgdMomentumByHand() {
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

void TestOptimizers::sgdNesterovWithWeightDecayByHand() {
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

void TestOptimizers::adamByHand() {
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

void TestOptimizers::adamWDecouplesWeightDecay() {
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

void TestOptimizers::missingGradientLeavesParameterAlone() {
    at::Tensor a = scalarParam({1.0f}), b = scalarParam({1.0f});
    OptimizerConfig c;
    Optimizer opt(c, {a, b});
    opt.step({scalarParam({1.0f}), at::Tensor()}, 0.1);
    QVERIFY(at::allclose(a, scalarParam({0.9f})));
    QVERIFY(at::equal(b, scalarParam({1.0f})));
}

void TestOptimizers::rmspropByHand() {
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

void TestOptimizers::adagradByHand() {
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

void TestOptimizers::optimizerStateRoundTrip() {
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
        QVERIFY(fresh.restore(0, QList<TensorRecord>{}).ok());
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

// The multi-tensor update is torch::optim's per-tensor one, to the bit, and the fused kernel's
// (LibTorch 2.4 and later) is within fp32 rounding of it: SGD with and without momentum,
// Nesterov and weight decay, Adam and AdamW with and without weight decay, over steps where one
// parameter misses a gradient (so its step count falls behind the others'), then across a
// checkpoint of the state.
void TestOptimizers::multiTensorMatchesPerTensor() {
    using K = OptimizerConfig::Kernels;
    struct Case {
        OptimizerKind kind;
        double momentum, weightDecay;
        bool nesterov;
    };
    const Case cases[] = {
        {OptimizerKind::Sgd, 0, 0, false},     {OptimizerKind::Sgd, 0.9, 0, false},
        {OptimizerKind::Sgd, 0.9, 0.01, true}, {OptimizerKind::Adam, 0, 0, false},
        {OptimizerKind::Adam, 0, 0.01, false}, {OptimizerKind::AdamW, 0, 0.05, false}};
    for (const Case& k : cases) {
        for (K kernels : {K::MultiTensor, K::Fused}) {
            const QByteArray what = QByteArray(nameOf(k.kind).toLatin1()) + " momentum " +
                                    QByteArray::number(k.momentum) + " decay " +
                                    QByteArray::number(k.weightDecay) +
                                    (kernels == K::Fused ? " fused" : " multi-tensor");
            OptimizerConfig c;
            c.kind = k.kind;
            c.momentum = k.momentum;
            c.nesterov = k.nesterov;
            c.weightDecay = k.weightDecay;
            at::manual_seed(7);
            std::vector<at::Tensor> ref = {at::randn({4, 3}), at::randn({5}), at::randn({2, 2, 3})};
            std::vector<at::Tensor> all;
            for (const at::Tensor& t : ref)
                all.push_back(t.clone());
            c.kernels = K::PerTensor;
            Optimizer perTensor(c, ref);
            c.kernels = kernels;
            auto together = std::make_unique<Optimizer>(c, all);
            for (int s = 0; s < 6; ++s) {
                std::vector<at::Tensor> g;
                for (const at::Tensor& t : ref)
                    g.push_back(at::randn(t.sizes()));
                if (s == 2)
                    g[1] = at::Tensor(); // missed: its state and step count stay behind
                perTensor.step(g, 0.01);
                together->step(g, 0.01);
                if (s == 3) {
                    // The state goes through a checkpoint and on.
                    auto restored = std::make_unique<Optimizer>(c, all);
                    QVERIFY(
                        restored->restore(together->stepCount(), together->stateRecords()).ok());
                    together = std::move(restored);
                }
            }
            const bool fused = together->kernelsUsed() == K::Fused;
            QVERIFY2(kernels == K::Fused || !fused, what.constData());
            for (size_t i = 0; i < ref.size(); ++i) {
                if (fused)
                    QVERIFY2(at::allclose(all[i], ref[i], 1e-5, 1e-6), what.constData());
                else
                    QVERIFY2(at::equal(all[i], ref[i]), what.constData());
            }
        }
    }
}

void TestOptimizers::aLargeUpdateGoesInPasses() {
    // A tensor larger than one pass, and smaller ones that share passes and end them: Adam's
    // multi-tensor update gives exactly what torch::optim's loop gives, with both kinds of
    // weight decay.
    using K = OptimizerConfig::Kernels;
    const int64_t pass = 1000;
    for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::AdamW}) {
        OptimizerConfig c;
        c.kind = kind;
        c.weightDecay = 0.01;
        c.passValues = pass;
        at::manual_seed(11);
        std::vector<at::Tensor> ref = {at::randn({pass / 2 + 5}), at::randn({2, pass + 7}),
                                       at::randn({pass / 3}),     at::randn({3, 5}),
                                       at::randn({pass / 2}),     at::randn({pass})};
        std::vector<at::Tensor> all;
        for (const at::Tensor& t : ref)
            all.push_back(t.clone());
        c.kernels = K::PerTensor;
        Optimizer perTensor(c, ref);
        c.kernels = K::MultiTensor;
        Optimizer together(c, all);
        for (int s = 0; s < 3; ++s) {
            std::vector<at::Tensor> g;
            for (const at::Tensor& t : ref)
                g.push_back(at::randn(t.sizes()));
            perTensor.step(g, 0.01);
            together.step(g, 0.01);
        }
        QCOMPARE(together.kernelsUsed(), K::MultiTensor);
        for (size_t i = 0; i < ref.size(); ++i)
            QVERIFY2(at::equal(all[i], ref[i]), qPrintable(nameOf(kind)));
    }
}

void TestOptimizers::learningRateSchedule() {
    QCOMPARE(scheduledLr(0.1, 0, 0, 100, false), 0.1);
    QCOMPARE(scheduledLr(0.1, 0, 4, 100, false), 0.025);
    QCOMPARE(scheduledLr(0.1, 3, 4, 100, false), 0.1);
    QCOMPARE(scheduledLr(0.1, 99, 4, 100, false), 0.1);
    QCOMPARE(scheduledLr(0.1, 4, 4, 104, true), 0.1);
    QVERIFY(std::abs(scheduledLr(0.1, 54, 4, 104, true) - 0.05) < 1e-12);
    QVERIFY(scheduledLr(0.1, 104, 4, 104, true) < 1e-12);
}

QTEST_GUILESS_MAIN(TestOptimizers)
#include "test_optimizers.moc"
