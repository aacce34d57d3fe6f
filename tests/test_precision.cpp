// Mixed precision: bf16 autocast on the CPU, fallbacks with their reasons, and the fp16 loss
// scaler's skipped and recomputed steps.

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

class TestPrecision : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void bf16AutocastOnCpu();
    void precisionFallsBackWithAReason();
    void lossScalerSkipsOverflowAndGrows();
    void fp16OverflowIsRecomputedNotApplied();
};

void TestPrecision::bf16AutocastOnCpu() {
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

void TestPrecision::precisionFallsBackWithAReason() {
    QString note;
    QCOMPARE(effectivePrecision(Precision::Fp16, cpuDevice(), &note), Precision::Fp32);
    QVERIFY2(note.contains(QLatin1String("fp16")) && note.contains(QLatin1String("fp32")),
             qPrintable(note));
    note.clear();
    QCOMPARE(effectivePrecision(Precision::Bf16, cpuDevice(), &note), Precision::Bf16);
    QVERIFY(note.isEmpty());
    DeviceInfo turing;
    turing.kind = DeviceKind::Cuda;
    turing.name = QStringLiteral("GeForce RTX 2080");
    turing.capability = QStringLiteral("7.5");
    QCOMPARE(effectivePrecision(Precision::Bf16, turing, &note), Precision::Fp32);
    QVERIFY2(note.contains(QLatin1String("7.5")), qPrintable(note));
    QCOMPARE(effectivePrecision(Precision::Fp16, turing, &note), Precision::Fp16);
    DeviceInfo mps;
    mps.kind = DeviceKind::Mps;
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

void TestPrecision::lossScalerSkipsOverflowAndGrows() {
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

void TestPrecision::fp16OverflowIsRecomputedNotApplied() {
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

QTEST_GUILESS_MAIN(TestPrecision)
#include "test_precision.moc"
