// The run checkpoint container and safetensors: round trips, and refusal of every truncation
// and of flipped bits.

#include "formats/tensorfile.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <QtEndian>
#include <algorithm>

using namespace tandem;

namespace {

TensorRecord record(const QString& name, DType dt, std::vector<int64_t> shape, char fill) {
    TensorRecord r;
    r.name = name;
    r.dtype = dt;
    r.shape = std::move(shape);
    r.data = QByteArray(qsizetype(r.numel() * dtypeSize(dt)), fill);
    for (qsizetype i = 0; i < r.data.size(); ++i)
        r.data[i] = char(fill + i);
    return r;
}

TensorFile sample() {
    TensorFile f;
    f.meta =
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("test")}, {QStringLiteral("step"), 42}};
    f.tensors << record(QStringLiteral("param/fc1.weight"), DType::F32, {3, 4}, 1)
              << record(QStringLiteral("buffer/bn.num_batches_tracked"), DType::I64, {}, 9)
              << record(QStringLiteral("empty"), DType::F16, {0, 5}, 0);
    f.blobs.insert(QStringLiteral("archive"), QByteArray("PK\3\4 some bytes"));
    return f;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestTensorFile : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void checkpointRoundTrip();
    void checkpointRejectsEveryTruncation();
    void checkpointRejectsBitFlips();
    void checkpointRejectsOtherVersionsAndFiles();
    void checkpointRejectsLyingDirectory();
    void checkpointWrittenInPlaceIsTheFile();
    void checkpointReadInPlaceSharesItsBytes();
    void checkpointOpenedReadsEachTensorWhenAsked();
    void safetensorsLayout();
    void safetensorsRejectsMalformed_data();
    void safetensorsRejectsMalformed();

private:
    QTemporaryDir m_tmp;
};

void TestTensorFile::checkpointRoundTrip() {
    const QString path = m_tmp.filePath(QStringLiteral("a.tandem"));
    const TensorFile f = sample();
    QVERIFY(writeCheckpoint(path, f).ok());
    auto r = readCheckpoint(path);
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->meta, f.meta);
    QCOMPARE(r->tensors.size(), 3);
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(r->tensors[i].name, f.tensors[i].name);
        QCOMPARE(r->tensors[i].dtype, f.tensors[i].dtype);
        QCOMPARE(r->tensors[i].shape, f.tensors[i].shape);
        QCOMPARE(r->tensors[i].data, f.tensors[i].data);
    }
    QCOMPARE(r->blobs, f.blobs);
    QVERIFY(readAll(path).startsWith("TANDEMCK"));
}

void TestTensorFile::checkpointRejectsEveryTruncation() {
    const QString path = m_tmp.filePath(QStringLiteral("t.tandem"));
    QVERIFY(writeCheckpoint(path, sample()).ok());
    const QByteArray bytes = readAll(path);
    for (qsizetype n = 0; n < bytes.size(); ++n) {
        auto r = parseCheckpoint(bytes.left(n), QStringLiteral("t.tandem"));
        QVERIFY2(!r.ok(), qPrintable(QStringLiteral("accepted a file cut to %1 bytes").arg(n)));
        QVERIFY(r.error().code == ErrorCode::Corrupt || r.error().code == ErrorCode::Incompatible);
    }
}

void TestTensorFile::checkpointRejectsBitFlips() {
    const QString path = m_tmp.filePath(QStringLiteral("b.tandem"));
    QVERIFY(writeCheckpoint(path, sample()).ok());
    const QByteArray bytes = readAll(path);
    for (qsizetype i = 0; i < bytes.size(); ++i) {
        for (int bit : {0, 7}) {
            QByteArray b = bytes;
            b[i] = char(b[i] ^ (1 << bit));
            auto r = parseCheckpoint(b, QStringLiteral("b.tandem"));
            QVERIFY2(
                !r.ok(),
                qPrintable(QStringLiteral("accepted a flip of bit %1 at byte %2").arg(bit).arg(i)));
        }
    }
    auto r =
        parseCheckpoint(bytes.left(bytes.size() - 1) + char(bytes.back() ^ 1), QStringLiteral("b"));
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("checksum")), qPrintable(r.error().message));
}

void TestTensorFile::checkpointRejectsOtherVersionsAndFiles() {
    const QString path = m_tmp.filePath(QStringLiteral("v.tandem"));
    QVERIFY(writeCheckpoint(path, sample()).ok());
    QByteArray b = readAll(path);
    qToLittleEndian<quint32>(7, b.data() + 8);
    auto r = parseCheckpoint(b, QStringLiteral("v.tandem"));
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Incompatible);
    QVERIFY2(r.error().message.contains(QStringLiteral("version 7")),
             qPrintable(r.error().message));

    auto pickle = parseCheckpoint(QByteArray("\x80\x02}q\0.", 6) + QByteArray(100, 'x'),
                                  QStringLiteral("p.pt"));
    QVERIFY(!pickle.ok());
    QVERIFY(pickle.error().message.contains(QStringLiteral("not a Tandem checkpoint")));
    auto missing = readCheckpoint(m_tmp.filePath(QStringLiteral("nope")));
    QVERIFY(!missing.ok());
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
}

void TestTensorFile::checkpointRejectsLyingDirectory() {
    // A well-formed file (digest and all) whose directory points outside the data, or whose
    // shape disagrees with the byte count, is refused: the digest proves integrity, not sense.
    auto build = [](const QJsonObject& entry, const QJsonObject& second = {}) {
        QJsonArray entries{entry};
        if (!second.isEmpty())
            entries.append(second);
        const QByteArray header =
            QJsonDocument(QJsonObject{{QStringLiteral("meta"), QJsonObject{}},
                                      {QStringLiteral("tensors"), entries},
                                      {QStringLiteral("blobs"), QJsonArray{}}})
                .toJson(QJsonDocument::Compact);
        QByteArray b("TANDEMCK");
        char v[4], n[8];
        qToLittleEndian<quint32>(kCheckpointVersion, v);
        qToLittleEndian<quint64>(quint64(header.size()), n);
        b.append(v, 4).append(n, 8).append(header).append(QByteArray(16, '\0'));
        return b + QCryptographicHash::hash(b, QCryptographicHash::Sha256);
    };
    auto entry = [](QJsonArray shape, qint64 off, qint64 len, const QString& dt,
                    const QString& name = QStringLiteral("w")) {
        return QJsonObject{{QStringLiteral("name"), name},
                           {QStringLiteral("dtype"), dt},
                           {QStringLiteral("shape"), shape},
                           {QStringLiteral("offset"), off},
                           {QStringLiteral("nbytes"), len}};
    };
    QVERIFY(
        parseCheckpoint(build(entry({4}, 0, 16, QStringLiteral("F32"))), QStringLiteral("x")).ok());
    QVERIFY(!parseCheckpoint(build(entry({4}, 8, 16, QStringLiteral("F32"))), QStringLiteral("x"))
                 .ok());
    QVERIFY(!parseCheckpoint(build(entry({5}, 0, 16, QStringLiteral("F32"))), QStringLiteral("x"))
                 .ok());
    QVERIFY(
        !parseCheckpoint(build(entry({4}, 0, 16, QStringLiteral("Q8"))), QStringLiteral("x")).ok());
    QVERIFY(!parseCheckpoint(build(entry({-4}, 0, 16, QStringLiteral("F32"))), QStringLiteral("x"))
                 .ok());
    QVERIFY(!parseCheckpoint(build(entry({4294967296.0, 4294967296.0, 4294967296.0}, 0, 16,
                                         QStringLiteral("F32"))),
                             QStringLiteral("x"))
                 .ok());
    QVERIFY(!parseCheckpoint(build(entry({4}, -1, 16, QStringLiteral("F32"))), QStringLiteral("x"))
                 .ok());
    // Two tensors over the same bytes: one weight would train through the other.
    const QJsonObject low = entry({2}, 0, 8, QStringLiteral("F32"));
    QVERIFY(
        parseCheckpoint(build(low, entry({2}, 8, 8, QStringLiteral("F32"), QStringLiteral("v"))),
                        QStringLiteral("x"))
            .ok());
    auto shared =
        parseCheckpoint(build(low, entry({2}, 4, 8, QStringLiteral("F32"), QStringLiteral("v"))),
                        QStringLiteral("x"));
    QVERIFY(!shared.ok());
    QVERIFY2(shared.error().message.contains(QStringLiteral("shares bytes")),
             qPrintable(shared.error().message));
}

void TestTensorFile::checkpointReadInPlaceSharesItsBytes() {
    // A range's state read where its bytes lie: the same tensors as a copying read, each one's
    // data inside the container's own bytes, and a damaged container refused all the same.
    const QString path = m_tmp.filePath(QStringLiteral("shared.tandem"));
    QVERIFY(writeCheckpoint(path, sample()).ok());
    const QByteArray bytes = readAll(path);
    const auto copied = parseCheckpoint(bytes, QStringLiteral("shared.tandem"));
    const auto shared = parseCheckpointInPlace(bytes, QStringLiteral("shared.tandem"));
    QVERIFY(copied.ok() && shared.ok());
    QCOMPARE(shared->meta, copied->meta);
    QCOMPARE(shared->blobs, copied->blobs);
    QCOMPARE(shared->tensors.size(), copied->tensors.size());
    const auto inside = [&bytes](const QByteArray& b) {
        return b.constData() >= bytes.constData() &&
               b.constData() + b.size() <= bytes.constData() + bytes.size();
    };
    for (qsizetype i = 0; i < shared->tensors.size(); ++i) {
        const TensorRecord &s = shared->tensors[i], &c = copied->tensors[i];
        QCOMPARE(s.name, c.name);
        QCOMPARE(s.dtype, c.dtype);
        QCOMPARE(s.shape, c.shape);
        QCOMPARE(s.data, c.data);
        if (!c.data.isEmpty()) {
            QVERIFY2(inside(s.data), qPrintable(s.name));
            QVERIFY2(!inside(c.data), qPrintable(c.name));
        }
    }
    QByteArray damaged = bytes;
    damaged[damaged.size() / 2] = char(damaged[damaged.size() / 2] ^ 1);
    QVERIFY(!parseCheckpointInPlace(damaged, QStringLiteral("shared.tandem")).ok());
    QVERIFY(!parseCheckpointInPlace(bytes.left(bytes.size() - 1), QStringLiteral("cut")).ok());
}

// openCheckpoint holds none of the file: the same verdicts as parseCheckpoint on every cut and
// every flipped bit, and each tensor read from the file when it is asked for, from the file as
// it was checked even once another is renamed over it.
void TestTensorFile::checkpointOpenedReadsEachTensorWhenAsked() {
    const QString path = m_tmp.filePath(QStringLiteral("o.tandem"));
    const TensorFile f = sample();
    QVERIFY(writeCheckpoint(path, f).ok());
    auto r = openCheckpoint(path);
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->meta, f.meta);
    QCOMPARE(r->blobs, f.blobs);
    QVERIFY(r->tensors.isEmpty());
    QCOMPARE(r->lazy.size(), f.tensors.size());
    // Replaced as a run replaces its checkpoint: what was opened is still what is read.
    TensorFile other = sample();
    other.tensors[0].data.fill('z');
    QVERIFY(writeCheckpoint(path, other).ok());
    for (int i = f.tensors.size() - 1; i >= 0; --i) {
        QCOMPARE(r->lazy[i].name, f.tensors[i].name);
        QCOMPARE(r->lazy[i].dtype, f.tensors[i].dtype);
        QCOMPARE(r->lazy[i].shape, f.tensors[i].shape);
        QCOMPARE(r->lazy[i].bytes(), f.tensors[i].data);
        // A part alone, from anywhere in it (a sharded run's range); none beyond its end.
        const QByteArray& data = f.tensors[i].data;
        for (qint64 at = 0; at <= data.size(); ++at)
            QCOMPARE(r->lazy[i].part(at, data.size() - at), data.mid(at));
        QVERIFY(r->lazy[i].part(1, data.size()).isEmpty());
        QVERIFY(r->lazy[i].part(-1, 1).isEmpty());
    }
    QCOMPARE(openCheckpoint(path)->lazy[0].bytes(), other.tensors[0].data);

    const QByteArray bytes = readAll(path);
    const QString cut = m_tmp.filePath(QStringLiteral("cut.tandem"));
    auto put = [&](const QByteArray& b) {
        QFile out(cut);
        return out.open(QIODevice::WriteOnly | QIODevice::Truncate) && out.write(b) == b.size();
    };
    for (qsizetype n = 0; n < bytes.size(); n += 7) {
        QVERIFY(put(bytes.left(n)));
        auto t = openCheckpoint(cut);
        QVERIFY2(!t.ok(), qPrintable(QStringLiteral("accepted a file cut to %1 bytes").arg(n)));
        QVERIFY(t.error().code == ErrorCode::Corrupt || t.error().code == ErrorCode::Incompatible);
    }
    for (qsizetype i = 0; i < bytes.size(); i += 3) {
        QByteArray b = bytes;
        b[i] = char(b[i] ^ 0x10);
        QVERIFY(put(b));
        QVERIFY2(!openCheckpoint(cut).ok(),
                 qPrintable(QStringLiteral("accepted a flipped bit at byte %1").arg(i)));
    }
    auto missing = openCheckpoint(m_tmp.filePath(QStringLiteral("nope")));
    QVERIFY(!missing.ok());
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
}

void TestTensorFile::checkpointWrittenInPlaceIsTheFile() {
    // A container written into one buffer of its size, or through a sink a part at a time (a
    // range's state on its way to its coordinator): the same bytes as the file, lazy tensors
    // among them, the parts in order up to the whole.
    TensorFile f = sample();
    const TensorRecord big = record(QStringLiteral("big"), DType::F32, {5, 1 << 20}, 3); // 20 MB
    f.tensors << big;
    const QString path = m_tmp.filePath(QStringLiteral("in-place.tandem"));
    QVERIFY(writeCheckpoint(path, f).ok());
    const QByteArray file = readAll(path);

    TensorFile lazy = sample();
    lazy.lazy << LazyTensor{big.name, big.dtype, big.shape, [&big] { return big.data; }};
    auto size = checkpointSize(lazy);
    QVERIFY(size.ok());
    QCOMPARE(*size, file.size());
    QByteArray out(qsizetype(*size), Qt::Uninitialized);
    QVERIFY(writeCheckpointInto(lazy, out.data(), *size).ok());
    QCOMPARE(out, file);
    QCOMPARE(serializeCheckpoint(lazy).value(), file);
    // Through a sink, in parts, each part's end said in order up to the whole.
    QList<qint64> said;
    QByteArray through;
    QVERIFY(writeCheckpointThrough(lazy, *size, [&](const char* p, qint64 n) {
                through.append(p, qsizetype(n));
                said << qint64(through.size());
                return true;
            }).ok());
    QCOMPARE(through, file);
    QVERIFY2(said.size() >= 4, qPrintable(QString::number(said.size()))); // 20 MB in parts
    QCOMPARE(said.last(), *size);
    for (qsizetype i = 1; i < said.size(); ++i)
        QVERIFY(said[i] > said[i - 1] && said[i] - said[i - 1] <= (8 << 20));

    // A sink that stops the writing stops it, saying where.
    const Status stopped =
        writeCheckpointThrough(lazy, *size, [](const char*, qint64) { return false; });
    QVERIFY(!stopped.ok() && stopped.error().code == ErrorCode::Io);
    QVERIFY2(stopped.error().message.contains(QLatin1String("stopped after 0 of")),
             qPrintable(stopped.error().message));
    // A buffer of another size, or a lazy tensor whose bytes are not its shape's, is refused.
    QVERIFY(!writeCheckpointInto(lazy, out.data(), *size - 1).ok());
    lazy.lazy.last().bytes = [] { return QByteArray(12, '\0'); };
    auto wrong = writeCheckpointInto(lazy, out.data(), *size);
    QVERIFY(!wrong.ok());
    QVERIFY2(wrong.error().message.contains(QLatin1String("big")),
             qPrintable(wrong.error().message));

    // A tensor that can be read a part at a time is written so, never asked for whole: the same
    // file, in reads of 32 MB at most. One read short fails the write, naming the tensor.
    const TensorRecord large = record(QStringLiteral("large"), DType::F32, {10, 1 << 20}, 5);
    TensorFile whole = sample();
    whole.tensors << large;
    TensorFile parts = sample();
    QList<qint64> reads;
    parts.lazy << LazyTensor{large.name, large.dtype, large.shape, [] { return QByteArray(); },
                             [&](qint64 at, qint64 n) {
                                 reads << n;
                                 return large.data.mid(at, n);
                             }};
    const QString wholePath = m_tmp.filePath(QStringLiteral("whole.tandem"));
    const QString partsPath = m_tmp.filePath(QStringLiteral("parts.tandem"));
    QVERIFY(writeCheckpoint(wholePath, whole).ok());
    QVERIFY(writeCheckpoint(partsPath, parts).ok());
    QCOMPARE(readAll(partsPath), readAll(wholePath));
    QVERIFY2(reads.size() >= 2 && *std::max_element(reads.begin(), reads.end()) <= (32 << 20),
             qPrintable(QString::number(reads.size())));
    parts.lazy.last().part = [](qint64, qint64 n) { return QByteArray(qsizetype(n - 1), '\0'); };
    const QString shortPath = m_tmp.filePath(QStringLiteral("short.tandem"));
    const Status cut = writeCheckpoint(shortPath, parts);
    QVERIFY(!cut.ok() && cut.error().message.contains(QLatin1String("large")));
    QVERIFY(!QFile::exists(shortPath));
}

void TestTensorFile::safetensorsLayout() {
    const QString path = m_tmp.filePath(QStringLiteral("m.safetensors"));
    QList<TensorRecord> ts{record(QStringLiteral("fc.weight"), DType::F32, {2, 3}, 3),
                           record(QStringLiteral("fc.bias"), DType::F32, {2}, 5),
                           record(QStringLiteral("bn.num_batches_tracked"), DType::I64, {}, 1)};
    QVERIFY(writeSafetensors(path, ts, {{QStringLiteral("format"), QStringLiteral("pt")}}).ok());
    const QByteArray b = readAll(path);
    const quint64 n = qFromLittleEndian<quint64>(b.constData());
    QCOMPARE(n % 8, 0u); // data starts aligned
    const QJsonObject h = QJsonDocument::fromJson(b.mid(8, qsizetype(n))).object();
    QCOMPARE(h.value(QStringLiteral("__metadata__"))
                 .toObject()
                 .value(QStringLiteral("format"))
                 .toString(),
             QStringLiteral("pt"));
    const QJsonObject w = h.value(QStringLiteral("fc.weight")).toObject();
    QCOMPARE(w.value(QStringLiteral("dtype")).toString(), QStringLiteral("F32"));
    QCOMPARE(w.value(QStringLiteral("shape")).toArray(), (QJsonArray{2, 3}));
    QCOMPARE(w.value(QStringLiteral("data_offsets")).toArray(), (QJsonArray{0, 24}));
    QCOMPARE(qsizetype(8 + n + 24 + 8 + 8), b.size());
    auto back = parseSafetensors(b, path);
    QVERIFY(back.ok());
    QCOMPARE(back->size(), 3);
    for (const TensorRecord& t : *back)
        for (const TensorRecord& o : ts)
            if (o.name == t.name) {
                QCOMPARE(t.data, o.data);
                QCOMPARE(t.shape, o.shape);
            }
}

void TestTensorFile::safetensorsRejectsMalformed_data() {
    QTest::addColumn<QByteArray>("bytes");
    auto make = [](const QByteArray& json, int dataBytes) {
        char n[8];
        qToLittleEndian<quint64>(quint64(json.size()), n);
        return QByteArray(n, 8) + json + QByteArray(dataBytes, '\0');
    };
    QTest::newRow("short") << QByteArray("abc");
    QTest::newRow("header past end") << QByteArray("\xff\0\0\0\0\0\0\0{}", 10);
    QTest::newRow("not json") << make("{nope", 0);
    QTest::newRow("offsets past end")
        << make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4);
    QTest::newRow("reversed offsets")
        << make(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 8);
    QTest::newRow("shape mismatch")
        << make(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
    QTest::newRow("unknown dtype")
        << make(R"({"a":{"dtype":"F8","shape":[8],"data_offsets":[0,8]}})", 8);
    QTest::newRow("overlapping tensors")
        << make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                12);
}

void TestTensorFile::safetensorsRejectsMalformed() {
    QFETCH(QByteArray, bytes);
    auto r = parseSafetensors(bytes, QStringLiteral("x.safetensors"));
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Corrupt);
}

QTEST_GUILESS_MAIN(TestTensorFile)
#include "test_tensorfile.moc"
