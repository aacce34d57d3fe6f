// What crosses between host and device in a step, counted by the traffic ledger on the
// accelerator's paths: every run here trains on the emulated accelerator (the CPU behind a
// device of its own, model/emulatedaccelerator.h), so LibTorch copies and waits exactly where a
// GPU run would. First the ledger and the emulated device themselves, then whole runs through
// `tandem train --ledger`: an image model, a language model trained whole, LoRA on a bf16 and on
// an nf4 base, a coordinator with a remote worker, and local-SGD's streamed rounds.

#include "engine/step/batch.h"
#include "engine/step/memoryplan.h"
#include "engine/step/optimizer.h"
#include "formats/tokenstream.h"
#include "model/emulatedaccelerator.h"
#include "model/torchversion.h"
#include "model/trafficledger.h"

#include "hffolder.h"
#include "proc.h"
#include "testutil.h"

#include <cmath>

#include <QJsonDocument>

#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <ATen/ATen.h>

using namespace tandem;

namespace {

const QString kEmulated = QStringLiteral("TANDEM_EMULATED_ACCELERATOR=1");

// On LibTorch 2.x an operator of the transformer's pass reaches a CPU-only dispatch stub with
// the emulated device's type (DispatchStub: "An unexpected device type was provided xpu"): the
// emulation does not yet cover it there, and the language-model rows run on 1.13 only.
#if TANDEM_TORCH_AT_LEAST(2, 0)
#define SKIP_TRANSFORMER_ON_NEWER_TORCH()                                                          \
    QSKIP("the emulated accelerator does not yet run the transformer on LibTorch 2.x")
#else
#define SKIP_TRANSFORMER_ON_NEWER_TORCH()
#endif

double figure(const QJsonObject& summary, const char* purpose, const char* name) {
    return summary.value(QStringLiteral("traffic_per_step"))
        .toObject()
        .value(QLatin1String(purpose))
        .toObject()
        .value(QLatin1String(name))
        .toDouble(-1);
}

QString traffic(const QJsonObject& summary) {
    return QString::fromUtf8(
        QJsonDocument(summary.value(QStringLiteral("traffic_per_step")).toObject())
            .toJson(QJsonDocument::Compact));
}

} // namespace

class TestLedger : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void countsCopiesAndWaitsByDirection();
    void emulatedDeviceComputesAsTheCpu();
    void batchesOnTheDeviceAreTheHosts();
    void imageModelSync();
    void languageModelWhole();
    void loraOnBf16Base();
    void loraOnNf4Base();
    void coordinatorWithRemoteWorker();
    void stepSplitSaysWhereTimeGoes();
    void streamingRounds();

private:
    // `tandem train --ledger` on the emulated accelerator (or `device`); its JSON summary.
    QJsonObject train(const QStringList& args, const QString& device = QStringLiteral("emulated"),
                      QString* log = nullptr);
    QJsonObject trainWithWorker(const QStringList& args, QString* log = nullptr);
    // A single machine's step, as the table wants it: nothing of the model crosses, the
    // host waits for nothing but the figures, and the optimizer's kernels do not grow with its
    // tensors.
    void checkResident(const QJsonObject& s, int64_t tensors);
    QString home(const char* name) const { return m_tmp.filePath(QLatin1String(name)); }

    QTemporaryDir m_tmp;
    QString m_llama, m_llamaBf16, m_tokens;
};

void TestLedger::initTestCase() {
    QVERIFY(m_tmp.isValid());
    qputenv("TANDEM_EMULATED_ACCELERATOR", "1");
    installEmulatedAccelerator();
    enableTrafficLedger();
    hffolder::Spec spec;
    QVERIFY(hffolder::write(m_llama = m_tmp.filePath(QStringLiteral("llama")), spec));
    spec.bf16 = true;
    QVERIFY(hffolder::write(m_llamaBf16 = m_tmp.filePath(QStringLiteral("llama-bf16")), spec));
    m_tokens = m_tmp.filePath(QStringLiteral("tokens.bin"));
    QVERIFY(testutil::writeFile(m_tokens, hffolder::learnableTokens(8000, 64)));
    const QString coordId = identityAt(home("coord"));
    QVERIFY(!trustEachOther(home("coord"), coordId, home("w1")).isEmpty());
}

QJsonObject TestLedger::train(const QStringList& args, const QString& device, QString* log) {
    TandemProcess p(QStringList{QStringLiteral("train"), QStringLiteral("--ledger"),
                                QStringLiteral("--device=") + device, QStringLiteral("--threads=1"),
                                QStringLiteral("--no-history"), QStringLiteral("--seed=3")} +
                        args,
                    false, {kEmulated});
    if (!p.finish(300000) || p.exitCode() != 0) {
        qWarning().noquote() << p.err();
        return {};
    }
    if (log)
        *log = p.err();
    return p.summary();
}

QJsonObject TestLedger::trainWithWorker(const QStringList& args, QString* log) {
    TandemProcess c(QStringList{QStringLiteral("train"), QStringLiteral("--ledger"),
                                QStringLiteral("--device=emulated"), QStringLiteral("--threads=1"),
                                QStringLiteral("--listen=127.0.0.1:0"),
                                QStringLiteral("--workers=1"), QStringLiteral("--home"),
                                home("coord"), QStringLiteral("--worker-timeout=60"),
                                QStringLiteral("--no-history")} +
                        args,
                    false, {kEmulated});
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    if (port.isEmpty()) {
        qWarning().noquote() << c.err();
        return {};
    }
    // The worker process has an emulated accelerator of its own (it inherits the environment);
    // the coordinator's ledger counts the coordinator's traffic alone.
    const auto workers = startWorkers(port, {home("w1")});
    if (!c.finish(300000) || c.exitCode() != 0) {
        qWarning().noquote() << c.err();
        return {};
    }
    for (auto& w : workers)
        w->finish(60000);
    if (log)
        *log = c.err();
    return c.summary();
}

void TestLedger::checkResident(const QJsonObject& s, int64_t tensors) {
    const QByteArray what = traffic(s).toUtf8();
    QVERIFY2(!s.isEmpty(), "the run failed");
    QVERIFY2(s.value(QStringLiteral("traffic_per_step"))
                     .toObject()
                     .value(QStringLiteral("steps"))
                     .toInteger() >= 5,
             what.constData());
    for (const char* purpose : {"model", "optimizer", "wire", "checkpoint"})
        for (const char* n : {"copies_in", "copies_out", "copies_between_devices", "syncs"})
            QVERIFY2(figure(s, purpose, n) == 0,
                     (QByteArray(purpose) + " " + n + ": " + what).constData());
    // The training set is kept on the device: only the batch's sample indices go in.
    QCOMPARE(figure(s, "data", "copies_in"), 1.0);
    QCOMPARE(figure(s, "data", "syncs"), 0.0);
    // The figures are read now and then, not each step: at most two reads (the loss, then
    // the counts) at a time, and not every step.
    QVERIFY2(figure(s, "figures", "syncs") < 2.0, what.constData());
    QCOMPARE(figure(s, "optimizer", "optimizer_steps"), 1.0);
    // One multi-tensor update: a handful of kernels, however many tensors (the per-tensor
    // path launched about eight per tensor), and one with the fused kernel.
    const double kernels = figure(s, "optimizer", "kernels");
    QVERIFY2(kernels > 0 && kernels <= 10,
             qPrintable(QStringLiteral("%1 kernels for %2 tensors: %3")
                            .arg(kernels)
                            .arg(tensors)
                            .arg(traffic(s))));
}

// The ledger against copies and reads made by hand: each direction, its bytes, and the waits.
void TestLedger::countsCopiesAndWaitsByDirection() {
    const c10::Device device = emulatedAcceleratorDevice();
    const TrafficLedger before = trafficLedger();
    at::Tensor host = at::arange(6, at::kFloat);
    at::Tensor onDevice = host.to(device);
    QVERIFY(onDevice.device() == device);
    at::Tensor twice = onDevice.mul(2); // computed there: nothing crosses
    QVERIFY(twice.device() == device);
    double total = 0;
    {
        LedgerScope purpose(LedgerPurpose::Figures);
        total = twice.sum().item<double>();
    }
    const at::Tensor back = twice.to(at::kCPU);
    const TrafficLedger d = trafficLedger() - before;
    QCOMPARE(total, 30.0);
    QVERIFY(at::equal(back, host.mul(2)));
    const TrafficCounts& model = d[LedgerPurpose::Model];
    QCOMPARE(model.copiesIn, int64_t(1));
    QCOMPARE(model.bytesIn, int64_t(24));
    QCOMPARE(model.copiesOut, int64_t(1));
    QCOMPARE(model.bytesOut, int64_t(24));
    QCOMPARE(model.syncs, int64_t(1)); // the blocking copy back
    QCOMPARE(d[LedgerPurpose::Figures].syncs, int64_t(1));
    QCOMPARE(d[LedgerPurpose::Figures].copies(), int64_t(0));
    // On the CPU alone nothing crosses and nothing waits.
    const TrafficLedger cpuBefore = trafficLedger();
    (void)host.mul(3).sum().item<double>();
    const TrafficLedger cpu = trafficLedger() - cpuBefore;
    for (const TrafficCounts& c : cpu.by)
        QVERIFY(c.copies() == 0 && c.syncs == 0);
    QVERIFY(d.summary(1).contains(QStringLiteral("model: 1 in (24 B), 1 out (24 B), 1 sync")));
}

// The device's arithmetic is the CPU's, to the bit, through autograd and an optimizer.
void TestLedger::emulatedDeviceComputesAsTheCpu() {
    const c10::Device device = emulatedAcceleratorDevice();
    at::manual_seed(1);
    const at::Tensor w = at::randn({8, 5}), x = at::randn({4, 5}), img = at::randn({2, 3, 6, 6}),
                     k = at::randn({4, 3, 3, 3});
    std::vector<at::Tensor> grads[2];
    std::vector<at::Tensor> params[2];
    for (int d = 0; d < 2; ++d) {
        const c10::Device on = d ? device : c10::Device(at::kCPU);
        at::Tensor wd = w.to(on).clone().set_requires_grad(true),
                   kd = k.to(on).clone().set_requires_grad(true);
        at::Tensor y = at::matmul(x.to(on), wd.t()).relu().log_softmax(1).sum() +
                       at::conv2d(img.to(on), kd, {}, 1, 1).tanh().mean();
        y.backward();
        grads[d] = {wd.grad().to(at::kCPU), kd.grad().to(at::kCPU)};
        params[d] = {wd.detach(), kd.detach()};
        OptimizerConfig c;
        c.kind = OptimizerKind::AdamW;
        c.weightDecay = 0.1;
        Optimizer opt(c, params[d]);
        opt.step({wd.grad(), kd.grad()}, 0.01);
        opt.step({wd.grad(), kd.grad()}, 0.01);
    }
    for (size_t i = 0; i < 2; ++i) {
        QVERIFY(at::equal(grads[0][i], grads[1][i]));
        QVERIFY(params[1][i].device() == device);
        // The fused kernel (LibTorch 2.4 on, on an accelerator) rounds differently.
        QVERIFY(at::allclose(params[0][i], params[1][i].to(at::kCPU), 1e-5, 1e-6));
    }
}

// A batch from the rows kept on the device, and one gathered for it on the host (the path with
// page-locked memory on CUDA), against the host's own batch, for each kind of storage; and the
// indices alone cross for the kept rows.
void TestLedger::batchesOnTheDeviceAreTheHosts() {
    const c10::Device device = emulatedAcceleratorDevice();
    std::vector<Dataset> sets(4);
    sets[0].storage = Dataset::Storage::U8;
    sets[0].sampleShape = {1, 3, 2};
    for (int i = 0; i < 10 * 6; ++i)
        sets[0].u8.push_back(uint8_t(i * 37 % 256));
    sets[0].labels = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    sets[1].storage = Dataset::Storage::F32;
    sets[1].sampleShape = {3};
    sets[1].targets = Dataset::Targets::Values;
    sets[1].targetShape = {2};
    for (int i = 0; i < 10 * 3; ++i)
        sets[1].f32.push_back(float(i) / 7.0f);
    for (int i = 0; i < 10 * 2; ++i)
        sets[1].values.push_back(-float(i));
    sets[2].storage = Dataset::Storage::I64;
    sets[2].sampleShape = {4};
    sets[2].targets = Dataset::Targets::Ids;
    sets[2].targetShape = {4};
    for (int i = 0; i < 10 * 4; ++i) {
        sets[2].i64.push_back(i * 3 + 1);
        sets[2].labels.push_back(i % 5 == 0 ? -100 : i);
    }
    QByteArray tokens;
    for (int i = 0; i < 200; ++i) {
        const uint16_t t = uint16_t(i * 997 % 50000);
        tokens.append(reinterpret_cast<const char*>(&t), 2);
    }
    auto stream = TokenStream::fromBytes(tokens, TokenType::U16, QStringLiteral("tokens"));
    QVERIFY(stream);
    sets[3].storage = Dataset::Storage::Windows;
    sets[3].sampleShape = {8};
    sets[3].targets = Dataset::Targets::Ids;
    sets[3].targetShape = {8};
    sets[3].stream = *stream;
    sets[3].firstToken = 30;
    sets[3].windows = 20;
    const std::vector<int64_t> indices{3, 0, 9, 9, 5};
    for (const Dataset& data : sets) {
        const at::Tensor x = gatherInputs(data, indices), y = gatherTargets(data, indices);
        const ResidentRows rows(data, device);
        const TrafficLedger before = trafficLedger();
        at::Tensor rx, ry;
        {
            LedgerScope purpose(LedgerPurpose::Data);
            std::tie(rx, ry) = rows.batch(indices);
        }
        const TrafficCounts kept = (trafficLedger() - before)[LedgerPurpose::Data];
        QVERIFY(rx.device() == device && ry.device() == device);
        QVERIFY(at::equal(rx.to(at::kCPU), x));
        QVERIFY(at::equal(ry.to(at::kCPU), y));
        QCOMPARE(kept.copiesIn, int64_t(1));
        QCOMPARE(kept.bytesIn, int64_t(indices.size() * sizeof(int64_t)));
        const auto [hx, hy] = toDevice(data, gatherForDevice(data, indices, device), device);
        QVERIFY(hx.device() == device && at::equal(hx.to(at::kCPU), x));
        QVERIFY(hy.device() == device && at::equal(hy.to(at::kCPU), y));
    }
    // The memory plan keeps a set that takes an eighth of what the model leaves, not more.
    DeviceInfo accelerator;
    accelerator.kind = DeviceKind::Emulated;
    const int64_t bytes = ResidentRows::bytesFor(sets[3]);
    QCOMPARE(bytes, int64_t((20 * 8 + 1) * 4));
    accelerator.memoryBytes = bytes * 8 * 10 / 8; // a budget of 80 %: eight times the set
    MemoryNeed need;
    QVERIFY(keepDataOnDevice(sets[3], accelerator, need));
    QCOMPARE(need.dataBytes, bytes);
    QCOMPARE(need.fixedBytes(), bytes);
    MemoryNeed heavier;
    heavier.weightBytes = 8;
    QVERIFY(!keepDataOnDevice(sets[3], accelerator, heavier));
    QCOMPARE(heavier.dataBytes, int64_t(0));
    DeviceInfo cpu = accelerator;
    cpu.kind = DeviceKind::Cpu;
    MemoryNeed onCpu;
    QVERIFY(!keepDataOnDevice(sets[3], cpu, onCpu));
}

void TestLedger::imageModelSync() {
    const QStringList args{QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=32"),
                           QStringLiteral("--limit-train=640"), QStringLiteral("--limit-test=64"),
                           QStringLiteral("--epochs=1")};
    QString log;
    const QJsonObject s = train(args + QStringList{QStringLiteral("--out=") + home("img")},
                                QStringLiteral("emulated"), &log);
    checkResident(s, 8);
    QCOMPARE(figure(s, "data", "bytes_in"), 32.0 * 8);
    QVERIFY2(log.contains(QStringLiteral("is kept on Emulated accelerator")), qPrintable(log));
    // The first step moved the model there, and the log said so.
    QVERIFY2(log.contains(QStringLiteral("traffic in step 1")), qPrintable(log));
    // The same run on the CPU: the same figures, within the fused optimizer's rounding.
    const QJsonObject cpu = train(args + QStringList{QStringLiteral("--out=") + home("img-cpu")},
                                  QStringLiteral("cpu"));
    QVERIFY(!cpu.isEmpty());
    QVERIFY2(qAbs(cpu.value(QStringLiteral("test_loss")).toDouble() -
                  s.value(QStringLiteral("test_loss")).toDouble()) < 1e-4,
             qPrintable(QStringLiteral("%1 on the CPU, %2 on the emulated device")
                            .arg(cpu.value(QStringLiteral("test_loss")).toDouble())
                            .arg(s.value(QStringLiteral("test_loss")).toDouble())));
    // Nothing crosses on the CPU.
    QCOMPARE(figure(cpu, "data", "copies_in"), 0.0);
}

void TestLedger::languageModelWhole() {
    SKIP_TRANSFORMER_ON_NEWER_TORCH();
    const QJsonObject s = train({QStringLiteral("--model=hf:") + m_llama,
                                 QStringLiteral("--data=tokens:%1,context=32").arg(m_tokens),
                                 QStringLiteral("--batch=8"), QStringLiteral("--max-steps=12"),
                                 QStringLiteral("--limit-test=16"), QStringLiteral("--lr=0.003"),
                                 QStringLiteral("--out=") + home("lm")});
    QCOMPARE(s.value(QStringLiteral("frozen_parameters")).toInteger(), 0);
    checkResident(s, 21);
}

void TestLedger::loraOnBf16Base() {
    SKIP_TRANSFORMER_ON_NEWER_TORCH();
    const QJsonObject s = train({QStringLiteral("--model=hf:") + m_llamaBf16,
                                 QStringLiteral("--lora=r=4,alpha=8,targets=q_proj,v_proj,o_proj"),
                                 QStringLiteral("--data=tokens:%1,context=32").arg(m_tokens),
                                 QStringLiteral("--batch=8"), QStringLiteral("--max-steps=12"),
                                 QStringLiteral("--limit-test=16"), QStringLiteral("--lr=0.01"),
                                 QStringLiteral("--out=") + home("lora")});
    QVERIFY(s.value(QStringLiteral("frozen_parameters")).toInteger() > 0);
    checkResident(s, 12);
}

void TestLedger::loraOnNf4Base() {
    SKIP_TRANSFORMER_ON_NEWER_TORCH();
    const QJsonObject s = train(
        {QStringLiteral("--model=hf:") + m_llamaBf16, QStringLiteral("--lora=r=4,alpha=8,base=nf4"),
         QStringLiteral("--data=tokens:%1,context=32").arg(m_tokens), QStringLiteral("--batch=8"),
         QStringLiteral("--max-steps=12"), QStringLiteral("--limit-test=16"),
         QStringLiteral("--lr=0.01"), QStringLiteral("--out=") + home("nf4")});
    QVERIFY(s.value(QStringLiteral("frozen_parameters")).toInteger() > 0);
    checkResident(s, 8);
}

// A remote worker's share: the weights leave the device for the wire and its gradients come
// back, filed under the wire; the model itself still never crosses.
void TestLedger::coordinatorWithRemoteWorker() {
    const QJsonObject s =
        trainWithWorker({QStringLiteral("--mode=sync"), QStringLiteral("--model=mnist-cnn"),
                         QStringLiteral("--batch=64"), QStringLiteral("--limit-train=1280"),
                         QStringLiteral("--limit-test=64"), QStringLiteral("--epochs=1"),
                         QStringLiteral("--out=") + home("remote")});
    const QByteArray what = traffic(s).toUtf8();
    QVERIFY2(!s.isEmpty(), "the run failed");
    for (const char* n : {"copies_in", "copies_out", "copies_between_devices"}) {
        QVERIFY2(figure(s, "model", n) == 0, (QByteArray("model ") + n + ": " + what).constData());
        QVERIFY2(figure(s, "optimizer", n) == 0,
                 (QByteArray("optimizer ") + n + ": " + what).constData());
    }
    // The one wait: the local pass's end, which the balancer times against the remote's.
    QVERIFY2(figure(s, "model", "syncs") <= 1, what.constData());
    // What the worker was sent and sent back crossed, as it must, under the wire: in each step
    // it took part in, the weights in one copy out, the gradients in one copy in, and batch
    // normalisation's few buffers. A loaded machine may have the balancer leave it out of a few
    // steps (nothing crosses then), so the steady steps' totals are whole models: as many out as
    // in, and at least one.
    const double modelBytes =
        double(s.value(QStringLiteral("trainable_parameters")).toInteger()) * 4;
    const double steps = double(s.value(QStringLiteral("traffic_per_step"))
                                    .toObject()
                                    .value(QStringLiteral("steps"))
                                    .toInteger());
    QVERIFY2(steps > 0, what.constData());
    const double out = figure(s, "wire", "bytes_out") * steps;
    const double in = figure(s, "wire", "bytes_in") * steps;
    const double models = std::floor(out / modelBytes);
    QVERIFY2(models >= 1 && models <= steps, what.constData());
    QVERIFY2(out >= models * modelBytes && out < models * modelBytes * 1.01 &&
                 in >= models * modelBytes && in < models * modelBytes * 1.01,
             qPrintable(QStringLiteral("%1 model(s) of %2 bytes; out %3, in %4: %5")
                            .arg(models)
                            .arg(modelBytes)
                            .arg(out)
                            .arg(in)
                            .arg(QString::fromUtf8(what))));
    QVERIFY2(figure(s, "wire", "copies_out") <= 4 && figure(s, "wire", "copies_in") <= 4,
             what.constData());
    const QJsonArray workers = s.value(QStringLiteral("workers")).toArray();
    QCOMPARE(workers.size(), 2);
    for (const QJsonValue& w : workers)
        QVERIFY(w.toObject().value(QStringLiteral("samples")).toInteger() > 0);
}

// Local-SGD's streamed rounds: the coordinator's weights stay in the host's memory, and its own
// worker takes each fragment in and sends its delta back once a round, no more.
// `--split`: each sync step's phases, timed to the device's end of each, in the log and the
// summary; with a remote worker every phase has time in it, and together they fit in the step.
void TestLedger::stepSplitSaysWhereTimeGoes() {
    QString log;
    const QJsonObject s =
        trainWithWorker({QStringLiteral("--mode=sync"), QStringLiteral("--model=mnist-cnn"),
                         QStringLiteral("--batch=64"), QStringLiteral("--limit-train=640"),
                         QStringLiteral("--limit-test=64"), QStringLiteral("--epochs=1"),
                         QStringLiteral("--split"), QStringLiteral("--out=") + home("split")},
                        &log);
    QVERIFY2(!s.isEmpty(), "the run failed");
    const QJsonObject split = s.value(QStringLiteral("step_split")).toObject();
    const QByteArray what = QJsonDocument(split).toJson(QJsonDocument::Compact);
    QCOMPARE(split.value(QStringLiteral("steps")).toInteger(), qint64(9)); // after the first
    double phases = 0;
    for (const char* phase : {"local_pass_ms", "wire_ms", "optimizer_ms"}) {
        QVERIFY2(split.value(QLatin1String(phase)).toDouble() > 0,
                 (QByteArray(phase) + ": " + what).constData());
        phases += split.value(QLatin1String(phase)).toDouble();
    }
    phases += split.value(QStringLiteral("waiting_ms")).toDouble(-1);
    QVERIFY2(split.value(QStringLiteral("waiting_ms")).toDouble(-1) >= 0, what.constData());
    QVERIFY2(phases <= split.value(QStringLiteral("step_ms")).toDouble() * 1.001 + 0.01,
             what.constData());
    QVERIFY2(log.contains(QStringLiteral("time per step, steps 2-10: ")), qPrintable(log));
}

void TestLedger::streamingRounds() {
    const QJsonObject s =
        trainWithWorker({QStringLiteral("--mode=local-sgd"), QStringLiteral("--local-steps=4"),
                         QStringLiteral("--fragments=2"), QStringLiteral("--model=mnist-cnn"),
                         QStringLiteral("--batch=32"), QStringLiteral("--limit-train=1280"),
                         QStringLiteral("--limit-test=64"), QStringLiteral("--epochs=1"),
                         QStringLiteral("--out=") + home("stream")});
    const QByteArray what = traffic(s).toUtf8();
    QVERIFY2(!s.isEmpty(), "the run failed");
    QCOMPARE(s.value(QStringLiteral("mode")).toString(), QStringLiteral("local-sgd"));
    const double modelBytes =
        double(s.value(QStringLiteral("trainable_parameters")).toInteger()) * 4;
    QVERIFY2(figure(s, "model", "bytes_in") <= modelBytes * 1.05 &&
                 figure(s, "model", "bytes_out") <= modelBytes * 1.05,
             what.constData());
    QCOMPARE(figure(s, "model", "copies_between_devices"), 0.0);
}

QTEST_GUILESS_MAIN(TestLedger)
#include "test_ledger.moc"
