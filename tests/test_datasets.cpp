// Every dataset reader, on good files and on each way a file can be wrong.

#include "common/files.h"
#include "formats/dataset.h"
#include "formats/gzip.h"
#include "testutil.h"

#include <QElapsedTimer>
#include <QTemporaryDir>

#include <QTest>
#include <sys/stat.h>

using namespace tandem;
using namespace testutil;

class TestDatasets : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void idxPlainAndGzipReadTheSame();
    void idxParseErrors_data();
    void idxParseErrors();
    void idxDatasetRejectsLabelOutOfRange();
    void idxDatasetRejectsCountMismatch();
    void idxDatasetRejectsCorruptGzip();
    void idxDatasetNamesMissingFile();
    void builtinFashionMnist();
    void limitKeepsHash();
    void cifar10ReadsChw();
    void cifar10Errors();
    void csvNumericLabelsAndHoldOut();
    void csvNamedLabelByHeader();
    void csvLabelByIndexAndTestFile();
    void csvErrors_data();
    void csvErrors();
    void csvTestFileWithUnknownClass();
    void specErrors_data();
    void specErrors();
    void gunzipCapsOutput();
    void gunzipRefusesTrailingGarbage();
    void gunzipReadsEveryMember();
    void idxGzipBombStopsAtTheDeclaredSize();
    void csvLabelHeaderInFirstColumn();
    void onlyRegularFilesAreRead();
    void readsAreCappedByBytesRead();

private:
    QTemporaryDir m_tmp;
};

void TestDatasets::idxPlainAndGzipReadTheSame() {
    const QString a = m_tmp.filePath(QStringLiteral("plain")),
                  b = m_tmp.filePath(QStringLiteral("gz"));
    writeIdxDataset(a, 30, 10, false);
    writeIdxDataset(b, 30, 10, true);
    auto da = loadDataset(QStringLiteral("mnist:") + a);
    auto db = loadDataset(QStringLiteral("fashion-mnist:") + b);
    QVERIFY2(da.ok(), qPrintable(da.ok() ? QString() : da.error().message));
    QVERIFY2(db.ok(), qPrintable(db.ok() ? QString() : db.error().message));
    QCOMPARE(da->train.count(), 30);
    QCOMPARE(da->test.count(), 10);
    QCOMPARE(da->train.sampleShape, (std::vector<int64_t>{1, 28, 28}));
    QCOMPARE(da->numClasses, 10);
    QCOMPARE(da->train.u8, db->train.u8);
    QCOMPARE(da->train.labels, db->train.labels);
    QCOMPARE(da->train.labels[13], 3);
    // The hash identifies content, not the file encoding.
    QCOMPARE(da->contentHash, db->contentHash);
    QCOMPARE(da->contentHash.size(), 64);
}

void TestDatasets::idxParseErrors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("needle");
    QTest::addColumn<int>("code");
    const QByteArray good = idxBytes({2, 2, 2}, QByteArray(8, '\1'));
    QTest::newRow("empty") << QByteArray() << QStringLiteral("too short")
                           << int(ErrorCode::Corrupt);
    QTest::newRow("bad magic") << (QByteArray("\1\0", 2) + good.mid(2))
                               << QStringLiteral("bad magic") << int(ErrorCode::Corrupt);
    QByteArray floatType = good;
    floatType[2] = '\x0d';
    QTest::newRow("float payload")
        << floatType << QStringLiteral("not supported") << int(ErrorCode::Unsupported);
    QByteArray manyDims = good;
    manyDims[3] = 9;
    QTest::newRow("too many dims")
        << manyDims << QStringLiteral("dimensions") << int(ErrorCode::Corrupt);
    QTest::newRow("short header") << good.left(9) << QStringLiteral("truncated IDX header")
                                  << int(ErrorCode::Corrupt);
    QTest::newRow("truncated data")
        << good.left(good.size() - 1) << QStringLiteral("truncated") << int(ErrorCode::Corrupt);
    QTest::newRow("trailing bytes")
        << (good + "x") << QStringLiteral("unexpected bytes") << int(ErrorCode::Corrupt);
    QTest::newRow("zero dim") << idxBytes({0, 2, 2}, {}) << QStringLiteral("has size 0")
                              << int(ErrorCode::Corrupt);
    QTest::newRow("huge dims") << idxBytes({0x7fffffff, 60000, 60000}, QByteArray(16, '\0'))
                               << QStringLiteral("claims more data") << int(ErrorCode::Corrupt);
}

void TestDatasets::idxParseErrors() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, needle);
    QFETCH(int, code);
    auto r = parseIdx(bytes, QStringLiteral("file.idx"));
    QVERIFY(!r.ok());
    QCOMPARE(int(r.error().code), code);
    QVERIFY2(r.error().message.contains(needle), qPrintable(r.error().message));
    QVERIFY(r.error().message.startsWith(QStringLiteral("file.idx")));
}

void TestDatasets::idxDatasetRejectsLabelOutOfRange() {
    const QString dir = m_tmp.filePath(QStringLiteral("badlabel"));
    writeIdxDataset(dir, 20, 5, false);
    QByteArray lbl(5, '\2');
    lbl[3] = char(12);
    writeFile(QDir(dir).filePath(QStringLiteral("t10k-labels-idx1-ubyte")), idxBytes({5}, lbl));
    auto r = loadDataset(QStringLiteral("mnist:") + dir);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Corrupt);
    QVERIFY2(r.error().message.contains(QStringLiteral("t10k-labels-idx1-ubyte")),
             qPrintable(r.error().message));
    QVERIFY2(r.error().message.contains(QStringLiteral("label 12 of sample 3")),
             qPrintable(r.error().message));
}

void TestDatasets::idxDatasetRejectsCountMismatch() {
    const QString dir = m_tmp.filePath(QStringLiteral("mismatch"));
    writeIdxDataset(dir, 20, 5, false);
    writeFile(QDir(dir).filePath(QStringLiteral("train-labels-idx1-ubyte")),
              idxBytes({19}, QByteArray(19, '\1')));
    auto r = loadDataset(QStringLiteral("mnist:") + dir);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("holds 19 labels")),
             qPrintable(r.error().message));
}

void TestDatasets::idxDatasetRejectsCorruptGzip() {
    const QString dir = m_tmp.filePath(QStringLiteral("badgz"));
    writeIdxDataset(dir, 20, 5, true);
    const QString path = QDir(dir).filePath(QStringLiteral("train-images-idx3-ubyte.gz"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QByteArray b = f.readAll();
    f.close();
    writeFile(path, b.left(b.size() / 2)); // truncated mid-stream
    auto r = loadDataset(QStringLiteral("fashion-mnist:") + dir);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Corrupt);
    QVERIFY2(r.error().message.contains(path), qPrintable(r.error().message));
    QVERIFY2(r.error().message.contains(QStringLiteral("gzip")), qPrintable(r.error().message));

    // A flipped byte inside the deflate stream fails zlib's checks.
    writeIdxDataset(dir, 20, 5, true);
    QVERIFY(f.open(QIODevice::ReadOnly));
    b = f.readAll();
    f.close();
    b[b.size() - 6] = char(b[b.size() - 6] ^ 0x5a);
    writeFile(path, b);
    r = loadDataset(QStringLiteral("fashion-mnist:") + dir);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Corrupt);
}

void TestDatasets::idxDatasetNamesMissingFile() {
    const QString dir = m_tmp.filePath(QStringLiteral("missing"));
    writeIdxDataset(dir, 20, 5, false);
    QFile::remove(QDir(dir).filePath(QStringLiteral("t10k-images-idx3-ubyte")));
    auto r = loadDataset(QStringLiteral("mnist:") + dir);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::NotFound);
    QVERIFY2(r.error().message.contains(QStringLiteral("t10k-images")),
             qPrintable(r.error().message));
    auto none = loadDataset(QStringLiteral("mnist:/nonexistent/folder"));
    QVERIFY(!none.ok());
    QCOMPARE(none.error().code, ErrorCode::NotFound);
}

void TestDatasets::builtinFashionMnist() {
    if (!QFileInfo::exists(defaultFashionMnistDir()))
        QSKIP("Debian's dataset-fashion-mnist is not installed");
    auto r = loadDataset(QStringLiteral("fashion-mnist"));
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->train.count(), 60000);
    QCOMPARE(r->test.count(), 10000);
    QCOMPARE(r->classNames.size(), 10);
    QCOMPARE(r->classNames[9], QStringLiteral("Ankle boot"));
    // Every class occurs 6000 times in the training split.
    std::vector<int> counts(10, 0);
    for (int64_t l : r->train.labels)
        ++counts[size_t(l)];
    for (int c : counts)
        QCOMPARE(c, 6000);
}

void TestDatasets::limitKeepsHash() {
    const QString dir = m_tmp.filePath(QStringLiteral("limit"));
    writeIdxDataset(dir, 40, 10, false);
    auto r = loadDataset(QStringLiteral("mnist:") + dir);
    QVERIFY(r.ok());
    const QByteArray hash = r->contentHash;
    r->limitTrain(7);
    r->limitTest(3);
    QCOMPARE(r->train.count(), 7);
    QCOMPARE(int64_t(r->train.u8.size()), 7 * 784);
    QCOMPARE(r->test.count(), 3);
    QCOMPARE(r->contentHash, hash);
}

namespace {
QByteArray cifarRecords(int n, int firstLabel) {
    QByteArray b;
    for (int i = 0; i < n; ++i) {
        b.append(char((firstLabel + i) % 10));
        for (int c = 0; c < 3; ++c)
            b.append(QByteArray(1024, char(c * 100 + i)));
    }
    return b;
}
} // namespace

void TestDatasets::cifar10ReadsChw() {
    const QString dir = m_tmp.filePath(QStringLiteral("cifar"));
    QDir().mkpath(dir);
    writeFile(QDir(dir).filePath(QStringLiteral("data_batch_1.bin")), cifarRecords(4, 0));
    writeFile(QDir(dir).filePath(QStringLiteral("data_batch_2.bin")), cifarRecords(3, 4));
    writeFile(QDir(dir).filePath(QStringLiteral("test_batch.bin")), cifarRecords(2, 7));
    auto r = loadDataset(QStringLiteral("cifar10:") + dir);
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->train.count(), 7);
    QCOMPARE(r->test.count(), 2);
    QCOMPARE(r->train.sampleShape, (std::vector<int64_t>{3, 32, 32}));
    QCOMPARE(r->train.labels[5], 5);
    // Sample 1: red plane all 1, green 101, blue 201.
    const size_t base = 3072;
    QCOMPARE(int(r->train.u8[base]), 1);
    QCOMPARE(int(r->train.u8[base + 1024]), 101);
    QCOMPARE(int(r->train.u8[base + 2048 + 1023]), 201);
    QCOMPARE(r->classNames[0], QStringLiteral("airplane"));
}

void TestDatasets::cifar10Errors() {
    const QString dir = m_tmp.filePath(QStringLiteral("cifarbad"));
    QDir().mkpath(dir);
    writeFile(QDir(dir).filePath(QStringLiteral("data_batch_1.bin")),
              cifarRecords(2, 0).chopped(5));
    writeFile(QDir(dir).filePath(QStringLiteral("test_batch.bin")), cifarRecords(2, 0));
    auto r = loadDataset(QStringLiteral("cifar10:") + dir);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("data_batch_1.bin")),
             qPrintable(r.error().message));
    QVERIFY2(r.error().message.contains(QStringLiteral("truncated")),
             qPrintable(r.error().message));

    QByteArray bad = cifarRecords(2, 0);
    bad[3073] = char(10);
    writeFile(QDir(dir).filePath(QStringLiteral("data_batch_1.bin")), bad);
    r = loadDataset(QStringLiteral("cifar10:") + dir);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("record 1 has label 10")),
             qPrintable(r.error().message));

    QFile::remove(QDir(dir).filePath(QStringLiteral("test_batch.bin")));
    writeFile(QDir(dir).filePath(QStringLiteral("data_batch_1.bin")), cifarRecords(2, 0));
    r = loadDataset(QStringLiteral("cifar10:") + dir);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::NotFound);
    QVERIFY2(r.error().message.contains(QStringLiteral("test_batch.bin")),
             qPrintable(r.error().message));
}

void TestDatasets::csvNumericLabelsAndHoldOut() {
    const QString path = m_tmp.filePath(QStringLiteral("num.csv"));
    QByteArray text;
    for (int i = 0; i < 10; ++i)
        text += QByteArray::number(i) + ", " + QByteArray::number(i * 0.5) + "," +
                QByteArray::number(i % 3) + "\r\n";
    writeFile(path, text + "\n");
    auto r = loadDataset(QStringLiteral("csv:") + path);
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->numClasses, 3);
    QCOMPARE(r->train.sampleShape, (std::vector<int64_t>{2}));
    QCOMPARE(r->train.count(), 8); // rows 4 and 9 are held out
    QCOMPARE(r->test.count(), 2);
    QCOMPARE(r->test.f32[0], 4.0f);
    QCOMPARE(r->test.f32[1], 2.0f);
    QCOMPARE(r->test.labels[1], 0); // row 9: 9 % 3
    QCOMPARE(r->train.storage, Dataset::Storage::F32);
}

void TestDatasets::csvNamedLabelByHeader() {
    QByteArray text = "species,petal_length,petal_width\n";
    const char* names[] = {"setosa", "versicolor", "virginica"};
    for (int i = 0; i < 15; ++i)
        text += QByteArray(names[i % 3]) + "," + QByteArray::number(1 + i) + ",0.5\n";
    auto t = parseCsv(text, QStringLiteral("species"), QStringLiteral("iris.csv"));
    QVERIFY2(t.ok(), qPrintable(t.ok() ? QString() : t.error().message));
    QCOMPARE(t->classNames, (QStringList{QStringLiteral("setosa"), QStringLiteral("versicolor"),
                                         QStringLiteral("virginica")}));
    QCOMPARE(t->data.count(), 15);
    QCOMPARE(t->data.labels[4], 1);
    QCOMPARE(t->data.f32[2], 2.0f); // second row's first feature
    auto missing = parseCsv(text, QStringLiteral("genus"), QStringLiteral("iris.csv"));
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error().message.contains(QStringLiteral("no column named \"genus\"")),
             qPrintable(missing.error().message));
    QVERIFY(missing.error().message.contains(QStringLiteral("species, petal_length")));
}

void TestDatasets::csvLabelByIndexAndTestFile() {
    const QString train = m_tmp.filePath(QStringLiteral("t.csv")),
                  test = m_tmp.filePath(QStringLiteral("v.csv"));
    writeFile(train, "cat,1,2\ndog,3,4\ncat,5,6\n\"dog\",7,8\n");
    writeFile(test, "dog,9,9\n");
    auto r = loadDataset(QStringLiteral("csv:%1,label=0,test=%2").arg(train, test));
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(r->train.count(), 4);
    QCOMPARE(r->test.count(), 1);
    QCOMPARE(r->test.labels[0], 1);
    QCOMPARE(r->classNames, (QStringList{QStringLiteral("cat"), QStringLiteral("dog")}));
}

void TestDatasets::csvErrors_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("label");
    QTest::addColumn<QString>("needle");
    QTest::newRow("empty") << QByteArray("\n\n") << QString() << QStringLiteral("no rows");
    QTest::newRow("one column") << QByteArray("1\n2\n") << QString()
                                << QStringLiteral("at least one feature");
    QTest::newRow("ragged") << QByteArray("1,2,0\n3,1\n") << QString()
                            << QStringLiteral("line 2 has 2 fields");
    QTest::newRow("not a number") << QByteArray("a,b,c\n1,2,0\n1,x,1\n") << QString()
                                  << QStringLiteral("line 3, column 2: \"x\" is not a number");
    QTest::newRow("infinite") << QByteArray("1,2,0\n1,inf,0\n") << QString()
                              << QStringLiteral("is not a number");
    QTest::newRow("quote") << QByteArray("1,\"2,0\n") << QString()
                           << QStringLiteral("unterminated quote");
    QTest::newRow("header only") << QByteArray("a,b\n") << QString()
                                 << QStringLiteral("no data rows");
    QTest::newRow("index range") << QByteArray("1,2,0\n") << QStringLiteral("7")
                                 << QStringLiteral("outside 0..2");
    QTest::newRow("no header name")
        << QByteArray("1,2,0\n") << QStringLiteral("kind") << QStringLiteral("has no header row");
    QTest::newRow("huge label") << QByteArray("1,2,1000000\n") << QString()
                                << QStringLiteral("too large");
}

void TestDatasets::csvErrors() {
    QFETCH(QByteArray, text);
    QFETCH(QString, label);
    QFETCH(QString, needle);
    auto r = parseCsv(text, label, QStringLiteral("data.csv"));
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(needle), qPrintable(r.error().message));
    QVERIFY(r.error().message.startsWith(QStringLiteral("data.csv")));
}

void TestDatasets::csvTestFileWithUnknownClass() {
    const QString train = m_tmp.filePath(QStringLiteral("a.csv")),
                  test = m_tmp.filePath(QStringLiteral("b.csv"));
    writeFile(train, "1,2,cat\n3,4,dog\n");
    writeFile(test, "1,1,bird\n");
    auto r = loadDataset(QStringLiteral("csv:%1,test=%2").arg(train, test));
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.contains(QStringLiteral("\"bird\" does not occur")),
             qPrintable(r.error().message));
    writeFile(test, "1,2,3,dog\n");
    r = loadDataset(QStringLiteral("csv:%1,test=%2").arg(train, test));
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Incompatible);
}

void TestDatasets::specErrors_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<int>("code");
    QTest::newRow("unknown") << QStringLiteral("imagenet") << int(ErrorCode::InvalidArgument);
    QTest::newRow("mnist no dir") << QStringLiteral("mnist") << int(ErrorCode::InvalidArgument);
    QTest::newRow("cifar no dir") << QStringLiteral("cifar10:") << int(ErrorCode::InvalidArgument);
    QTest::newRow("csv option") << QStringLiteral("csv:x.csv,colour=red")
                                << int(ErrorCode::InvalidArgument);
    QTest::newRow("csv missing") << QStringLiteral("csv:/nonexistent.csv")
                                 << int(ErrorCode::NotFound);
}

void TestDatasets::specErrors() {
    QFETCH(QString, spec);
    QFETCH(int, code);
    auto r = loadDataset(spec);
    QVERIFY(!r.ok());
    QCOMPARE(int(r.error().code), code);
    QVERIFY(!r.error().message.isEmpty());
}

void TestDatasets::gunzipCapsOutput() {
    const QByteArray big(1 << 20, 'a');
    const QByteArray gz = gzipBytes(big);
    auto ok = gunzip(gz, 2 << 20, QStringLiteral("x.gz"));
    QVERIFY(ok.ok());
    QCOMPARE(ok->size(), big.size());
    auto capped = gunzip(gz, 4096, QStringLiteral("x.gz"));
    QVERIFY(!capped.ok());
    QVERIFY2(capped.error().message.contains(QStringLiteral("more than 4096")),
             qPrintable(capped.error().message));
}

void TestDatasets::gunzipRefusesTrailingGarbage() {
    const QByteArray raw = idxBytes({4}, QByteArray("\1\2\3\4", 4));
    QVERIFY(gunzip(gzipBytes(raw), 1 << 20, QStringLiteral("x.gz")).ok());
    auto r = gunzip(gzipBytes(raw) + QByteArray("junk after the stream"), 1 << 20,
                    QStringLiteral("x.gz"));
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Corrupt);
    QVERIFY2(r.error().message.contains(QStringLiteral("x.gz")) &&
                 r.error().message.contains(QStringLiteral("21 bytes that are not gzip data")),
             qPrintable(r.error().message));
}

void TestDatasets::gunzipReadsEveryMember() {
    // `cat a.gz b.gz` is a valid gzip file that inflates to both, as gzip -d reads it.
    const QByteArray a("first member, "), b("second member");
    auto r = gunzip(gzipBytes(a) + gzipBytes(b), 1 << 20, QStringLiteral("both.gz"));
    QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
    QCOMPARE(*r, a + b);
    // And an IDX file split over two members reads as one.
    const QString dir = m_tmp.filePath(QStringLiteral("members"));
    writeIdxDataset(dir, 20, 10, false);
    QFile img(dir + QStringLiteral("/train-images-idx3-ubyte"));
    QVERIFY(img.open(QIODevice::ReadOnly));
    const QByteArray whole = img.readAll();
    img.close();
    QVERIFY(QFile::remove(img.fileName()));
    QVERIFY(writeFile(img.fileName() + QStringLiteral(".gz"),
                      gzipBytes(whole.left(100)) + gzipBytes(whole.mid(100))));
    auto d = loadDataset(QStringLiteral("mnist:") + dir);
    QVERIFY2(d.ok(), qPrintable(d.ok() ? QString() : d.error().message));
    QCOMPARE(d->train.count(), 20);
}

void TestDatasets::idxGzipBombStopsAtTheDeclaredSize() {
    // A header that declares 10 images of 28x28, followed by 256 MiB of zeros: a few hundred
    // kilobytes compressed. It must be refused as soon as it passes the 7,856 declared bytes.
    QByteArray raw = idxBytes({10, 28, 28}, QByteArray());
    z_stream zs{};
    deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
    QByteArray bomb(1 << 20, Qt::Uninitialized);
    const QByteArray zeros(1 << 20, '\0');
    auto pump = [&](const QByteArray& in, int flush) {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.constData()));
        zs.avail_in = uInt(in.size());
        do {
            char buf[1 << 16];
            zs.next_out = reinterpret_cast<Bytef*>(buf);
            zs.avail_out = sizeof buf;
            deflate(&zs, flush);
            bomb.append(buf, qsizetype(sizeof buf - zs.avail_out));
        } while (zs.avail_out == 0);
    };
    bomb.clear();
    pump(raw, Z_NO_FLUSH);
    for (int i = 0; i < 256; ++i)
        pump(zeros, i == 255 ? Z_FINISH : Z_NO_FLUSH);
    deflateEnd(&zs);
    QVERIFY(bomb.size() < (2 << 20));
    const QString name = QStringLiteral("train-images-idx3-ubyte.gz");
    auto r = gunzip(bomb, qint64(4) << 30, name, idxDeclaredLength(name));
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Corrupt);
    QVERIFY2(r.error().message.contains(QStringLiteral("more than the 7856 bytes its header "
                                                       "declares")),
             qPrintable(r.error().message));
    // A header that is not IDX at all is refused by what it is, without inflating the rest.
    raw[0] = '\x7f';
    auto notIdx = gunzip(gzipBytes(raw + QByteArray(1 << 20, '\0')), qint64(4) << 30, name,
                         idxDeclaredLength(name));
    QVERIFY(!notIdx.ok());
    QVERIFY2(notIdx.error().message.contains(QStringLiteral("bad magic")),
             qPrintable(notIdx.error().message));
}

void TestDatasets::csvLabelHeaderInFirstColumn() {
    // As the user guide says: the column headed "label" is the label, wherever it stands.
    QByteArray text = "label,x1,x2\n";
    for (int i = 0; i < 20; ++i)
        text += QByteArray::number(i % 3) + "," + QByteArray::number(10 + i) + ",0.25\n";
    auto t = parseCsv(text, QString(), QStringLiteral("first.csv"));
    QVERIFY2(t.ok(), qPrintable(t.ok() ? QString() : t.error().message));
    QCOMPARE(t->data.sampleShape, (std::vector<int64_t>{2}));
    QCOMPARE(t->data.labels[4], 1);
    QCOMPARE(t->data.f32[0], 10.0f);
    QCOMPARE(t->data.f32[1], 0.25f);
    // Without a "label" header, the last column.
    QByteArray noHeader = "a,b,kind\n1,2,0\n3,4,1\n5,6,0\n";
    auto last = parseCsv(noHeader, QString(), QStringLiteral("last.csv"));
    QVERIFY(last.ok());
    QCOMPARE(last->data.labels, (std::vector<int64_t>{0, 1, 0}));
}

void TestDatasets::onlyRegularFilesAreRead() {
    // A FIFO would block the reader forever: it is refused before it is opened.
    const QString fifo = m_tmp.filePath(QStringLiteral("data.fifo"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    QElapsedTimer t;
    t.start();
    auto csv = loadDataset(QStringLiteral("csv:") + fifo);
    QVERIFY(!csv.ok());
    QVERIFY2(csv.error().message.contains(fifo) &&
                 csv.error().message.contains(QStringLiteral("not a regular file")),
             qPrintable(csv.error().message));
    auto dir = readRegularFile(m_tmp.path(), 100);
    QVERIFY(!dir.ok());
    QVERIFY(dir.error().message.contains(QStringLiteral("a folder")));
    auto missing = readRegularFile(m_tmp.filePath(QStringLiteral("nothing")), 100);
    QVERIFY(!missing.ok());
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
    QVERIFY(t.elapsed() < 60000);
}

void TestDatasets::readsAreCappedByBytesRead() {
    // /dev/zero reports a size of 0 and never ends; it is not a regular file either.
    if (QFileInfo::exists(QStringLiteral("/dev/zero"))) {
        auto z = readRegularFile(QStringLiteral("/dev/zero"), 1 << 20);
        QVERIFY(!z.ok());
        QVERIFY2(z.error().message.contains(QStringLiteral("/dev/zero")),
                 qPrintable(z.error().message));
        auto data = loadDataset(QStringLiteral("csv:/dev/zero"));
        QVERIFY(!data.ok());
    }
    // A regular file is capped by what is read.
    const QString f = m_tmp.filePath(QStringLiteral("big.bin"));
    QVERIFY(writeFile(f, QByteArray(5000, 'x')));
    QCOMPARE(readRegularFile(f, 5000)->size(), 5000);
    auto over = readRegularFile(f, 4999);
    QVERIFY(!over.ok());
    QVERIFY(over.error().message.contains(QStringLiteral("larger than 4999 bytes")));
}

QTEST_GUILESS_MAIN(TestDatasets)
#include "test_datasets.moc"
