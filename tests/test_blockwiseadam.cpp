// 8-bit AdamW (engine/step/blockwiseadam.h) against a step worked out value by value, its maps
// against the published construction, a tensor stepped in parts against the whole, its state's
// round trip, and its course beside fp32 AdamW's on a small least-squares fit.

#include "engine/shard/shardplan.h"
#include "engine/step/blockwiseadam.h"
#include "engine/step/memoryplan.h"
#include "engine/step/optimizer.h"
#include "engine/training.h"

#include <QTest>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <vector>

using namespace tandem;

namespace {

constexpr int64_t kBlock = BlockwiseAdamW::kBlock;

// Gradients whose magnitudes span five decades, so that the maps' small values are used too.
at::Tensor someGrad(int64_t n, int step, double scale = 1.0) {
    std::vector<float> g(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
        g[size_t(j)] =
            float(scale * std::sin(0.37 * double(j) + 1.3 * step) * std::pow(10.0, -double(j % 5)));
    return at::tensor(g);
}

at::Tensor someParam(int64_t n) {
    std::vector<float> w(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
        w[size_t(j)] = float(std::cos(0.11 * double(j)));
    return at::tensor(w);
}

// One parameter's 8-bit AdamW, value by value in fp32, written from the paper's description:
// the moments read back from codes and block scales, AdamW's update, the nearest code of each
// moment over its block's new largest magnitude.
struct Reference {
    std::vector<float> w;
    std::vector<uint8_t> m, v;
    std::vector<float> mMax, vMax;
    int64_t phase = 0;
    int steps = 0;

    Reference(const at::Tensor& p, int64_t phase_)
        : w(p.data_ptr<float>(), p.data_ptr<float>() + p.numel())
        , m(size_t(p.numel()), 0)
        , v(size_t(p.numel()), 0)
        , mMax(size_t(BlockwiseAdamW::blocksOf(p.numel(), phase_)), 0.0f)
        , vMax(mMax.size(), 0.0f)
        , phase(phase_) {}

    static uint8_t nearest(const std::vector<float>& map, float x) {
        size_t best = 0;
        for (size_t k = 1; k < map.size(); ++k)
            if (std::fabs(map[k] - x) < std::fabs(map[best] - x))
                best = k;
        return uint8_t(best);
    }

    void step(const std::vector<float>& g, const OptimizerConfig& c, double lr) {
        ++steps;
        const std::vector<float>& sm = BlockwiseAdamW::map(true);
        const std::vector<float>& um = BlockwiseAdamW::map(false);
        const double bias1 = 1 - std::pow(c.beta1, steps), bias2 = 1 - std::pow(c.beta2, steps);
        const auto n = int64_t(w.size());
        for (size_t b = 0; b < mMax.size(); ++b) {
            const int64_t from = std::max<int64_t>(0, int64_t(b) * kBlock - phase);
            const int64_t to = std::min<int64_t>(n, int64_t(b + 1) * kBlock - phase);
            std::vector<float> mf, vf;
            for (int64_t j = from; j < to; ++j) {
                float mj = sm[m[size_t(j)]] * mMax[b], vj = um[v[size_t(j)]] * vMax[b];
                const float gj = g[size_t(j)];
                float& wj = w[size_t(j)];
                wj = wj * float(1 - lr * c.weightDecay);
                mj = mj * float(c.beta1) + float(1 - c.beta1) * gj;
                vj = vj * float(c.beta2) + float(1 - c.beta2) * gj * gj;
                const float denom = std::sqrt(vj) / float(std::sqrt(bias2)) + float(c.eps);
                wj = wj + float(-lr / bias1) * mj / denom;
                mf.push_back(mj);
                vf.push_back(vj);
            }
            float ma = 0, va = 0;
            for (size_t k = 0; k < mf.size(); ++k) {
                ma = std::max(ma, std::fabs(mf[k]));
                va = std::max(va, std::fabs(vf[k]));
            }
            mMax[b] = ma;
            vMax[b] = va;
            for (int64_t j = from; j < to; ++j) {
                m[size_t(j)] = nearest(sm, mf[size_t(j - from)] / (ma > 0 ? ma : 1.0f));
                v[size_t(j)] = nearest(um, vf[size_t(j - from)] / (va > 0 ? va : 1.0f));
            }
        }
    }
};

OptimizerConfig eightBit(double weightDecay = 0.01) {
    OptimizerConfig c;
    c.kind = OptimizerKind::AdamW8bit;
    c.weightDecay = weightDecay;
    return c;
}

BlockwiseAdamW::Options optionsOf(const OptimizerConfig& c, bool cpuLoop = true) {
    return {c.beta1, c.beta2, c.eps, c.weightDecay, c.passValues, cpuLoop};
}

const at::Tensor& stateNamed(const NamedTensors& state, const std::string& name) {
    for (const auto& [n, t] : state)
        if (n == name)
            return t;
    static const at::Tensor none;
    return none;
}

} // namespace

class TestBlockwiseAdam : public QObject {
    Q_OBJECT

    // The CPU's loop over each block, and the tensor operations other devices take.
    static void paths() {
        QTest::addColumn<bool>("cpuLoop");
        QTest::newRow("cpu loop") << true;
        QTest::newRow("tensor operations") << false;
    }

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void theMapsAreTheDynamicTreeMaps();
    void stepsMatchTheReference_data() { paths(); }
    void stepsMatchTheReference();
    void aTensorInPartsStepsAsTheWhole_data() { paths(); }
    void aTensorInPartsStepsAsTheWhole();
    void stateRoundTripsAndResumes();
    void fullPrecisionStateIsQuantizedAndNotTheOtherWay();
    void followsAdamWOnALeastSquaresFit();
    void thePlanCountsTwoBytesAValue();
};

// Reference values from bitsandbytes' create_dynamic_map (7 exponent bits, 8 bits in all), as
// torch 1.13 computes it.
void TestBlockwiseAdam::theMapsAreTheDynamicTreeMaps() {
    const std::vector<float>& s = BlockwiseAdamW::map(true);
    const std::vector<float>& u = BlockwiseAdamW::map(false);
    QCOMPARE(int(s.size()), 256);
    QCOMPARE(int(u.size()), 256);
    const std::pair<int, double> signedAt[] = {{0, -0.992968738079071},
                                               {1, -0.9789062142372131},
                                               {100, -0.0074687497690320015},
                                               {127, 0.0},
                                               {128, 5.500000384017767e-07},
                                               {129, 3.250000190746505e-06},
                                               {200, 0.23359376192092896},
                                               {254, 0.992968738079071},
                                               {255, 1.0}};
    for (const auto& [k, want] : signedAt)
        QVERIFY2(std::fabs(double(s[size_t(k)]) - want) <= 1e-7 * std::max(1.0, std::fabs(want)),
                 qPrintable(QStringLiteral("signed map[%1] = %2, not %3")
                                .arg(k)
                                .arg(double(s[size_t(k)]), 0, 'g', 17)
                                .arg(want, 0, 'g', 17)));
    const std::pair<int, double> unsignedAt[] = {{0, 0.0},
                                                 {1, 3.2500003044333425e-07},
                                                 {100, 0.06273438036441803},
                                                 {127, 0.103515625},
                                                 {128, 0.11054687201976776},
                                                 {200, 0.6167968511581421},
                                                 {254, 0.9964843988418579},
                                                 {255, 1.0}};
    for (const auto& [k, want] : unsignedAt)
        QVERIFY(std::fabs(double(u[size_t(k)]) - want) <= 1e-7 * std::max(1.0, std::fabs(want)));
    double sum = 0;
    for (size_t k = 0; k < 256; ++k) {
        sum += double(u[k]);
        if (k > 0) {
            QVERIFY(s[k] > s[k - 1]);
            QVERIFY(u[k] > u[k - 1]);
        }
    }
    QVERIFY(std::fabs(sum - 75.1052634496312) < 1e-4);
}

void TestBlockwiseAdam::stepsMatchTheReference() {
    QFETCH(bool, cpuLoop);
    const OptimizerConfig c = eightBit(0.05);
    const int64_t n = 1000, phase = 77;
    at::Tensor p = someParam(n);
    Reference ref(p, phase);
    BlockwiseAdamW opt(optionsOf(c, cpuLoop), {p}, {phase});
    for (int step = 0; step < 4; ++step) {
        const at::Tensor g = someGrad(n, step);
        opt.step({g}, 1e-2);
        ref.step(std::vector<float>(g.data_ptr<float>(), g.data_ptr<float>() + n), c, 1e-2);
    }
    const NamedTensors state = opt.stateTensors();
    const at::Tensor codes = stateNamed(state, "exp_avg.0");
    QCOMPARE(codes.scalar_type(), at::kByte);
    QCOMPARE(stateNamed(state, "exp_avg_absmax.0").numel(), BlockwiseAdamW::blocksOf(n, phase));
    QCOMPARE(stateNamed(state, "exp_avg_absmax.0").numel(), int64_t(5)); // 77 + 1000 values
    QCOMPARE(stateNamed(state, "step.0").item<int64_t>(), int64_t(4));
    // A code may differ where a moment lies a rounding from halfway between two: one in a
    // thousand at most, and the weights stay within fp32 rounding of the reference's.
    const at::Tensor sq = stateNamed(state, "exp_avg_sq.0");
    int differ = 0;
    for (int64_t j = 0; j < n; ++j) {
        differ += codes[j].item<uint8_t>() != ref.m[size_t(j)];
        differ += sq[j].item<uint8_t>() != ref.v[size_t(j)];
    }
    QVERIFY2(differ <= 2, qPrintable(QStringLiteral("%1 codes differ").arg(differ)));
    const at::Tensor want = at::tensor(ref.w);
    QVERIFY2(
        at::allclose(p, want, 1e-5, 1e-6),
        qPrintable(
            QStringLiteral("largest difference %1").arg((p - want).abs().max().item<double>())));
    QVERIFY(!at::allclose(p, someParam(n))); // it moved
    for (size_t b = 0; b < ref.mMax.size(); ++b)
        QVERIFY(std::fabs(stateNamed(state, "exp_avg_absmax.0")[int64_t(b)].item<float>() -
                          ref.mMax[b]) <= 1e-6f * ref.mMax[b] + 1e-12f);
}

// What sharding a run relies on: a tensor handed over in two parts that meet where a block
// ends, each with its own phase, takes the steps of the whole, bit for bit; so does the whole
// stepped a few blocks at a time.
void TestBlockwiseAdam::aTensorInPartsStepsAsTheWhole() {
    QFETCH(bool, cpuLoop);
    const OptimizerConfig c = eightBit();
    const int64_t n = 1500, phase = 212, cut = 300; // 212 + 300 = 2 blocks
    at::Tensor whole = someParam(n);
    at::Tensor parts = someParam(n);
    at::Tensor passes = someParam(n);
    BlockwiseAdamW one(optionsOf(c, cpuLoop), {whole}, {phase});
    BlockwiseAdamW two(optionsOf(c, cpuLoop),
                       {parts.narrow(0, 0, cut), parts.narrow(0, cut, n - cut)},
                       {phase, (phase + cut) % kBlock});
    // Two blocks a pass: the temporaries stay that small, and the steps are the same.
    BlockwiseAdamW::Options small = optionsOf(c, cpuLoop);
    small.passValues = 2 * kBlock;
    BlockwiseAdamW inPasses(small, {passes}, {phase});
    for (int step = 0; step < 3; ++step) {
        const at::Tensor g = someGrad(n, step);
        one.step({g}, 1e-2);
        two.step({g.narrow(0, 0, cut), g.narrow(0, cut, n - cut)}, 1e-2);
        inPasses.step({g}, 1e-2);
    }
    QVERIFY(at::equal(whole, parts));
    QVERIFY(at::equal(whole, passes));
    const NamedTensors a = one.stateTensors(), b = two.stateTensors();
    QVERIFY(at::equal(stateNamed(a, "exp_avg_sq.0"),
                      at::cat({stateNamed(b, "exp_avg_sq.0"), stateNamed(b, "exp_avg_sq.1")})));
    QVERIFY(
        at::equal(stateNamed(a, "exp_avg_absmax.0"),
                  at::cat({stateNamed(b, "exp_avg_absmax.0"), stateNamed(b, "exp_avg_absmax.1")})));

    // By default the phases are the flat order's, the last parameter first.
    const std::vector<int64_t> phases =
        BlockwiseAdamW::flatPhases({at::zeros({10}), at::zeros({300}), at::zeros({1000})});
    QCOMPARE(phases, (std::vector<int64_t>{(1000 + 300) % kBlock, 1000 % kBlock, 0}));
}

void TestBlockwiseAdam::stateRoundTripsAndResumes() {
    const OptimizerConfig c = eightBit();
    at::Tensor a = someParam(700), b = someParam(40);
    Optimizer first(c, {a, b});
    for (int step = 0; step < 2; ++step)
        first.step({someGrad(700, step), step == 0 ? at::Tensor() : someGrad(40, step)}, 1e-2);
    at::Tensor a2 = a.clone(), b2 = b.clone();
    Optimizer second(c, {a2, b2});
    QVERIFY(second.restore(first.stepCount(), first.stateRecords()));
    QCOMPARE(second.stepCount(), int64_t(2));
    for (int step = 2; step < 4; ++step) {
        first.step({someGrad(700, step), someGrad(40, step)}, 1e-2);
        second.step({someGrad(700, step), someGrad(40, step)}, 1e-2);
    }
    QVERIFY(at::equal(a, a2));
    QVERIFY(at::equal(b, b2));
    // The parameter that missed a step counts its own.
    QCOMPARE(stateNamed(second.stateTensors(), "step.1").item<int64_t>(), int64_t(3));
    QCOMPARE(stateNamed(second.stateTensors(), "step.0").item<int64_t>(), int64_t(4));
}

void TestBlockwiseAdam::fullPrecisionStateIsQuantizedAndNotTheOtherWay() {
    OptimizerConfig fp32 = eightBit();
    fp32.kind = OptimizerKind::AdamW;
    at::Tensor p = someParam(600);
    Optimizer adamw(fp32, {p});
    adamw.step({someGrad(600, 0)}, 1e-2);
    at::Tensor q = p.clone();
    Optimizer eight(eightBit(), {q});
    QVERIFY(eight.restore(1, adamw.stateRecords()));
    const NamedTensors state = eight.stateTensors();
    const at::Tensor codes = stateNamed(state, "exp_avg.0");
    QCOMPARE(codes.scalar_type(), at::kByte);
    // Read back, each moment is within a code's step of fp32 AdamW's.
    const at::Tensor expAvg = stateNamed(adamw.stateTensors(), "exp_avg.0");
    const at::Tensor map = at::tensor(BlockwiseAdamW::map(true));
    const int64_t phase = BlockwiseAdamW::flatPhases({q})[0];
    const at::Tensor scale =
        stateNamed(state, "exp_avg_absmax.0").repeat_interleave(kBlock).narrow(0, phase, 600);
    const at::Tensor back = map.index_select(0, codes.to(at::kLong)) * scale;
    QVERIFY(((back - expAvg).abs() <= 0.07 * scale + 1e-12).all().item<bool>());

    Optimizer again(fp32, {p.clone()});
    const Status refused = again.restore(1, eight.stateRecords());
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QLatin1String("--optimizer adamw8bit")),
             qPrintable(refused.error().message));
}

// y = X w* fitted from zero: 8-bit AdamW keeps to fp32 AdamW's course.
void TestBlockwiseAdam::followsAdamWOnALeastSquaresFit() {
    at::manual_seed(7);
    const at::Tensor x = at::randn({256, 600});
    const at::Tensor target = at::randn({600, 1});
    const at::Tensor y = x.matmul(target);
    const auto fit = [&](OptimizerKind kind) {
        OptimizerConfig c = eightBit(0.0);
        c.kind = kind;
        at::Tensor w = at::zeros({600, 1});
        Optimizer opt(c, {w});
        std::vector<double> losses;
        for (int step = 0; step < 300; ++step) {
            const at::Tensor r = x.matmul(w) - y;
            losses.push_back(r.pow(2).mean().item<double>());
            opt.step({x.t().matmul(r).mul(2.0 / 256)}, 2e-2);
        }
        return losses;
    };
    const std::vector<double> full = fit(OptimizerKind::AdamW);
    const std::vector<double> eight = fit(OptimizerKind::AdamW8bit);
    QVERIFY(full.back() < 0.05 * full.front());
    QVERIFY2(eight.back() < 0.05 * eight.front(),
             qPrintable(QStringLiteral("%1 from %2").arg(eight.back()).arg(eight.front())));
    for (size_t k : {size_t(10), size_t(50), size_t(100)})
        QVERIFY2(
            std::fabs(eight[k] - full[k]) <= 0.1 * full[k],
            qPrintable(QStringLiteral("step %1: %2 against %3").arg(k).arg(eight[k]).arg(full[k])));
}

void TestBlockwiseAdam::thePlanCountsTwoBytesAValue() {
    const int64_t values = 1'000'000'000;
    QCOMPARE(optimizerBytesPerValue(OptimizerKind::AdamW8bit), int64_t(2));
    const int64_t bytes = optimizerStateBytes(OptimizerKind::AdamW8bit, values);
    QVERIFY(bytes >= values * 2 + values / 32);
    QVERIFY(bytes < values * 2 + values / 16);
    QCOMPARE(optimizerStateBytes(OptimizerKind::AdamW, values), values * 8);

    RunConfig cfg;
    cfg.optimizer = OptimizerKind::AdamW8bit;
    QCOMPARE(cfg.effectiveWeightDecay(), 0.01);
    cfg.mode = TrainMode::Sync;
    cfg.shard = true;
    cfg.listen = QStringLiteral("127.0.0.1:0");
    cfg.workers = 1;
    // A sharded run's owners keep each value's fp32 master and its two 8-bit moments.
    const Status st = cfg.validate();
    QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
    QCOMPARE(shardBytesPerValue(OptimizerKind::AdamW8bit), int64_t(6));
}

QTEST_GUILESS_MAIN(TestBlockwiseAdam)
#include "test_blockwiseadam.moc"
