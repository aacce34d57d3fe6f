// Local-SGD's outer wire: the formats round-trip as the sender predicts, error feedback keeps
// the long-run sum of what was sent, and a worker's copy of the weights tracks the
// coordinator's through delta updates.

#include "engine/coordinator/modechoice.h"
#include "engine/modes/fragments.h"
#include "engine/training.h"
#include "engine/wire/outerwire.h"
#include "net/connection.h"

#include <QTest>

#include <ATen/Parallel.h>

namespace tandem {

namespace {

const OuterWire kAll[] = {OuterWire::Fp32, OuterWire::Fp16, OuterWire::Int8, OuterWire::Int4};

QByteArray encoded(const at::Tensor& x, OuterWire w, at::Tensor* predicted) {
    QByteArray bytes(outerVectorBytes(w, x.numel()), Qt::Uninitialized);
    *predicted = encodeOuter(x, w, bytes.data());
    return bytes;
}

// An integer format's encoding of the whole vector at once, from the format's definition
// (outerwire.h): each block's minimum and step (its range over the largest code, 1 where the
// range is 0), then its codes, the last block padded with its last value; two int4 codes a
// byte, the first in the low half. Returns the bytes, and what they decode to in `decoded`.
QByteArray wholeAtOnce(const at::Tensor& x, OuterWire w, at::Tensor* decoded) {
    const int64_t size = w == OuterWire::Int8 ? 256 : 128;
    const double levels = w == OuterWire::Int8 ? 255 : 15;
    const int64_t n = x.numel(), nb = (n + size - 1) / size;
    at::Tensor m = at::cat({x, x[n - 1].expand({nb * size - n})}).view({nb, size});
    const at::Tensor mins = std::get<0>(m.min(1));
    at::Tensor steps = (std::get<0>(m.max(1)) - mins).div_(levels);
    steps.masked_fill_(steps.le(0), 1.0);
    const at::Tensor codes =
        (m - mins.unsqueeze(1)).div_(steps.unsqueeze(1)).round_().clamp_(0, levels).to(at::kByte);
    *decoded = codes.to(at::kFloat)
                   .mul_(steps.unsqueeze(1))
                   .add_(mins.unsqueeze(1))
                   .view(-1)
                   .narrow(0, 0, n)
                   .clone();
    at::Tensor data = codes;
    if (w == OuterWire::Int4) {
        const at::Tensor pairs = codes.view({nb, size / 2, 2}).to(at::kInt);
        data = (pairs.select(2, 0) + pairs.select(2, 1) * 16).to(at::kByte).contiguous();
    }
    QByteArray out(reinterpret_cast<const char*>(mins.data_ptr()), int(nb * 4));
    out.append(reinterpret_cast<const char*>(steps.data_ptr()), int(nb * 4));
    out.append(reinterpret_cast<const char*>(data.data_ptr()), int(data.numel()));
    return out;
}

} // namespace

class TestOuterWire : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        at::set_num_threads(1);
        at::manual_seed(7);
    }

    void sizes() {
        QCOMPARE(outerVectorBytes(OuterWire::Fp32, 1000), qint64(4000));
        QCOMPARE(outerVectorBytes(OuterWire::Fp16, 1000), qint64(2000));
        // 4 blocks of 256: 8 header bytes and 256 code bytes each.
        QCOMPARE(outerVectorBytes(OuterWire::Int8, 1000), qint64(4 * (8 + 256)));
        // 8 blocks of 128: 8 header bytes and 64 code bytes each.
        QCOMPARE(outerVectorBytes(OuterWire::Int4, 1000), qint64(8 * (8 + 64)));
        QCOMPARE(outerVectorBytes(OuterWire::Int4, 0), qint64(0));
    }

    // The receiver decodes exactly what the sender predicted, and each value is within half a
    // step of its block's range.
    void roundTripsAsPredicted() {
        for (OuterWire w : kAll) {
            for (int64_t n : {1, 127, 128, 129, 1000, 70001}) {
                const at::Tensor x = at::randn({n}).mul_(0.01).add_(at::randn({1}));
                at::Tensor predicted;
                const QByteArray bytes = encoded(x, w, &predicted);
                auto back = decodeOuter(bytes.constData(), bytes.size(), w, n);
                QVERIFY(back.ok());
                QVERIFY2(at::equal(*back, predicted), qPrintable(nameOf(w)));
                const double err = (x - *back).abs().max().item<double>();
                const double range = (x.max() - x.min()).item<double>();
                const double bound = w == OuterWire::Fp32   ? 0.0
                                     : w == OuterWire::Fp16 ? 1e-3 * x.abs().max().item<double>()
                                     : w == OuterWire::Int8 ? range / 255 / 2 * 1.001
                                                            : range / 15 / 2 * 1.001;
                QVERIFY2(err <= bound + 1e-7,
                         qPrintable(QStringLiteral("%1, n=%2: error %3, bound %4")
                                        .arg(nameOf(w))
                                        .arg(n)
                                        .arg(err)
                                        .arg(bound)));
            }
        }
    }

    // An integer format is encoded and decoded a chunk of blocks at a time, so that a model's
    // delta never needs several vectors of its size for a moment. The bytes, what they decode
    // to and what error feedback carries are those of the whole vector at once, bit for bit,
    // across the chunks' edges.
    void chunksEncodeAsTheWholeVector() {
        for (OuterWire w : {OuterWire::Int8, OuterWire::Int4}) {
            for (int64_t n : {65536, 65537, 200001}) {
                const at::Tensor x = at::randn({n}).mul_(0.01);
                at::Tensor predicted, reference;
                const QByteArray bytes = encoded(x, w, &predicted);
                QVERIFY(bytes == wholeAtOnce(x, w, &reference));
                QVERIFY(at::equal(predicted, reference));
                auto back = decodeOuter(bytes.constData(), bytes.size(), w, n);
                QVERIFY(back.ok() && at::equal(*back, reference));
            }
            ErrorFeedback fb;
            const int64_t n = 150001;
            at::Tensor residual = at::zeros({n});
            QByteArray bytes(outerVectorBytes(w, n), Qt::Uninitialized);
            for (int round = 0; round < 3; ++round) {
                const at::Tensor x = at::randn({n}).mul_(1e-3);
                const at::Tensor meant = x + residual;
                at::Tensor sent, reference;
                fb.encode(x, w, bytes.data(), &sent);
                QVERIFY(bytes == wholeAtOnce(meant, w, &reference));
                QVERIFY(at::equal(sent, reference));
                residual = meant - reference;
                QVERIFY(at::equal(fb.residual(), residual));
            }
            // The coordinator's record of a worker moves by what the worker decodes, and the
            // update's bytes are the difference's, encoded whole.
            WeightMirror mirror;
            const at::Tensor start = at::randn({n});
            mirror.sentWhole(start);
            const at::Tensor weights = start + at::randn({n}).mul_(1e-3);
            at::Tensor reference;
            const QByteArray update = mirror.update(weights, {}, w);
            QVERIFY(update.left(int(outerVectorBytes(w, n))) ==
                    wholeAtOnce(weights - start, w, &reference));
            QVERIFY(at::equal(mirror.held(), start + reference));
        }
    }

    void constantBlocksAreExact() {
        const at::Tensor x = at::full({300}, 0.125f);
        for (OuterWire w : {OuterWire::Int8, OuterWire::Int4}) {
            at::Tensor predicted;
            const QByteArray bytes = encoded(x, w, &predicted);
            QVERIFY(at::equal(predicted, x));
        }
    }

    void wrongSizesAreRefused() {
        const at::Tensor x = at::randn({500});
        for (OuterWire w : kAll) {
            at::Tensor predicted;
            const QByteArray bytes = encoded(x, w, &predicted);
            QVERIFY(!decodeOuter(bytes.constData(), bytes.size() - 1, w, 500).ok());
            QVERIFY(!decodeOuter(bytes.constData(), bytes.size(), w, 800).ok());
            QVERIFY(!decodeOuter(bytes.constData(), bytes.size(), w, -1).ok());
        }
    }

    // fp32 loses nothing: a send carries nothing over, and what it returns as decoded is the
    // values themselves, not a copy the size of the model. A round's delta goes out in the same
    // bytes.
    void anFp32SendKeepsNoCopy() {
        ErrorFeedback fb;
        const at::Tensor x = at::randn({1000});
        QByteArray bytes(outerVectorBytes(OuterWire::Fp32, 1000), Qt::Uninitialized);
        at::Tensor s;
        fb.encode(x, OuterWire::Fp32, bytes.data(), &s);
        QCOMPARE(s.data_ptr(), x.data_ptr());
        QVERIFY(!fb.residual().defined());
        auto back = decodeOuter(bytes.constData(), bytes.size(), OuterWire::Fp32, 1000);
        QVERIFY(back.ok() && at::equal(*back, x));
        OuterWorkerSide side(OuterWire::Fp32);
        const QByteArray packed = side.packDelta({x.view({10, 100})}, {});
        QVERIFY(packed.size() >= bytes.size());
        QVERIFY(packed.left(bytes.size()) == bytes);
    }

    // Over many rounds, what was sent plus what is still carried equals what was meant, and
    // what is carried stays as small as one round's rounding: nothing is lost, and nothing
    // piles up. Without feedback the same int4 stream drifts far further.
    void errorFeedbackKeepsTheSum() {
        for (OuterWire w : {OuterWire::Fp16, OuterWire::Int8, OuterWire::Int4}) {
            ErrorFeedback fb;
            const int64_t n = 5000;
            at::Tensor meant = at::zeros({n}, at::kDouble), sent = at::zeros({n}, at::kDouble),
                       plain = at::zeros({n}, at::kDouble);
            QByteArray bytes(outerVectorBytes(w, n), Qt::Uninitialized);
            double worstCarry = 0, lastRange = 0;
            for (int round = 0; round < 300; ++round) {
                // Deltas with a persistent direction, as a training run's are.
                const at::Tensor x = at::randn({n}).mul_(1e-3).add_(2e-4);
                meant += x.to(at::kDouble);
                at::Tensor s;
                fb.encode(x, w, bytes.data(), &s);
                auto back = decodeOuter(bytes.constData(), bytes.size(), w, n);
                QVERIFY(back.ok());
                QVERIFY(at::equal(*back, s));
                sent += s.to(at::kDouble);
                at::Tensor p;
                QByteArray once(bytes.size(), Qt::Uninitialized);
                p = encodeOuter(x, w, once.data());
                plain += p.to(at::kDouble);
                const double exact =
                    (meant - sent - fb.residual().to(at::kDouble)).abs().max().item<double>();
                QVERIFY2(
                    exact < 1e-5,
                    qPrintable(
                        QStringLiteral("%1 round %2: %3").arg(nameOf(w)).arg(round).arg(exact)));
                worstCarry = std::max(worstCarry, fb.residual().abs().max().item<double>());
                lastRange = (x.max() - x.min()).item<double>();
            }
            const double gap = (meant - sent).abs().max().item<double>();
            const double drift = (meant - plain).abs().max().item<double>();
            // The carry is at most about one step of the format (a range over its levels).
            const double levels = w == OuterWire::Int4 ? 15 : w == OuterWire::Int8 ? 255 : 1000;
            QVERIFY2(worstCarry < 2 * lastRange / levels + 1e-6,
                     qPrintable(QStringLiteral("%1: carry %2").arg(nameOf(w)).arg(worstCarry)));
            QVERIFY2(gap <= worstCarry + 1e-6, qPrintable(QString::number(gap)));
            if (w == OuterWire::Int4)
                QVERIFY2(
                    drift > 10 * gap,
                    qPrintable(QStringLiteral("without feedback %1, with %2").arg(drift).arg(gap)));
        }
    }

    void runDescriptionCarriesTheFormat() {
        RunConfig c;
        QCOMPARE(c.outerWire, OuterWire::Fp32);
        QCOMPARE(c.localSteps, 32);
        c.outerWire = OuterWire::Int4;
        auto back = RunConfig::fromJson(c.toJson());
        QVERIFY(back.ok());
        QCOMPARE(back->outerWire, OuterWire::Int4);
        QJsonObject o = c.toJson();
        o.insert(QStringLiteral("outer_wire"), QStringLiteral("int3"));
        auto bad = RunConfig::fromJson(o);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().message.contains(QStringLiteral("fp32, fp16, int8 or int4")),
                 qPrintable(bad.error().message));
        // Fragments: kept, and refused outside local-SGD or beyond one per inner step.
        c.model = QStringLiteral("mlp");
        c.data = QStringLiteral("fashion-mnist");
        c.mode = TrainMode::LocalSgd;
        c.fragments = 4;
        QVERIFY(c.validate().ok());
        QCOMPARE(RunConfig::fromJson(c.toJson())->fragments, 4);
        c.mode = TrainMode::Sync;
        QVERIFY(c.validate().error().message.contains(QStringLiteral("--mode local-sgd")));
        c.mode = TrainMode::LocalSgd;
        c.localSteps = 2;
        QVERIFY(c.validate().error().message.contains(QStringLiteral("use at most 2 fragments")));
    }

    // The coordinator's mirror and a worker that applies every bundle hold the same bits, and
    // when the weights stop moving, a few more bundles bring the worker onto them.
    void mirrorAndWorkerAgree() {
        std::vector<at::Tensor> params = {at::randn({64, 32}), at::randn({64}),
                                          at::randn({10, 64})};
        std::vector<at::Tensor> buffers = {at::randn({64}), at::tensor({int64_t(3)})};
        const ModelLayout layout =
            ModelLayout::of({"a", "b", "c"}, params, {"mean", "count"}, buffers);
        for (OuterWire w : {OuterWire::Fp16, OuterWire::Int8, OuterWire::Int4}) {
            at::Tensor weights = flattenParams(params);
            WeightMirror mirror;
            mirror.sentWhole(weights);
            at::Tensor worker = weights.clone();
            // The worker client's side, applying the same bundles to a model's tensors.
            std::vector<at::Tensor> model = splitParams(weights.clone(), layout);
            std::vector<at::Tensor> modelBuffers = {at::zeros({64}), at::zeros({1}, at::kLong)};
            OuterWorkerSide side(w);
            side.tookWhole(model);
            for (int round = 0; round < 40; ++round) {
                if (round < 30)
                    weights = weights - at::randn_like(weights).mul_(0.01);
                buffers[0] = at::randn({64});
                const QByteArray bytes = mirror.update(weights, buffers, w);
                QCOMPARE(bytes.size(), outerBundleBytes(layout, w));
                at::Tensor step;
                std::vector<at::Tensor> gotBuffers;
                QVERIFY(unpackOuter(bytes, layout, w, &step, &gotBuffers).ok());
                worker.add_(step);
                QVERIFY(at::equal(worker, mirror.held()));
                QVERIFY(side.applyDifference(bytes, layout, model, modelBuffers).ok());
                QVERIFY(at::equal(flattenParams(model), mirror.held()));
                QVERIFY(at::equal(modelBuffers[0], buffers[0]));
                QVERIFY(at::equal(gotBuffers[0], buffers[0]));
                QCOMPARE(gotBuffers[1].item<int64_t>(), int64_t(3));
            }
            const double gap = (worker - weights).abs().max().item<double>();
            QVERIFY2(gap < 1e-6, qPrintable(QStringLiteral("%1: %2").arg(nameOf(w)).arg(gap)));
            const std::vector<at::Tensor> split = splitParams(worker, layout);
            QCOMPARE(split.size(), size_t(3));
            QCOMPARE(split[2].sizes().vec(), (std::vector<int64_t>{10, 64}));
        }
    }

    void fragmentsCoverEveryParameterOnce() {
        const std::vector<std::vector<int64_t>> models{
            {200704, 256, 2560, 10},                     // the MLP
            {288, 32, 18432, 64, 401408, 128, 1280, 10}, // the CNN
            {5, 5, 5, 5, 5, 5, 5},
            {1},
            {7, 0, 7, 1000, 3}};
        for (const auto& numels : models) {
            int64_t total = 0, largest = 0;
            for (int64_t n : numels) {
                total += n;
                largest = std::max(largest, n);
            }
            for (int f : {1, 2, 3, 4, 8, 100}) {
                const std::vector<Fragment> frags = cutFragments(numels, f);
                QCOMPARE(int(frags.size()), std::min<int>(f, int(numels.size())));
                size_t next = 0;
                int64_t offset = 0;
                for (const Fragment& fr : frags) {
                    // Consecutive runs of whole tensors, none empty, in schema order.
                    QCOMPARE(fr.firstParam, next);
                    QVERIFY(fr.endParam > fr.firstParam);
                    QCOMPARE(fr.offset, offset);
                    int64_t n = 0;
                    for (size_t i = fr.firstParam; i < fr.endParam; ++i)
                        n += numels[i];
                    QCOMPARE(fr.count, n);
                    // As even as whole tensors allow: within one tensor of an equal share.
                    QVERIFY(double(n) <= double(total) / double(frags.size()) + double(largest));
                    next = fr.endParam;
                    offset += n;
                }
                QCOMPARE(next, numels.size());
                QCOMPARE(offset, total);
            }
        }
    }

    void fragmentMergeKeepsStepsTakenMeanwhile() {
        // A worker sends fragment 0's delta, takes more steps, then merges fragment 0's new
        // global values: the parameters become the new values plus the steps taken since the
        // send; fragment 1 is not touched, and its delta still counts from where it started.
        std::vector<at::Tensor> params{at::randn({6}), at::randn({2, 3}), at::randn({4})};
        FragmentTracker t;
        t.restart(params, 2);
        QCOMPARE(t.count(), 2);
        const Fragment f0 = t.at(0), f1 = t.at(1);
        const at::Tensor start0 = gatherFragment(params, f0), start1 = gatherFragment(params, f1);
        const std::vector<at::Tensor> firstSteps{at::randn({6}), at::randn({2, 3}), at::randn({4})};
        for (size_t i = 0; i < params.size(); ++i)
            params[i].add_(firstSteps[i]);
        const at::Tensor sent = t.delta(0, params);
        QVERIFY(at::allclose(sent, start0 - gatherFragment(params, f0)));
        const at::Tensor atSend = gatherFragment(params, f0);
        const std::vector<at::Tensor> meanwhile{at::randn({6}), at::randn({2, 3}), at::randn({4})};
        for (size_t i = 0; i < params.size(); ++i)
            params[i].add_(meanwhile[i]);
        const at::Tensor before1 = gatherFragment(params, f1);
        const at::Tensor global = at::randn({f0.count});
        t.merge(0, global, params);
        const at::Tensor progress = gatherFragment(meanwhile, f0);
        QVERIFY(at::allclose(gatherFragment(params, f0), global + progress, 1e-5, 1e-6));
        QVERIFY(at::equal(gatherFragment(params, f1), before1));
        // The next delta of fragment 0 is the progress since the merge's base: exactly the
        // steps taken meanwhile (and none of those before the send, which the global holds).
        QVERIFY(at::allclose(t.delta(0, params), -progress, 1e-5, 1e-6));
        QVERIFY(at::allclose(t.delta(1, params), start1 - before1, 1e-5, 1e-6));
        QVERIFY(at::allclose(atSend - start0, gatherFragment(firstSteps, f0), 1e-5, 1e-6));
        // One fragment's gradient list leaves every other parameter undefined.
        const std::vector<at::Tensor> g = fragmentGrads(global, f0, params);
        QCOMPARE(g.size(), params.size());
        for (size_t i = 0; i < g.size(); ++i)
            QCOMPARE(g[i].defined(), i >= f0.firstParam && i < f0.endParam);
    }

    void aTrackerKeepsOneCopyOfTheModel() {
        // Streaming's schedule with three fragments: round r merges fragment (r - 2) mod 3's
        // update, takes steps and sends fragment r mod 3. The tracker keeps one copy of the
        // values throughout, and its deltas and merges are those of a tracker that keeps both
        // the global values and the values as sent (written out here).
        std::vector<at::Tensor> params{at::randn({6}), at::randn({2, 3}), at::randn({4}),
                                       at::randn({5})};
        FragmentTracker t;
        t.restart(params, 3);
        QCOMPARE(t.count(), 3);
        int64_t total = 0;
        for (const at::Tensor& p : params)
            total += p.numel();
        QCOMPARE(t.heldValues(), total);
        std::vector<at::Tensor> global, sent(3);
        for (int k = 0; k < 3; ++k)
            global.push_back(gatherFragment(params, t.at(k)));
        std::vector<at::Tensor> ref;
        for (const at::Tensor& p : params)
            ref.push_back(p.clone());
        std::vector<at::Tensor> updates(3);
        for (int r = 0; r < 9; ++r) {
            if (r >= 2) {
                const int m = (r - 2) % 3;
                const Fragment& f = t.at(m);
                t.merge(m, updates[size_t(m)], params);
                addToFragment(ref, f, updates[size_t(m)] - sent[size_t(m)]);
                global[size_t(m)] = updates[size_t(m)];
                QCOMPARE(t.heldValues(), total);
            }
            for (size_t i = 0; i < params.size(); ++i) {
                const at::Tensor step = at::randn(params[i].sizes());
                params[i].add_(step);
                ref[i].add_(step);
            }
            const int k = r % 3;
            const at::Tensor d = t.delta(k, params);
            const at::Tensor now = gatherFragment(ref, t.at(k));
            QVERIFY(at::equal(d, global[size_t(k)] - now));
            sent[size_t(k)] = now;
            updates[size_t(k)] = global[size_t(k)] - 0.5 * d;
            QCOMPARE(t.heldValues(), total);
            for (size_t i = 0; i < params.size(); ++i)
                QVERIFY(at::equal(params[i], ref[i]));
        }
        // A fragment sent a second time before its update came is refused, not guessed at.
        const int k = 9 % 3;
        t.delta(k, params);
        bool refused = false;
        try {
            t.delta(k, params);
        } catch (const std::runtime_error&) {
            refused = true;
        }
        QVERIFY(refused);
        // With one fragment, sent every round before the last send's update, both are kept.
        FragmentTracker one;
        one.restart({at::randn({4})}, 2);
        QCOMPARE(one.count(), 1);
        std::vector<at::Tensor> single{at::randn({4})};
        one.delta(0, single);
        one.delta(0, single);
        QCOMPARE(one.heldValues(), int64_t(8));
    }

    void fragmentUpdatesTravelInTheirOwnSize() {
        // The coordinator's mirror and the worker's side agree on a fragment update bit for
        // bit, and its bundle is the fragment's size in the format, not the model's.
        ModelLayout layout;
        layout.paramNames = {"a", "b", "c"};
        layout.paramShapes = {{300}, {20, 10}, {500}};
        const std::vector<Fragment> frags = cutFragments(paramNumels(layout), 3);
        QCOMPARE(frags.size(), size_t(3));
        const at::Tensor weights = at::randn({1000});
        for (OuterWire w : {OuterWire::Fp32, OuterWire::Int8, OuterWire::Int4}) {
            WeightMirror mirror;
            mirror.sentWhole(weights);
            OuterWorkerSide side(w);
            std::vector<at::Tensor> model = splitParams(weights.clone(), layout);
            side.tookWhole(model);
            std::vector<at::Tensor> none;
            const at::Tensor target = gatherFragment(splitParams(weights, layout), frags[2]) + 0.5;
            const QByteArray bytes = mirror.updateFragment(target, frags[2], none, w);
            QCOMPARE(qint64(bytes.size()), outerVectorBytes(w, 500));
            auto global = side.applyFragment(bytes, layout, frags[2], none);
            QVERIFY(global.ok());
            QVERIFY(at::equal(*global, mirror.held().narrow(0, 500, 500)));
            QVERIFY(at::equal(mirror.held().narrow(0, 0, 500), weights.narrow(0, 0, 500)));
            QVERIFY((*global - target).abs().max().item<double>() < 0.02);
            // A bundle of another fragment's size is refused.
            QVERIFY(!side.applyFragment(bytes, layout, frags[1], none).ok());
        }
    }

    // A probe's 1 MiB filler (512 KiB each way) on a veth pair with a 9 ms round trip: where
    // jitter makes the filled ping no slower than the empty one, the link is too quick to time
    // and the probe gives a floor (the bytes over the whole round trip), never 104.86 GB/s.
    void aProbeTooQuickToTimeGivesAFloor() {
        const double mib = 1024 * 1024;
        LinkProbe l = linkFromProbe(9.0, {{8.9, mib}, {9.1, mib}});
        QVERIFY(l.atLeast);
        QCOMPARE(l.bytesPerSecond, mib / 0.0089); // the quicker round bounds it closer
        QCOMPARE(linkRateText(l.bytesPerSecond, l.atLeast), QStringLiteral("at least 117.8 MB/s"));
        // One filler 4.3 ms slower than the empty ping: timed, the best of the rounds.
        l = linkFromProbe(9.0, {{9.1, mib}, {13.3, mib}, {14.0, mib}});
        QVERIFY(!l.atLeast);
        QCOMPARE(l.bytesPerSecond, mib / 0.0043);
        QCOMPARE(linkRateText(l.bytesPerSecond, l.atLeast), QStringLiteral("243.9 MB/s"));
        // The floor is what the mode's reasons say.
        ModeFacts f;
        f.computeMs = 30;
        f.syncBytesPerStep = 9.6e6;
        f.streamBytesPerStep = 9.6e6 / 226;
        f.links = {LinkFacts{QStringLiteral("desk"), mib / 0.0091, 9, true}};
        const ModeChoice c = chooseMode(f);
        QVERIFY2(c.why.contains(QStringLiteral("the link to desk moves at least 115.2 MB/s")),
                 qPrintable(c.why));
    }

    // --mode auto's rule on the figures of the demo network (1.2 M parameters: 9.6 MB a sync
    // step, 43 kB a streaming step with H=32 and int4) and a 30 ms step on this machine.
    void autoModeFollowsTheLink() {
        ModeFacts f;
        f.computeMs = 30;
        f.syncBytesPerStep = 9.6e6;
        f.streamBytesPerStep = 9.6e6 / 226;
        // Wi-Fi, 2 MB/s: a sync step would spend 4.8 s moving weights; the worker is left out.
        f.links = {LinkFacts{QStringLiteral("laptop@10.0.0.2"), 2e6, 5}};
        ModeChoice c = chooseMode(f);
        QVERIFY(c.streaming);
        QCOMPARE(c.syncSpeedup, 1.0);
        QVERIFY(c.streamSpeedup > 1.6);
        QVERIFY2(c.why.contains(QStringLiteral("the link to laptop@10.0.0.2 moves 2.0 MB/s")),
                 qPrintable(c.why));
        QVERIFY2(c.why.contains(QStringLiteral("streaming mode will send 1/226 of sync's traffic")),
                 qPrintable(c.why));
        // 10 Gbit/s: sync keeps most of the second machine and stays exact.
        f.links = {LinkFacts{QStringLiteral("desk"), 1.2e9, 0.1}};
        c = chooseMode(f);
        QVERIFY2(!c.streaming, qPrintable(c.why));
        QVERIFY(c.syncSpeedup > 1.5 && c.syncSpeedup < 2);
        QVERIFY2(c.why.contains(QStringLiteral("training in sync")), qPrintable(c.why));
        // 1 Gbit/s: 82 ms a step to move 30 ms of compute's weights is a loss.
        f.links = {LinkFacts{QStringLiteral("desk"), 117e6, 0.3}};
        QVERIFY(chooseMode(f).streaming);
        // The slowest of several links decides, and the message names it.
        f.links = {LinkFacts{QStringLiteral("fast"), 1.2e9, 0.1},
                   LinkFacts{QStringLiteral("slow"), 1e6, 8}};
        c = chooseMode(f);
        QVERIFY(c.why.contains(QStringLiteral("the link to slow moves 1.0 MB/s")));
        // A link too slow even for streaming's exchange adds only part of a worker.
        f.links = {LinkFacts{QStringLiteral("far"), 0.5e6, 50}};
        c = chooseMode(f);
        QVERIFY(c.streamSpeedup > 1 && c.streamSpeedup < 2);
        // No worker over the network: nothing to measure, sync.
        f.links.clear();
        c = chooseMode(f);
        QVERIFY(!c.streaming);
        QVERIFY(c.why.contains(QStringLiteral("no worker joined")));
        // "auto" is a mode the run description accepts, with fragments for when it streams.
        RunConfig rc;
        rc.model = QStringLiteral("mlp");
        rc.data = QStringLiteral("fashion-mnist");
        rc.mode = TrainMode::Auto;
        rc.fragments = 4;
        QVERIFY(rc.validate().ok());
        QCOMPARE(*parse<TrainMode>(QStringLiteral("auto")), TrainMode::Auto);
        // It is the default: a run description that names no mode leaves the choice to auto.
        QCOMPARE(RunConfig().mode, TrainMode::Auto);
        auto fromJson = RunConfig::fromJson(QJsonObject{{QStringLiteral("model"), rc.model}});
        QVERIFY(fromJson.ok());
        QCOMPARE(fromJson->mode, TrainMode::Auto);
    }

    // A run of known length pays for starting its workers: the model over the link and two of
    // this machine's steps to warm up. On the demo network (4.8 MB of model) over a 1 Gbit/s
    // link with 30 ms steps, that is about 0.1 s, counted three times over: worth it for 600
    // steps, not for 3.
    void autoModeCountsTheStart() {
        ModeFacts f;
        f.computeMs = 30;
        f.syncBytesPerStep = 9.6e6;
        f.streamBytesPerStep = 9.6e6 / 226;
        f.startBytes = 4.8e6;
        f.links = {LinkFacts{QStringLiteral("desk"), 117e6, 0.3}};
        const ModeChoice endless = chooseMode(f);
        f.steps = 600;
        ModeChoice c = chooseMode(f);
        QVERIFY2(!c.alone && c.streaming == endless.streaming, qPrintable(c.why));
        QVERIFY(c.streamSpeedup < endless.streamSpeedup && c.streamSpeedup > 1.5);
        QCOMPARE(c.startS, kStartMargin * (4.8e6 / 117e6 * 1e3 + 0.3 + 2 * 30) / 1e3);
        QVERIFY2(c.why.contains(QStringLiteral("counting about 0.3 s for the workers to start "
                                               "over the 600 step(s) left")),
                 qPrintable(c.why));
        // Three steps: 90 ms alone, against 303 ms of start before the worker adds anything.
        f.steps = 3;
        c = chooseMode(f);
        QVERIFY2(c.alone, qPrintable(c.why));
        QVERIFY(!c.streaming);
        QCOMPARE(c.aloneS, 0.09);
        QVERIFY2(c.why.contains(QStringLiteral("this run has 3 step(s) left")), qPrintable(c.why));
        QVERIFY2(c.why.contains(QStringLiteral("training on this machine alone")),
                 qPrintable(c.why));
        // The break-even: alone is chosen exactly while the best mode does not end sooner
        // (streaming is a mode only from four rounds of H steps on).
        for (int64_t steps : {4, 5, 6, 8, 12, 20, 50, 200}) {
            f.steps = steps;
            c = chooseMode(f);
            const double work = double(steps) * f.computeMs;
            const double best = work / std::max(c.syncSpeedup, c.streamSpeedup);
            const double speed = steps >= kMinStreamingRounds * f.localSteps
                                     ? std::max(endless.syncSpeedup, endless.streamSpeedup)
                                     : endless.syncSpeedup;
            QCOMPARE(c.alone, c.startS * 1e3 + work / speed >= kGainToKeep * work);
            if (!c.alone)
                QVERIFY2(best < work, qPrintable(c.why));
        }
        // A cold first step of 300 ms (a copy of the model made, the allocator and threads
        // started) counts too: the 600-step run keeps its worker, a 20-step one does not.
        f.coldStartMs = 300;
        f.steps = 600;
        c = chooseMode(f);
        QVERIFY2(!c.alone, qPrintable(c.why));
        QCOMPARE(c.startS, kStartMargin * (4.8e6 / 117e6 * 1e3 + 0.3 + 300 + 2 * 30) / 1e3);
        f.steps = 20;
        QVERIFY(chooseMode(f).alone);
        f.coldStartMs = 0;
        // A slow link makes the start dear: 4.8 MB at 2 MB/s is 2.4 s, 80 steps of 30 ms.
        f.links = {LinkFacts{QStringLiteral("laptop"), 2e6, 5}};
        f.steps = 100;
        QVERIFY(chooseMode(f).alone);
        f.steps = 2000;
        c = chooseMode(f);
        QVERIFY2(!c.alone && c.streaming, qPrintable(c.why));
        // A run of fewer than four rounds of H steps does not stream, whatever the link: here
        // 100 steps of H=32 train in sync (slowly), 128 stream.
        f.coldStartMs = 0;
        f.links = {LinkFacts{QStringLiteral("laptop"), 2e6, 5}};
        f.startBytes = 0;
        f.steps = 100;
        c = chooseMode(f);
        QVERIFY2(!c.streaming, qPrintable(c.why));
        f.links = {LinkFacts{QStringLiteral("desk"), 1.2e9, 0.1}}; // sync pays off: it says why
        c = chooseMode(f);
        QVERIFY2(!c.streaming && !c.alone &&
                     c.why.contains(QStringLiteral("the 100 step(s) left are too few to "
                                                   "stream, which needs 4 rounds of 32")),
                 qPrintable(c.why));
        f.links = {LinkFacts{QStringLiteral("laptop"), 2e6, 5}};
        f.steps = 128;
        QVERIFY(chooseMode(f).streaming);
        f.startBytes = 4.8e6;
        // Without a device here, the workers must train whatever they cost.
        f.localDevices = 0;
        f.steps = 3;
        QVERIFY(!chooseMode(f).alone);
        // Sync chosen while streaming would be faster says why.
        f.localDevices = 1;
        f.steps = 0;
        f.links = {LinkFacts{QStringLiteral("desk"), 1.2e9, 0.1}};
        c = chooseMode(f);
        QVERIFY(!c.streaming && c.streamSpeedup > c.syncSpeedup);
        QVERIFY2(c.why.contains(QStringLiteral("sync follows one machine's training exactly and "
                                               "is kept while it brings at least 50 % of "
                                               "streaming's gain")),
                 qPrintable(c.why));
    }
};

} // namespace tandem

QTEST_GUILESS_MAIN(tandem::TestOuterWire)
#include "test_outerwire.moc"
