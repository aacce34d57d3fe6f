// Devices: what is detected, how a device list the user gives is read, threads per core, and
// MPS's memory limit.

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

class TestDevices : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { at::set_num_threads(1); }
    void devices();
    void threadsAreCappedPerCore();
    void choosingDevices();
    void mpsMemoryLimitsUnlessTheUserChose();
};

void TestDevices::devices() {
    const QList<DeviceInfo> ds = detectDevices();
    QVERIFY(!ds.isEmpty());
    const DeviceInfo& cpu = ds.last();
    QVERIFY(cpu.kind == DeviceKind::Cpu);
    QCOMPARE(cpu.cores, QThread::idealThreadCount());
    QVERIFY(cpu.memoryBytes > (int64_t(256) << 20));
    QVERIFY(!cpu.name.isEmpty());
    QVERIFY(!cpu.torchVersion.isEmpty());
    QCOMPARE(cpu.torchDevice(), QStringLiteral("cpu"));
    int cuda = 0, mps = 0;
    for (const DeviceInfo& d : ds) {
        QVERIFY(d.kind == DeviceKind::Cuda || d.kind == DeviceKind::Mps ||
                d.kind == DeviceKind::Cpu);
        cuda += d.kind == DeviceKind::Cuda;
        mps += d.kind == DeviceKind::Mps;
        const QJsonObject j = d.toJson();
        for (const char* key : {"kind", "name", "memory_bytes", "index"})
            QVERIFY2(j.contains(QLatin1String(key)), key);
    }
    QCOMPARE(cuda, torch::cuda::is_available() ? int(torch::cuda::device_count()) : 0);
    QCOMPARE(mps, at::hasMPS() ? 1 : 0);
    // The order is CUDA, MPS, CPU: the first entry is the device a run prefers.
    if (cuda > 0)
        QVERIFY(ds.first().kind == DeviceKind::Cuda);
}

void TestDevices::threadsAreCappedPerCore() {
    QString warning;
    QCOMPARE(threadsFor(0, 2, &warning), 2);
    QCOMPARE(threadsFor(8, 2, &warning), 8);
    QVERIFY(warning.isEmpty());
    QCOMPARE(threadsFor(1024, 2, &warning), 2);
    QVERIFY2(warning.contains(QStringLiteral("1024")) &&
                 warning.contains(QStringLiteral("using 2")),
             qPrintable(warning));
}

void TestDevices::choosingDevices() {
    DeviceInfo cuda0, cuda1, cpu;
    cuda0.kind = cuda1.kind = DeviceKind::Cuda;
    cuda1.index = 1;
    cpu.kind = DeviceKind::Cpu;
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
    QVERIFY(chooseDevices({cpu}, QStringLiteral("all"))->first().kind == DeviceKind::Cpu);
    QCOMPARE(chooseDevices(two, QStringLiteral("cuda:1,cpu"))->size(), 2);
    QVERIFY(!chooseDevices(two, QStringLiteral("cuda:0,cuda:5")));
    QVERIFY(!chooseDevices(two, QStringLiteral(",")));
    // This machine: the CPU is always there.
    QVERIFY(chooseDevice(detectDevices(), QStringLiteral("cpu"))->kind == DeviceKind::Cpu);
}

void TestDevices::mpsMemoryLimitsUnlessTheUserChose() {
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

QTEST_GUILESS_MAIN(TestDevices)
#include "test_devices.moc"
