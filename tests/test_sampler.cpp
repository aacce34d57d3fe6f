// Samples into batches: the sampler's permutations and seeking, gathering rows into tensors, and
// tensor records.

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

class TestSampler : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void samplerIsAPermutationPerEpoch();
    void samplerSeekReproduces();
    void tensorRecordRoundTrip();
    void gatherScalesImages();
};

void TestSampler::samplerIsAPermutationPerEpoch() {
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

void TestSampler::samplerSeekReproduces() {
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

void TestSampler::tensorRecordRoundTrip() {
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

void TestSampler::gatherScalesImages() {
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

QTEST_GUILESS_MAIN(TestSampler)
#include "test_sampler.moc"
