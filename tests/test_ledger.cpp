// What crosses between host and device in a step, counted by the traffic ledger on the
// accelerator's paths: every run here trains on the emulated accelerator (the CPU behind a
// device of its own, model/emulatedaccelerator.h), so LibTorch copies and waits exactly where a
// GPU run would. First the ledger and the emulated device themselves, then whole runs through
// `tandem train --ledger`: an image model, a language model trained whole, LoRA on a bf16 and on
// an nf4 base, a coordinator with a remote worker, and local-SGD's streamed rounds.

#include "engine/optimizer.h"
#include "model/emulatedaccelerator.h"
#include "model/torchversion.h"
#include "model/trafficledger.h"

#include "hffolder.h"
#include "proc.h"
#include "testutil.h"

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
    void imageModelSync();
    void languageModelWhole();
    void loraOnBf16Base();
    void loraOnNf4Base();
    void coordinatorWithRemoteWorker();
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
    const QString coordId =
        tandemOutput({QStringLiteral("identity"), QStringLiteral("--home"), home("coord")});
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
    // Exactly the batch goes in: its inputs and its targets.
    QCOMPARE(figure(s, "data", "copies_in"), 2.0);
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

void TestLedger::imageModelSync() {
    const QStringList args{QStringLiteral("--model=mnist-cnn"), QStringLiteral("--batch=32"),
                           QStringLiteral("--limit-train=640"), QStringLiteral("--limit-test=64"),
                           QStringLiteral("--epochs=1")};
    QString log;
    const QJsonObject s = train(args + QStringList{QStringLiteral("--out=") + home("img")},
                                QStringLiteral("emulated"), &log);
    checkResident(s, 8);
    QCOMPARE(figure(s, "data", "bytes_in"), 32.0 * 784 * 4 + 32 * 8);
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
    // What the worker was sent and sent back crossed, as it must, under the wire: the weights
    // in one copy out, the gradients in one copy in, and batch normalisation's few buffers.
    const double modelBytes =
        double(s.value(QStringLiteral("trainable_parameters")).toInteger()) * 4;
    QVERIFY2(figure(s, "wire", "bytes_out") >= modelBytes &&
                 figure(s, "wire", "bytes_out") < modelBytes * 1.01 &&
                 figure(s, "wire", "bytes_in") >= modelBytes &&
                 figure(s, "wire", "bytes_in") < modelBytes * 1.01,
             what.constData());
    QVERIFY2(figure(s, "wire", "copies_out") <= 4 && figure(s, "wire", "copies_in") <= 4,
             what.constData());
    const QJsonArray workers = s.value(QStringLiteral("workers")).toArray();
    QCOMPARE(workers.size(), 2);
    for (const QJsonValue& w : workers)
        QVERIFY(w.toObject().value(QStringLiteral("samples")).toInteger() > 0);
}

// Local-SGD's streamed rounds: the coordinator's weights stay in the host's memory, and its own
// worker takes each fragment in and sends its delta back once a round, no more.
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
