// The frame decoder, blob reassembly and message encoding, fed good, truncated, oversized and
// random input.

#include "common/files.h"
#include "wire/framing.h"
#include "wire/messages.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QStorageInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <cmath>
#include <limits>

using namespace tandem;
using namespace tandem::wire;

class TestWire : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void compatibilityRule();
    void framesSplitAcrossReads();
    void oversizedLengthFailsBeforeBuffering();
    void truncatedFrameWaits();
    void blobPartFrames();
    void blobAssemblerChecks();
    void spilledBlobsGoToFiles();
    void freeSpaceComesFromTheFileSystem();
    void messagesRoundTrip();
    void decodeRejectsGarbage();
    void randomStreamsNeverCrash();
    void readerReassemblesMessagesAndBlobs();
    void readerChecksABlobPartBeforeReadingIt();
    void readerKeepsACutBlobIncomplete();
};

namespace {
// A source that hands out `bytes` in pieces of at most `piece` bytes per call, and nothing
// between calls to more().
struct Trickle {
    QByteArray bytes;
    qsizetype pos = 0, limit = 0, piece = 1;
    qint64 read(char* to, qint64 max) {
        const qint64 n = std::min<qint64>({max, qint64(piece), qint64(limit - pos)});
        memcpy(to, bytes.constData() + pos, size_t(n));
        pos += qsizetype(n);
        return n;
    }
    void more(qsizetype n) { limit = std::min(bytes.size(), limit + n); }
};
} // namespace

namespace {
// Every frame that is not a blob part, reading `stream` in pieces of `piece` bytes.
QList<QByteArray> readAll(FrameReader& reader, const QByteArray& stream, qsizetype piece) {
    Trickle t{stream};
    t.piece = piece;
    QList<QByteArray> got;
    while (t.pos < stream.size() && !reader.failed()) {
        t.more(piece);
        while (auto p = reader.next([&](char* to, qint64 max) { return t.read(to, max); }))
            got << *p;
    }
    return got;
}
} // namespace

void TestWire::framesSplitAcrossReads() {
    const QByteArray a = frame("hello"), b = frame(QByteArray(1000, 'x')), c = frame(QByteArray());
    BlobAssembler none;
    FrameReader reader(none);
    // One byte at a time: the worst split.
    const QList<QByteArray> got = readAll(reader, a + b + c, 1);
    QVERIFY(!reader.failed());
    QCOMPARE(got.size(), 3);
    QCOMPARE(got[0], QByteArray("hello"));
    QCOMPARE(got[1], QByteArray(1000, 'x'));
    QCOMPARE(got[2], QByteArray());
}

void TestWire::oversizedLengthFailsBeforeBuffering() {
    BlobAssembler none;
    FrameReader reader(none, 1024);
    char len[4];
    qToLittleEndian<quint32>(0xffffffffu, len);
    Trickle t{QByteArray(len, 4) + frame("late")};
    t.more(t.bytes.size());
    t.piece = t.bytes.size();
    QVERIFY(!reader.next([&](char* to, qint64 max) { return t.read(to, max); }));
    QVERIFY(reader.failed());
    QVERIFY2(reader.error().contains(QStringLiteral("4294967295")), qPrintable(reader.error()));
    QCOMPARE(t.pos, 4); // nothing read past the length
    // A failed reader stays failed.
    QVERIFY(!reader.next([&](char* to, qint64 max) { return t.read(to, max); }));
    QCOMPARE(t.pos, 4);
}

void TestWire::truncatedFrameWaits() {
    BlobAssembler none;
    FrameReader reader(none);
    const QByteArray f = frame(QByteArray(100, 'a'));
    Trickle t{f};
    t.piece = f.size();
    auto source = [&](char* to, qint64 max) { return t.read(to, max); };
    t.more(50);
    QVERIFY(!reader.next(source));
    QVERIFY(!reader.failed());
    t.more(f.size());
    QCOMPARE(reader.next(source).value(), QByteArray(100, 'a'));
}

void TestWire::blobPartFrames() {
    const QByteArray data("0123456789");
    BlobAssembler blobs;
    blobs.setCap(2, 100);
    FrameReader reader(blobs);
    // Two parts of blob 77, and a message after them: the parts go to the assembler.
    const QByteArray stream = blobPartFrame(2, 77, 20, 0, QByteArrayView(data)) +
                              blobPartFrame(2, 77, 20, 10, QByteArrayView(data)) +
                              frame(encode(Ping{1}));
    const QList<QByteArray> got = readAll(reader, stream, 7);
    QCOMPARE(got, QList<QByteArray>{encode(Ping{1})});
    QCOMPARE(blobs.take(77).value(), data + data);
    // The header alone, announced by length and written without its data.
    const QByteArray head = blobPartFrame(2, 78, 5, 0, {}, 5);
    QCOMPARE(head.size(), 4 + kBlobPartHeader);
    QCOMPARE(qFromLittleEndian<quint32>(head.constData()), quint32(kBlobPartHeader + 5));
    // A payload that starts like a blob part but is shorter than its header is refused.
    BlobAssembler other;
    FrameReader strict(other);
    readAll(strict, frame(QByteArray(kBlobPartHeader - 1, '\0')), 64);
    QVERIFY(strict.failed());
    QVERIFY2(strict.error().contains(QStringLiteral("truncated")), qPrintable(strict.error()));
    // An encoded message never starts as a blob part does.
    QVERIFY(encode(Ping{1}).at(0) != '\0');
    QVERIFY(encode(Bye{}).at(0) != '\0');
}

void TestWire::spilledBlobsGoToFiles() {
    QTemporaryDir dir;
    const QString spill = dir.filePath(QStringLiteral("incoming"));
    const auto tokens = uint32_t(BlobKind::Tokens);
    auto files = [&] { return QDir(spill).entryList(QDir::Files); };
    {
        BlobAssembler a;
        a.setCap(tokens, std::numeric_limits<qint64>::max());
        a.setSpill(tokens, spill);
        QVERIFY(a.add(1, tokens, 10, 0, "01234").ok());
        QCOMPARE(files().size(), 1); // written as it comes, not held
        QVERIFY(a.pendingBytes() <= 5);
        QVERIFY(a.add(1, tokens, 10, 5, "56789").ok());
        QVERIFY(!a.take(1)); // a spilled blob is a file, never bytes in memory
        const std::optional<QString> path = a.takeFile(1);
        QVERIFY(path);
        QVERIFY(!a.takeFile(1)); // taken once
        QFile f(*path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("0123456789"));
        f.close();
        QVERIFY(f.remove());
        // The same checks as for blobs in memory.
        QVERIFY(a.add(2, tokens, 4, 0, "ab").ok());
        QVERIFY(!a.add(2, tokens, 4, 3, "c").ok());   // out of order
        QVERIFY(!a.add(3, tokens, 2, 0, "abc").ok()); // past its size
        QVERIFY(a.add(4, tokens, 0, 0, "").ok());     // empty
        const std::optional<QString> empty = a.takeFile(4);
        QVERIFY(empty && QFileInfo(*empty).size() == 0);
        QFile::remove(*empty);
        // More than the disk holds is refused before a byte is written, saying so.
        const auto huge = a.add(5, tokens, quint64(1) << 62, 0, "x");
        QVERIFY(!huge.ok());
        QVERIFY2(huge.error().message.contains(QLatin1String("free")),
                 qPrintable(huge.error().message));
        QVERIFY(a.add(6, tokens, 8, 0, "half").ok()); // never completed
    }
    // What was never completed or never taken leaves no file behind.
    QVERIFY2(files().isEmpty(), qPrintable(files().join(QLatin1Char(' '))));

    // A kind that may be held instead (a range's state at the coordinator): one the folder
    // cannot take is held in memory, and taken as bytes; one it can take is a file as before.
    const auto state = uint32_t(BlobKind::RangeState);
    BlobAssembler held;
    held.setCap(state, std::numeric_limits<qint64>::max());
    held.setSpill(state, spill, /*orHold=*/true);
    QVERIFY(held.add(2, state, 4, 0, "abcd").ok());
    QVERIFY(files().size() == 1 && !held.take(2) && held.takeFile(2));
    QVERIFY(QDir(spill).removeRecursively());
    QFile blocker(spill); // a file where the folder was: no folder can be made there
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    QVERIFY(held.add(3, state, 4, 0, "wxyz").ok());
    QVERIFY(!held.takeFile(3));
    QCOMPARE(held.take(3).value(), QByteArray("wxyz"));
    BlobAssembler refused;
    refused.setCap(state, 100);
    refused.setSpill(state, spill);
    QVERIFY(!refused.add(1, state, 4, 0, "wxyz").ok());
    QVERIFY(blocker.remove());
}

void TestWire::blobAssemblerChecks() {
    BlobAssembler a;
    a.setCap(uint32_t(BlobKind::Tensors), 100);
    QVERIFY(a.add(1, uint32_t(BlobKind::Tensors), 10, 0, "01234").ok());
    QVERIFY(!a.take(1));
    QVERIFY(a.add(1, uint32_t(BlobKind::Tensors), 10, 5, "56789").ok());
    QCOMPARE(a.take(1).value(), QByteArray("0123456789"));
    QVERIFY(!a.take(1)); // taken once

    QVERIFY(!a.add(2, uint32_t(BlobKind::Tensors), 101, 0, "x").ok()); // over the cap
    QVERIFY(!a.add(3, uint32_t(BlobKind::Model), 5, 0, "x").ok());     // kind not expected
    QVERIFY(!a.add(0, uint32_t(BlobKind::Tensors), 5, 0, "x").ok());   // id 0
    QVERIFY(a.add(4, uint32_t(BlobKind::Tensors), 4, 0, "ab").ok());
    QVERIFY(!a.add(4, uint32_t(BlobKind::Tensors), 4, 3, "c").ok());   // out of order
    QVERIFY(!a.add(5, uint32_t(BlobKind::Tensors), 2, 0, "abc").ok()); // past its size
    QVERIFY(a.add(6, uint32_t(BlobKind::Tensors), 4, 0, "ab").ok());
    QVERIFY(!a.add(6, uint32_t(BlobKind::Tensors), 8, 2, "cd").ok()); // size changed
    QVERIFY(a.add(7, uint32_t(BlobKind::Tensors), 0, 0, "").ok());    // empty blob
    QCOMPARE(a.take(7).value(), QByteArray());

    BlobAssembler few;
    few.setCap(uint32_t(BlobKind::Tensors), 100);
    few.setMaxPending(2);
    QVERIFY(few.add(1, uint32_t(BlobKind::Tensors), 10, 0, "a").ok());
    QVERIFY(few.add(2, uint32_t(BlobKind::Tensors), 10, 0, "a").ok());
    QVERIFY(!few.add(3, uint32_t(BlobKind::Tensors), 10, 0, "a").ok()); // too many in flight

    // A reused kind comes once per step: a complete blob nobody took (its sender gave it up)
    // goes when the next one starts, and never holds memory or a slot for good.
    BlobAssembler steps;
    steps.setCap(uint32_t(BlobKind::Tensors), 100);
    steps.setCap(uint32_t(BlobKind::Model), 100);
    steps.setReuse(uint32_t(BlobKind::Tensors));
    steps.setMaxPending(2);
    QVERIFY(steps.add(1, uint32_t(BlobKind::Model), 2, 0, "mm").ok());
    QVERIFY(steps.add(2, uint32_t(BlobKind::Tensors), 2, 0, "ab").ok()); // given up
    QVERIFY(steps.add(3, uint32_t(BlobKind::Tensors), 2, 0, "cd").ok());
    QVERIFY(!steps.take(2));
    QCOMPARE(steps.take(3).value(), QByteArray("cd"));
    QCOMPARE(steps.take(1).value(), QByteArray("mm")); // other kinds are kept until taken

    // Only a size that came before is kept for the next blob: one that comes once is let go.
    BlobAssembler kept;
    kept.setCap(uint32_t(BlobKind::Tensors), 100);
    kept.setReuse(uint32_t(BlobKind::Tensors));
    const auto takeOne = [&](uint64_t id, const QByteArray& bytes) {
        QVERIFY(kept.add(id, uint32_t(BlobKind::Tensors), uint64_t(bytes.size()), 0, bytes).ok());
        QCOMPARE(kept.take(id).value(), bytes);
    };
    takeOne(1, "a setup of its own size");
    QCOMPARE(kept.spareBytes(), 0);
    takeOne(2, "step one");
    takeOne(3, "step two");
    QCOMPARE(kept.spareBytes(), 8);
    takeOne(4, "step 3!!"); // the spare's memory, written again
    QCOMPARE(kept.spareBytes(), 8);
    takeOne(5, "a checkpoint's state");
    QCOMPARE(kept.spareBytes(), 0);
}

// Nodes work together exactly when their protocol versions agree; the refusal names both
// versions and the release to install.
void TestWire::compatibilityRule() {
    using wire::incompatibility;
    using wire::kProtocolVersion;
    QVERIFY(incompatibility(QStringLiteral("0.1.0"), kProtocolVersion, QStringLiteral("0.1.7"),
                            QStringLiteral("worker"))
                .isEmpty());
    const QString newerPeer = incompatibility(QStringLiteral("0.1.0"), kProtocolVersion + 1,
                                              QStringLiteral("0.3.0"), QStringLiteral("worker"));
    QVERIFY(newerPeer.contains(QStringLiteral("Tandem 0.1.0 (protocol %1)").arg(kProtocolVersion)));
    QVERIFY(newerPeer.contains(
        QStringLiteral("worker runs Tandem 0.3.0 (protocol %1)").arg(kProtocolVersion + 1)));
    QVERIFY(newerPeer.contains(QStringLiteral("Install Tandem 0.3.0 or later on both machines")));
    const QString olderPeer = incompatibility(QStringLiteral("0.4.0"), 0, QStringLiteral("0.0.9"),
                                              QStringLiteral("coordinator"));
    QVERIFY(olderPeer.contains(QStringLiteral("Install Tandem 0.4.0 or later")));
    QVERIFY(olderPeer.contains(QStringLiteral("coordinator runs Tandem 0.0.9 (protocol 0)")));
}

void TestWire::messagesRoundTrip() {
    Hello h;
    h.appVersion = QStringLiteral("0.1.0");
    h.torchVersion = QStringLiteral("2.3.0");
    h.deviceId = QString(64, QLatin1Char('a'));
    h.displayName = QStringLiteral("MacBook");
    h.role = QStringLiteral("worker");
    DeviceInfo d;
    d.kind = DeviceKind::Mps;
    d.name = QStringLiteral("Apple M2 GPU (MPS)");
    d.memoryBytes = 16LL << 30;
    h.devices << d;
    auto back = decode(encode(h));
    QVERIFY(back.ok());
    const Hello& h2 = std::get<Hello>(*back);
    QCOMPARE(h2.protocolVersion, kProtocolVersion);
    QCOMPARE(h2.displayName, h.displayName);
    QCOMPARE(h2.devices.size(), 1);
    QCOMPARE(h2.devices[0].memoryBytes, d.memoryBytes);
    QVERIFY(!h2.holdsOnly);
    h.holdsOnly = true; // a --hold-only worker, which is sent no model
    QVERIFY(std::get<Hello>(*decode(encode(h))).holdsOnly);

    auto offer = decode(encode(DataOffer{4, 5, 6}));
    QVERIFY(offer.ok());
    QCOMPARE(std::get<DataOffer>(*offer).blob, uint64_t(4));
    QCOMPARE(std::get<DataOffer>(*offer).trainTokensBlob, uint64_t(5));
    QCOMPARE(std::get<DataOffer>(*offer).testTokensBlob, uint64_t(6));

    RunSpec s;
    s.runId = QStringLiteral("r1");
    s.settings.optimizer = OptimizerKind::RmsProp;
    s.settings.momentum = 0.5;
    s.settings.weightDecay = 0.01;
    s.settings.precision = Precision::Bf16;
    s.settings.loss = LossKind::Huber;
    s.mode = TrainMode::LocalSgd;
    s.wire = WireDtype::Bf16;
    s.outerWire = OuterWire::Int4;
    s.modelBlob = 3;
    s.params << TensorMeta{QStringLiteral("fc1.weight"), {256, 784}, QStringLiteral("F32")};
    s.buffers << TensorMeta{QStringLiteral("bn.num_batches_tracked"), {}, QStringLiteral("I64")};
    s.trainSamples = 60000;
    auto sb = decode(encode(s));
    QVERIFY(sb.ok());
    const RunSpec& s2 = std::get<RunSpec>(*sb);
    QCOMPARE(s2.params[0].shape, (std::vector<int64_t>{256, 784}));
    QCOMPARE(s2.buffers[0].dtype, QStringLiteral("I64"));
    QVERIFY(s2.settings == s.settings);
    QCOMPARE(s2.mode, TrainMode::LocalSgd);
    QCOMPARE(s2.wire, WireDtype::Bf16);
    QCOMPARE(s2.outerWire, std::optional<OuterWire>(OuterWire::Int4));
    // Whole rounds unless it says (a coordinator before the field sends none); a streamed run
    // says its fragments, and no more than the Assign's 4096.
    QCOMPARE(s2.fragments, 1);
    s.fragments = 4;
    QCOMPARE(std::get<RunSpec>(*decode(encode(s))).fragments, 4);
    s.fragments = 5000;
    auto tooMany = decode(encode(s));
    QVERIFY(!tooMany.ok());
    QVERIFY2(tooMany.error().message.contains(QStringLiteral("5000 fragments")),
             qPrintable(tooMany.error().message));
    s.fragments = 1;
    // A sync run names no outer wire.
    s.mode = TrainMode::Sync;
    s.outerWire.reset();
    auto sync = decode(encode(s));
    QVERIFY(sync.ok());
    QVERIFY(!std::get<RunSpec>(*sync).outerWire);
    // A choice this version does not know (a later release's optimizer) is refused, naming it,
    // never read as a default.
    QByteArray later = encode(s);
    const int at = later.indexOf("rmsprop");
    QVERIFY(at > 0);
    later.replace(at, 7, "lion-v2");
    auto refused = decode(later);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().code, ErrorCode::Incompatible);
    QVERIFY2(refused.error().message.contains(QLatin1String("optimizer")) &&
                 refused.error().message.contains(QLatin1String("\"lion-v2\"")),
             qPrintable(refused.error().message));

    Assign a;
    a.step = 12;
    a.indices = {5, 1, 59999};
    a.seed = 0xffffffffffffffffULL;
    a.weightsBlob = 9;
    auto ab = decode(encode(a));
    QVERIFY(ab.ok());
    QCOMPARE(std::get<Assign>(*ab).indices, a.indices);
    QCOMPARE(std::get<Assign>(*ab).seed, a.seed);

    Result r;
    r.samples = 10;
    r.correct = 7;
    r.counted = 40; // a sequence's positions
    r.lossSum = 3.5;
    auto rb = decode(encode(r));
    QVERIFY(rb.ok());
    QCOMPARE(std::get<Result>(*rb).lossSum, 3.5);
    QCOMPARE(std::get<Result>(*rb).correct, 7);
    QCOMPARE(std::get<Result>(*rb).counted, 40);
    QCOMPARE(messageName(*rb), QStringLiteral("Result"));
    // Preference tuning's figures over its pairs.
    r.counted = 10;
    r.pairs = 10;
    r.pairSums = {0.5, -0.25, 0.75, -40, -52.5};
    rb = decode(encode(r));
    QVERIFY(rb.ok());
    QCOMPARE(std::get<Result>(*rb).pairs, 10);
    QCOMPARE(std::get<Result>(*rb).pairSums, r.pairSums);

    auto cb = decode(encode(Control{Control::Action::Pause}));
    QVERIFY(cb.ok());
    QCOMPARE(std::get<Control>(*cb).action, Control::Action::Pause);

    // A sharded run's link: the run and its token, then the welcome.
    const ShardJoin join{QStringLiteral("run-7"), QByteArray(32, '\x5a')};
    auto jb = decode(encode(join));
    QVERIFY(jb.ok());
    QCOMPARE(std::get<ShardJoin>(*jb).runId, join.runId);
    QCOMPARE(std::get<ShardJoin>(*jb).token, join.token);
    QCOMPARE(messageName(*jb), QStringLiteral("ShardJoin"));
    QCOMPARE(messageName(*decode(encode(ShardWelcome{}))), QStringLiteral("ShardWelcome"));
    auto gb = decode(encode(ShardGrads{4, 17}));
    QVERIFY(gb.ok());
    QCOMPARE(std::get<ShardGrads>(*gb).step, 4);
    QCOMPARE(std::get<ShardGrads>(*gb).blob, uint64_t(17));
    auto wb = decode(encode(ShardWeights{5, 18}));
    QVERIFY(wb.ok());
    QCOMPARE(std::get<ShardWeights>(*wb).step, 5);
    QCOMPARE(std::get<ShardWeights>(*wb).blob, uint64_t(18));
    // An owner's sums for the coordinator's log; a span backwards, or with more flags than
    // values, is refused.
    auto sumBack =
        decode(encode(ShardSum{6, 19, 4096, 8192, 0.001, QByteArray("\x01\x00\x01", 3)}));
    QVERIFY(sumBack.ok());
    const auto& sum = std::get<ShardSum>(*sumBack);
    QCOMPARE(sum.step, 6);
    QCOMPARE(sum.blob, uint64_t(19));
    QCOMPARE(sum.from, 4096);
    QCOMPARE(sum.to, 8192);
    QCOMPARE(sum.lr, 0.001);
    QCOMPARE(sum.present, QByteArray("\x01\x00\x01", 3));
    QVERIFY(!decode(encode(ShardSum{6, 19, 8192, 4096, 0.001, {}})).ok());
    QVERIFY(!decode(encode(ShardSum{6, 19, 0, 2, 0.001, QByteArray(3, '\x01')})).ok());

    // A sharded run's control: the setup, the members' reports, a step's close.
    ShardSetup setup;
    setup.runId = QStringLiteral("run-7");
    setup.token = QByteArray(32, '\x33');
    setup.members = {{QStringLiteral("A"), QStringLiteral("10.0.0.1"), 4000},
                     {QStringLiteral("B"), QStringLiteral("::1"), 4001, true}};
    setup.ranges = {{0, 10, QStringLiteral("A")}, {10, 25, QStringLiteral("B")}};
    setup.firstStep = 3;
    setup.mastersBlob = 9;
    setup.optimizerSteps = 12;
    setup.backup = true;
    setup.outerStep = true;
    setup.outerMomentum = 0.9;
    setup.linkTimeoutMs = 5000;
    setup.fragments = 4;
    auto setupBack = decode(encode(setup));
    QVERIFY(setupBack.ok());
    const auto& got = std::get<ShardSetup>(*setupBack);
    QCOMPARE(got.runId, setup.runId);
    QCOMPARE(got.token, setup.token);
    QCOMPARE(got.members.size(), 2);
    QCOMPARE(got.members[1].host, QStringLiteral("::1"));
    QCOMPARE(got.members[1].port, quint16(4001));
    QVERIFY(!got.members[0].holdsOnly && got.members[1].holdsOnly);
    QCOMPARE(got.ranges.size(), 2);
    QCOMPARE(got.ranges[1].begin, 10);
    QCOMPARE(got.ranges[1].end, 25);
    QCOMPARE(got.ranges[1].owner, QStringLiteral("B"));
    QCOMPARE(got.firstStep, 3);
    QCOMPARE(got.mastersBlob, uint64_t(9));
    QCOMPARE(got.optimizerSteps, 12);
    QVERIFY(got.backup);
    QVERIFY(got.outerStep);
    QCOMPARE(got.outerMomentum, 0.9);
    QCOMPARE(got.linkTimeoutMs, 5000);
    QVERIFY(!got.probe);
    QCOMPARE(got.fragments, 4);
    // A probe of the links travels as a setup that says so.
    ShardSetup probe;
    probe.probe = true;
    probe.runId = QStringLiteral("run-1");
    probe.members << ShardSetup::Peer{QStringLiteral("A"), QString(), 4000};
    auto probeBack = decode(encode(probe));
    QVERIFY(probeBack.ok());
    QVERIFY(std::get<ShardSetup>(*probeBack).probe);
    QCOMPARE(std::get<ShardSetup>(*probeBack).members.size(), 1);
    QCOMPARE(std::get<ShardSetup>(*probeBack).fragments, 1); // none said: every value each step
    ShardSetup manyFragments = setup;
    manyFragments.fragments = 5000;
    QVERIFY(!decode(encode(manyFragments)).ok());
    // Local-SGD's outer momentum lies in [0, 1): another would make the owners' steps diverge.
    for (double m : {-0.1, 1.0, std::nan("")}) {
        ShardSetup wrong = setup;
        wrong.outerMomentum = m;
        QVERIFY2(!decode(encode(wrong)).ok(), qPrintable(QString::number(m)));
    }
    // A link timeout beyond a day is refused, as the run's worker timeout is.
    ShardSetup forever = setup;
    forever.linkTimeoutMs = 86400 * 1000 + 1;
    QVERIFY(!decode(encode(forever)).ok());
    QCOMPARE(messageName(*decode(encode(ShardSave{}))), QStringLiteral("ShardSave"));
    auto stb = decode(encode(ShardState{40, 13}));
    QVERIFY(stb.ok());
    QCOMPARE(std::get<ShardState>(*stb).optimizerSteps, 40);
    QCOMPARE(std::get<ShardState>(*stb).blob, uint64_t(13));
    auto rpb = decode(encode(ShardReport{ShardReport::Kind::Refused, 6, QStringLiteral("B"),
                                         QStringLiteral("not finite")}));
    QVERIFY(rpb.ok());
    QCOMPARE(std::get<ShardReport>(*rpb).kind, ShardReport::Kind::Refused);
    QCOMPARE(std::get<ShardReport>(*rpb).step, 6);
    QCOMPARE(std::get<ShardReport>(*rpb).worker, QStringLiteral("B"));
    QCOMPARE(std::get<ShardReport>(*rpb).why, QStringLiteral("not finite"));
    auto lost = decode(encode(ShardReport{ShardReport::Kind::Lost, 0, QStringLiteral("C"),
                                          QStringLiteral("the peer closed the connection")}));
    QVERIFY(lost.ok());
    QCOMPARE(std::get<ShardReport>(*lost).kind, ShardReport::Kind::Lost);
    QCOMPARE(std::get<ShardReport>(*lost).worker, QStringLiteral("C"));
    auto probed = decode(encode(ShardReport{ShardReport::Kind::Probed, 0, QStringLiteral("D"),
                                            QStringLiteral("no answer within 10 s")}));
    QVERIFY(probed.ok());
    QCOMPARE(std::get<ShardReport>(*probed).kind, ShardReport::Kind::Probed);
    QCOMPARE(std::get<ShardReport>(*probed).worker, QStringLiteral("D"));
    // A kind this build does not know is refused, not read as another.
    auto unknown = decode(encode(ShardReport{ShardReport::Kind(7), 0, {}, {}}));
    QVERIFY(!unknown.ok());
    // An update carries what the machine's links have moved so far, past 32 bits.
    auto upb = decode(encode(
        ShardReport{ShardReport::Kind::Updated, 9, {}, {}, 5'000'000'000ULL, 4'000'000'001ULL}));
    QVERIFY(upb.ok());
    QCOMPARE(std::get<ShardReport>(*upb).sent, uint64_t(5'000'000'000ULL));
    QCOMPARE(std::get<ShardReport>(*upb).received, uint64_t(4'000'000'001ULL));
    ShardClose close{7, 0.01, {{QStringLiteral("A"), 0.25}, {QStringLiteral("B"), 0.75}}};
    auto clb = decode(encode(close));
    QVERIFY(clb.ok());
    QCOMPARE(std::get<ShardClose>(*clb).step, 7);
    QCOMPARE(std::get<ShardClose>(*clb).lr, 0.01);
    QCOMPARE(std::get<ShardClose>(*clb).counted, close.counted);
    RunSpec spec;
    spec.sharded = true;
    QVERIFY(std::get<RunSpec>(*decode(encode(spec))).sharded);
    Ready ready;
    ready.shardPort = 4002;
    QCOMPARE(std::get<Ready>(*decode(encode(ready))).shardPort, quint16(4002));
    QVERIFY(!std::get<Ready>(*decode(encode(ready))).holdsOnly);
    ready.holdsOnly = true;
    QVERIFY(std::get<Ready>(*decode(encode(ready))).holdsOnly);
}

void TestWire::decodeRejectsGarbage() {
    QVERIFY(!decode(QByteArray()).ok()); // an empty envelope
    QVERIFY(!decode(QByteArray("\xff\xff\xff\xff", 4)).ok());
    Result r;
    r.samples = 5;
    r.correct = 9; // more hits than were counted
    r.counted = 5;
    QVERIFY(!decode(encode(r)).ok());
    r.correct = 0;
    r.counted = -1;
    QVERIFY(!decode(encode(r)).ok());
    // Preference figures: five of them for more pairs than none, and no more pairs than samples.
    r.counted = 5;
    r.pairs = 5;
    r.pairSums = {1, 2, 3};
    QVERIFY(!decode(encode(r)).ok());
    r.pairSums = {1, 2, 3, 4, 5};
    QVERIFY(decode(encode(r)).ok());
    r.pairs = 6;
    QVERIFY(!decode(encode(r)).ok());
    r.pairs = 0;
    QVERIFY(!decode(encode(r)).ok());
    Assign a;
    a.step = -1;
    QVERIFY(!decode(encode(a)).ok());
    // DPO's reference figures: two a sample, each a finite log-probability.
    a.step = 3;
    a.indices = {4, 9};
    a.referenceLogps = {-1, -2, -3};
    QVERIFY(!decode(encode(a)).ok());
    a.referenceLogps = {-1, -2, -3, 0.5f};
    QVERIFY(!decode(encode(a)).ok());
    a.referenceLogps = {-1, -2, -3, -std::numeric_limits<float>::infinity()};
    QVERIFY(!decode(encode(a)).ok());
    a.referenceLogps = {-1, -2, -3, -4};
    QVERIFY(decode(encode(a)).ok());
    QCOMPARE(std::get<Assign>(*decode(encode(a))).referenceLogps, a.referenceLogps);
    a.step = -1;
    // A run's token is 32 bytes; a longer one is refused before it is kept.
    QVERIFY(!decode(encode(ShardJoin{QStringLiteral("run-7"), QByteArray(65, 'x')})).ok());
    QVERIFY(!decode(encode(ShardGrads{-1, 3})).ok());
    QVERIFY(!decode(encode(ShardWeights{-1, 3})).ok());
    // A setup's ranges follow each other from 0, none empty; a close weights each worker by a
    // finite share, never a negative one.
    ShardSetup gap;
    gap.ranges = {{0, 10, QStringLiteral("A")}, {11, 25, QStringLiteral("B")}};
    QVERIFY(!decode(encode(gap)).ok());
    gap.ranges = {{0, 10, QStringLiteral("A")}, {10, 10, QStringLiteral("B")}};
    QVERIFY(!decode(encode(gap)).ok());
    gap.ranges = {{0, 10, QStringLiteral("A")}};
    gap.firstStep = -1;
    QVERIFY(!decode(encode(gap)).ok());
    QVERIFY(!decode(encode(ShardClose{1, 0.1, {{QStringLiteral("A"), -0.5}}})).ok());
    QVERIFY(!decode(encode(ShardClose{1, 0.1, {{QStringLiteral("A"), std::nan("")}}})).ok());
    QVERIFY(!decode(encode(ShardClose{1, std::nan(""), {}})).ok());
    QVERIFY(!decode(encode(ShardReport{ShardReport::Kind::Held, -2, {}, {}})).ok());
    QVERIFY(!decode(encode(ShardState{-1, 3})).ok());
    // A truncated Hello: whatever protobuf makes of it, a Hello cut inside its string field
    // cannot come back whole.
    Hello h;
    h.displayName = QStringLiteral("a name long enough to cut");
    const QByteArray good = encode(h);
    auto cut = decode(good.left(good.size() - 5));
    QVERIFY(!cut.ok() || std::get<Hello>(*cut).displayName != h.displayName);
}

void TestWire::randomStreamsNeverCrash() {
    // Random bytes through the whole receive path: frame reader, blob assembler, message
    // decoder.
    QRandomGenerator rng(1234);
    int frames = 0;
    for (int round = 0; round < 2000; ++round) {
        BlobAssembler blobs;
        blobs.setCap(uint32_t(BlobKind::Tensors), 1 << 16);
        FrameReader reader(blobs, 1 << 16);
        QByteArray junk(int(rng.bounded(512)), Qt::Uninitialized);
        for (char& c : junk)
            c = char(rng.bounded(256));
        if (round % 3 == 0) { // well-framed junk reaches the message decoder
            junk = frame(junk);
            if (round % 2 == 0)
                junk[4] = '\0';
        }
        for (const QByteArray& p : readAll(reader, junk, qsizetype(rng.bounded(64)) + 1)) {
            ++frames;
            (void)decode(p);
        }
    }
    QVERIFY(frames > 100);
}

void TestWire::readerReassemblesMessagesAndBlobs() {
    // Messages and blobs, delivered in random pieces: the reader yields the messages sent, in
    // order, and the blobs arrive whole, in the assembler, without passing through it.
    QRandomGenerator rng(99);
    QByteArray stream, blob(3 * int(kBlobPartBytes / 2) + 17, Qt::Uninitialized);
    for (char& c : blob)
        c = char(rng.bounded(256));
    QList<QByteArray> sent;
    for (qsizetype off = 0, i = 0; off < blob.size(); ++i) {
        const qsizetype n = std::min<qsizetype>(kBlobPartBytes, blob.size() - off);
        stream += blobPartFrame(uint32_t(BlobKind::Tensors), 5, uint64_t(blob.size()),
                                uint64_t(off), QByteArrayView(blob.constData() + off, n));
        off += n;
        const QByteArray m = encode(Ping{uint64_t(i)});
        sent << m;
        stream += frame(m);
    }
    BlobAssembler blobs;
    blobs.setCap(uint32_t(BlobKind::Tensors), blob.size());
    FrameReader reader(blobs);
    Trickle t{stream};
    QList<QByteArray> got;
    while (t.pos < stream.size()) {
        t.more(qsizetype(rng.bounded(200000)) + 1);
        t.piece = qsizetype(rng.bounded(70000)) + 1;
        while (auto p = reader.next([&](char* to, qint64 max) { return t.read(to, max); }))
            got << *p;
        QVERIFY(!reader.failed());
    }
    QCOMPARE(got, sent);
    QCOMPARE(blobs.take(5).value(), blob);
}

void TestWire::readerChecksABlobPartBeforeReadingIt() {
    BlobAssembler blobs;
    blobs.setCap(uint32_t(BlobKind::Tensors), 100);
    FrameReader reader(blobs);
    // A part of a blob claiming more than the cap: refused on its header, its data unread.
    const QByteArray part =
        blobPartFrame(uint32_t(BlobKind::Tensors), 1, 1000, 0, QByteArray(50, 'x'));
    Trickle t{part + frame(encode(Ping{1}))};
    t.more(t.bytes.size());
    t.piece = t.bytes.size();
    QVERIFY(!reader.next([&](char* to, qint64 max) { return t.read(to, max); }));
    QVERIFY(reader.failed());
    QVERIFY(reader.error().contains(QStringLiteral("at most 100")));
    QCOMPARE(t.pos, 4 + kBlobPartHeader);
    // An oversized frame is refused on its length alone.
    BlobAssembler none;
    FrameReader small(none, 64);
    Trickle big{frame(QByteArray(65, 'a'))};
    big.more(big.bytes.size());
    big.piece = big.bytes.size();
    QVERIFY(!small.next([&](char* to, qint64 max) { return big.read(to, max); }));
    QVERIFY(small.failed());
    QCOMPARE(big.pos, 4);
}

void TestWire::readerKeepsACutBlobIncomplete() {
    // A sender that dies in the middle of a part leaves a blob that can never be taken: no
    // partial tensors reach the caller.
    BlobAssembler blobs;
    blobs.setCap(uint32_t(BlobKind::Tensors), 100);
    FrameReader reader(blobs);
    Trickle t{blobPartFrame(uint32_t(BlobKind::Tensors), 3, 40, 0, QByteArray(40, 'y'))};
    t.more(t.bytes.size() - 1);
    t.piece = 7;
    QVERIFY(!reader.next([&](char* to, qint64 max) { return t.read(to, max); }));
    QVERIFY(!reader.failed());
    QVERIFY(!blobs.take(3));
    t.more(1);
    QVERIFY(!reader.next([&](char* to, qint64 max) { return t.read(to, max); }));
    QCOMPARE(blobs.take(3).value(), QByteArray(40, 'y'));
}

// The free space that refuses a blob larger than the disk is asked of the file system itself,
// so the refusal holds in a chroot or container whose mount table does not list the volume.
void TestWire::freeSpaceComesFromTheFileSystem() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const qint64 free = freeBytesAt(tmp.path());
    QVERIFY(free > 0);
    const QStorageInfo volume(tmp.path());
    if (volume.isValid()) // the same volume, give or take what others wrote meanwhile
        QVERIFY2(
            qAbs(free - volume.bytesAvailable()) < (qint64(64) << 20),
            qPrintable(QStringLiteral("%1 against %2").arg(free).arg(volume.bytesAvailable())));
    QCOMPARE(freeBytesAt(tmp.filePath(QStringLiteral("no-such-folder"))), qint64(-1));
}

QTEST_GUILESS_MAIN(TestWire)
#include "test_wire.moc"
