// Every dataset reader, on good files and on each way a file can be wrong.

#include "common/files.h"
#include "formats/dataset.h"
#include "formats/datasetcache.h"
#include "formats/datasetspec.h"
#include "formats/gzip.h"
#include "formats/tokenstream.h"
#include "imageutil.h"
#include "testutil.h"

#include <QElapsedTimer>
#include <QTemporaryDir>

#include <QTest>

#include <zip.h>

#include <limits>
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
    void textWindowsAndHoldOut();
    void tokenFiles();
    void tokensTravelApartIntoTheCache();
    void sequenceErrors_data();
    void sequenceErrors();
    void sequenceDataTravelsWhole();
    void csvRegressionTarget();
    void targetsTravelWhole();
    void npyFolderAndNpzArchive();
    void arrayErrors_data();
    void arrayErrors();
    void imageFolders();
    void imageErrors();

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

void TestDatasets::textWindowsAndHoldOut() {
    // 1,000 bytes: the last tenth (100) is the test split. Windows of 8 take 9 bytes each,
    // consecutive windows sharing their boundary byte: (900 - 1) / 8 = 112 and (100 - 1) / 8 = 12.
    QByteArray text;
    for (int i = 0; i < 1000; ++i)
        text.append(char('a' + i % 26));
    const QString f = m_tmp.filePath(QStringLiteral("t.txt"));
    QVERIFY(writeFile(f, text));
    auto d = loadDataset(QStringLiteral("text:%1,context=8").arg(f));
    QVERIFY2(d.ok(), qPrintable(d ? QString() : d.error().message));
    QCOMPARE(d->numClasses, 256);
    QCOMPARE(d->train.count(), 112);
    QCOMPARE(d->test.count(), 12);
    QCOMPARE(d->train.storage, Dataset::Storage::Windows);
    QCOMPARE(d->train.targets, Dataset::Targets::Ids);
    QCOMPARE(d->train.sampleShape, std::vector<int64_t>{8});
    // Window 3 of the test split starts at byte 900 + 24; its targets are one byte later.
    QCOMPARE(d->test.stream->at(d->test.firstToken + 3 * 8), int64_t(text.at(924)));
    QVERIFY(d->description.contains(QStringLiteral("last tenth")));
    // The default context is 256, and a test file replaces the hold-out.
    const QString t = m_tmp.filePath(QStringLiteral("v.txt"));
    QVERIFY(writeFile(t, text.left(300)));
    auto withTest = loadDataset(QStringLiteral("text:%1,test=%2").arg(f, t));
    QVERIFY(withTest.ok());
    QCOMPARE(withTest->train.count(), (1000 - 1) / 256);
    QCOMPARE(withTest->test.count(), 1);
    // limit-train keeps the hash, which identifies what a peer must hold.
    const QByteArray hash = d->contentHash;
    d->limitTrain(5);
    QCOMPARE(d->train.count(), 5);
    QCOMPARE(d->contentHash, hash);
}

void TestDatasets::tokenFiles() {
    // nanoGPT's .bin: uint16 little-endian by default; uint32 and int32 on request.
    QByteArray u16, i32;
    for (int i = 0; i < 500; ++i) {
        const quint16 v = quint16((i * 37) % 50000);
        u16.append(char(v & 0xff)).append(char(v >> 8));
        char b[4];
        qToLittleEndian<qint32>(i % 70000, b);
        i32.append(b, 4);
    }
    const QString a = m_tmp.filePath(QStringLiteral("train.bin")),
                  b = m_tmp.filePath(QStringLiteral("big.bin32"));
    QVERIFY(writeFile(a, u16));
    QVERIFY(writeFile(b, i32));
    auto d = loadDataset(QStringLiteral("tokens:%1,context=16").arg(a));
    QVERIFY2(d.ok(), qPrintable(d ? QString() : d.error().message));
    int64_t biggest = 0;
    for (int i = 0; i < 500; ++i)
        biggest = std::max<int64_t>(biggest, (i * 37) % 50000);
    QCOMPARE(d->numClasses, int(biggest + 1));
    QCOMPARE(d->train.count(), (450 - 1) / 16);
    QCOMPARE(d->train.stream->at(7), int64_t(7 * 37));
    auto e = loadDataset(QStringLiteral("tokens:%1,dtype=int32,context=16").arg(b));
    QVERIFY2(e.ok(), qPrintable(e ? QString() : e.error().message));
    QCOMPARE(e->train.stream->at(499 - 50), int64_t(449));
}

void TestDatasets::tokensTravelApartIntoTheCache() {
    // What a worker that lacks a token file receives: a container that describes the windows,
    // and each split's tokens as raw bytes it writes to a file and maps.
    QByteArray bytes;
    for (int i = 0; i < 3000; ++i)
        bytes.append(char('a' + (i * 7) % 26));
    const QString text = m_tmp.filePath(QStringLiteral("apart.txt"));
    QVERIFY(writeFile(text, bytes));
    auto d = loadDataset(QStringLiteral("text:%1,context=32").arg(text));
    QVERIFY2(d.ok(), qPrintable(d ? QString() : d.error().message));
    auto inside = datasetToContainer(*d);
    auto apart = datasetToContainer(*d, TokenPlacement::Apart);
    QVERIFY(inside.ok() && apart.ok());
    QVERIFY(apart->size() + bytes.size() / 2 < inside->size()); // no tokens in it
    const QByteArray train = splitTokens(d->train), test = splitTokens(d->test);
    QCOMPARE(train.size() + test.size(),
             qsizetype(2 + d->train.windows * 32 + d->test.windows * 32));
    QVERIFY(splitTokens(Dataset{}).isEmpty());

    // Without its tokens the container is refused by name, not misread.
    auto alone = datasetFromContainer(*apart, QStringLiteral("the offer"));
    QVERIFY(!alone.ok());
    QVERIFY2(alone.error().message.contains(QLatin1String("the offer")) &&
                 alone.error().message.contains(QLatin1String("tokens")),
             qPrintable(alone.error().message));

    const QString hash = QString::fromLatin1(d->contentHash);
    const QString dir = m_tmp.filePath(QStringLiteral("cache/datasets"));
    DatasetCache cache(dir);
    auto received = [&](const QString& name, const QByteArray& content) {
        QDir().mkpath(cache.dir());
        const QString path = QDir(cache.dir()).filePath(name);
        return writeFile(path, content) ? path : QString();
    };
    QVERIFY(!cache.find(hash, 0));

    // The hash names files: one that is not a hash never becomes a path.
    const QString outside = m_tmp.filePath(QStringLiteral("outside.tandem"));
    auto escaped = cache.accept(QStringLiteral("../../outside"), *apart,
                                received(QStringLiteral("r0"), train), QString());
    QVERIFY(!escaped.ok());
    QVERIFY2(escaped.error().message.contains(QLatin1String("not a dataset hash")),
             qPrintable(escaped.error().message));
    QVERIFY(!QFile::exists(outside));
    QVERIFY(!QFile::exists(QDir(cache.dir()).filePath(QStringLiteral("r0"))));
    QVERIFY(!cache.find(QStringLiteral("../../outside"), 0));

    // Tokens that are not the dataset's are refused, and nothing of them is kept.
    QByteArray wrong = train;
    wrong[100] = 'Z';
    auto refused = cache.accept(hash, *apart, received(QStringLiteral("r1"), wrong),
                                received(QStringLiteral("r2"), test));
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message.contains(QLatin1String("hash")),
             qPrintable(refused.error().message));
    QVERIFY2(QDir(dir).entryList(QDir::Files).isEmpty(),
             qPrintable(QDir(dir).entryList(QDir::Files).join(QLatin1Char(' '))));
    QVERIFY(!cache.find(hash, 0));

    auto got = cache.accept(hash, *apart, received(QStringLiteral("r3"), train),
                            received(QStringLiteral("r4"), test));
    QVERIFY2(got.ok(), qPrintable(got ? QString() : got.error().message));
    QCOMPARE(got->data.contentHash, d->contentHash);
    QVERIFY(!got->cachedAt.isEmpty());
    QCOMPARE(got->data.train.count(), d->train.count());
    QCOMPARE(got->data.train.stream->at(40), d->train.stream->at(40));
    QCOMPARE(QDir(dir).entryList(QDir::Files).size(), 3); // the container and two token files

    // The next run finds it, maps its tokens, and checks them again.
    auto again = cache.find(hash, 0);
    QVERIFY(again);
    QCOMPARE(again->contentHash, d->contentHash);
    QCOMPARE(again->test.count(), d->test.count());
    QVERIFY(!cache.find(QString(64, QLatin1Char('0')), 0));
    // A run that needs more training samples than the cached copy holds (it was cut to its
    // first samples) does not take it for the whole dataset.
    QVERIFY(cache.find(hash, d->train.count()));
    QVERIFY(!cache.find(hash, d->train.count() + 1));
    QFile tokens(QDir(dir).filePath(hash + QStringLiteral(".train.tokens")));
    QVERIFY(tokens.open(QIODevice::ReadWrite));
    QVERIFY(tokens.seek(10));
    QVERIFY(tokens.write("Z") == 1);
    tokens.close();
    QVERIFY(!cache.find(hash, 0)); // damaged: a miss, so the worker receives it again
}

void TestDatasets::sequenceErrors_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("options");
    QTest::addColumn<QString>("expected");
    QTest::newRow("odd bytes") << QByteArray(101, 'x') << QStringLiteral(",context=4")
                               << QStringLiteral("not a whole number of uint16 tokens");
    QTest::newRow("negative int32") << QByteArray("\x01\x00\x00\x00\xff\xff\xff\xff", 8)
                                    << QStringLiteral(",dtype=int32,context=1")
                                    << QStringLiteral("token -1 at position 1 is negative");
    QTest::newRow("shorter than a window") << QByteArray(40, 'x') << QStringLiteral(",context=64")
                                           << QStringLiteral("fewer than one window of 65");
    QTest::newRow("unknown dtype") << QByteArray(40, 'x') << QStringLiteral(",dtype=float16")
                                   << QStringLiteral("dtype= takes uint16, uint32 or int32");
    QTest::newRow("context 0") << QByteArray(40, 'x') << QStringLiteral(",context=0")
                               << QStringLiteral("context= takes a whole number");
    QTest::newRow("unknown option") << QByteArray(40, 'x') << QStringLiteral(",contxt=4")
                                    << QStringLiteral("unknown or repeated option \"contxt=4\"");
    QTest::newRow("empty") << QByteArray() << QStringLiteral(",context=4")
                           << QStringLiteral("holds 0 token(s)");
}

void TestDatasets::sequenceErrors() {
    QFETCH(QByteArray, content);
    QFETCH(QString, options);
    QFETCH(QString, expected);
    const QString f = m_tmp.filePath(QStringLiteral("bad.bin"));
    QVERIFY(writeFile(f, content));
    auto d = loadDataset(QStringLiteral("tokens:") + f + options);
    QVERIFY(!d.ok());
    QVERIFY2(d.error().message.contains(expected), qPrintable(d.error().message));
    if (!options.contains(QLatin1String("dtype")) && !options.contains(QLatin1String("contxt"))) {
        QVERIFY2(d.error().message.contains(f), qPrintable(d.error().message));
    }
    // A FIFO and a device are refused by name, never opened.
    const QString fifo = m_tmp.filePath(QStringLiteral("tokens.fifo"));
    if (!QFileInfo::exists(fifo))
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    for (const QString& what : {fifo, QStringLiteral("/dev/zero")}) {
        auto t = loadDataset(QStringLiteral("text:") + what);
        QVERIFY(!t.ok());
        QVERIFY2(t.error().message.contains(what), qPrintable(t.error().message));
    }
}

void TestDatasets::sequenceDataTravelsWhole() {
    // A peer receives the tokens the windows cover and trains on the same windows, with the
    // same hash; a damaged token blob is refused.
    QByteArray text;
    for (int i = 0; i < 777; ++i)
        text.append(char(i * 13 % 251));
    const QString f = m_tmp.filePath(QStringLiteral("ship.txt"));
    QVERIFY(writeFile(f, text));
    auto d = loadDataset(QStringLiteral("text:%1,context=10").arg(f));
    QVERIFY(d.ok());
    auto blob = datasetToContainer(*d);
    QVERIFY(blob.ok());
    auto back = datasetFromContainer(*blob, QStringLiteral("peer"));
    QVERIFY2(back.ok(), qPrintable(back ? QString() : back.error().message));
    QCOMPARE(back->contentHash, d->contentHash);
    QCOMPARE(back->train.count(), d->train.count());
    QCOMPARE(back->test.count(), d->test.count());
    std::vector<int64_t> x(10), y(10);
    d->test.stream->copy(d->test.firstToken + 20, 10, x.data());
    back->test.stream->copy(back->test.firstToken + 20, 10, y.data());
    QCOMPARE(x, y);
    QCOMPARE(back->numClasses, 256);
    // Cut to its first windows (--limit-train), it travels cut, and keeps the whole dataset's
    // hash, which identifies it to the run.
    d->limitTrain(7);
    auto cut = datasetFromContainer(*datasetToContainer(*d), QStringLiteral("peer"));
    QVERIFY2(cut.ok(), qPrintable(cut ? QString() : cut.error().message));
    QCOMPARE(cut->train.count(), 7);
    QCOMPARE(cut->contentHash, d->contentHash);
}

void TestDatasets::csvRegressionTarget() {
    // target= reads the column as a float to predict; every value must be a number.
    const QString f = m_tmp.filePath(QStringLiteral("reg.csv"));
    QByteArray csv = "a,b,price\n";
    for (int i = 0; i < 20; ++i)
        csv += QByteArray::number(i) + "," + QByteArray::number(i % 3) + "," +
               QByteArray::number(1.5 * i - 0.25) + "\n";
    QVERIFY(writeFile(f, csv));
    auto d = loadDataset(QStringLiteral("csv:%1,target=price").arg(f));
    QVERIFY2(d.ok(), qPrintable(d ? QString() : d.error().message));
    QCOMPARE(d->train.targets, Dataset::Targets::Values);
    QCOMPARE(d->train.targetShape, std::vector<int64_t>{1});
    QCOMPARE(d->train.count(), 16);
    QCOMPARE(d->test.count(), 4);
    QCOMPARE(d->numClasses, 0);
    QCOMPARE(d->train.values[1], 1.25f);                // row 1
    QCOMPARE(d->test.values[0], float(1.5 * 4 - 0.25)); // every fifth row is held out
    QCOMPARE(d->train.sampleShape, std::vector<int64_t>{2});
    QVERIFY(writeFile(f, csv + "3,1,cheap\n"));
    auto bad = loadDataset(QStringLiteral("csv:%1,target=price").arg(f));
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message.contains(QStringLiteral("\"cheap\" is not a number")) &&
                 bad.error().message.contains(f),
             qPrintable(bad.error().message));
    auto both = loadDataset(QStringLiteral("csv:%1,label=a,target=price").arg(f));
    QVERIFY(!both.ok());
}

void TestDatasets::targetsTravelWhole() {
    // Float and id targets of any shape, and int64 inputs, survive the container; a tampered
    // target is refused.
    DatasetSplits s;
    s.kind = QStringLiteral("test");
    s.numClasses = 7;
    for (Dataset* d : {&s.train, &s.test}) {
        d->storage = Dataset::Storage::I64;
        d->sampleShape = {3};
        d->i64 = {1, 2, 3, 4, 5, 6};
        d->targets = Dataset::Targets::Ids;
        d->targetShape = {3};
        d->labels = {6, kIgnoredTarget, 0, 1, 2, 3};
    }
    s.finish();
    auto blob = datasetToContainer(s);
    QVERIFY(blob.ok());
    auto back = datasetFromContainer(*blob, QStringLiteral("peer"));
    QVERIFY2(back.ok(), qPrintable(back ? QString() : back.error().message));
    QCOMPARE(back->train.labels, s.train.labels);
    QCOMPARE(back->train.i64, s.train.i64);
    QCOMPARE(back->train.count(), 2);
    s.train.labels[0] = 7; // beyond the vocabulary
    s.finish();
    auto refused = datasetFromContainer(*datasetToContainer(s), QStringLiteral("peer"));
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message.contains(QStringLiteral("id 7 is outside 0..6")),
             qPrintable(refused.error().message));

    DatasetSplits v;
    v.kind = QStringLiteral("test");
    for (Dataset* d : {&v.train, &v.test}) {
        d->storage = Dataset::Storage::F32;
        d->sampleShape = {2};
        d->f32 = {0.5f, 1.5f, 2.5f, 3.5f};
        d->targets = Dataset::Targets::Values;
        d->targetShape = {2, 1};
        d->values = {1.f, 0.f, 0.25f, -3.f};
    }
    v.finish();
    auto vb = datasetFromContainer(*datasetToContainer(v), QStringLiteral("peer"));
    QVERIFY2(vb.ok(), qPrintable(vb ? QString() : vb.error().message));
    QCOMPARE(vb->test.values, v.test.values);
    QCOMPARE(vb->test.targetShape, (std::vector<int64_t>{2, 1}));
}

namespace {

// An .npy file: version 1 header for `descr` and `shape`, then `data`.
QByteArray npy(const char* descr, const QString& shape, const QByteArray& data,
               bool fortran = false) {
    QByteArray header = QStringLiteral("{'descr': '%1', 'fortran_order': %2, 'shape': (%3), }")
                            .arg(QLatin1String(descr),
                                 fortran ? QStringLiteral("True") : QStringLiteral("False"), shape)
                            .toLatin1();
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QByteArray out("\x93NUMPY\x01\x00", 8);
    out.append(char(header.size() & 0xff)).append(char(header.size() >> 8));
    return out + header + data;
}

template <typename T> QByteArray raw(std::initializer_list<T> v) {
    QByteArray b;
    for (T x : v)
        b.append(reinterpret_cast<const char*>(&x), sizeof x);
    return b;
}

bool writeNpz(const QString& path, const QHash<QString, QByteArray>& members) {
    int err = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (!z)
        return false;
    for (auto it = members.constBegin(); it != members.constEnd(); ++it) {
        zip_source_t* src =
            zip_source_buffer(z, it.value().constData(), zip_uint64_t(it.value().size()), 0);
        if (zip_file_add(z, (it.key() + QStringLiteral(".npy")).toUtf8().constData(), src, 0) < 0)
            return false;
    }
    return zip_close(z) == 0;
}

} // namespace

void TestDatasets::npyFolderAndNpzArchive() {
    // Six samples of [2] float64 inputs and [2] bool targets (multi-label); every fifth held out.
    const QString dir = m_tmp.filePath(QStringLiteral("npy"));
    QDir().mkpath(dir);
    QVERIFY(writeFile(
        dir + QStringLiteral("/x_train.npy"),
        npy("<f8", QStringLiteral("6, 2"), raw<double>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))));
    QVERIFY(writeFile(
        dir + QStringLiteral("/y_train.npy"),
        npy("|b1", QStringLiteral("6, 2"), raw<uint8_t>({1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1}))));
    auto d = loadDataset(QStringLiteral("npy:") + dir);
    QVERIFY2(d.ok(), qPrintable(d ? QString() : d.error().message));
    QCOMPARE(d->train.count(), 5);
    QCOMPARE(d->test.count(), 1);
    QCOMPARE(d->train.storage, Dataset::Storage::F32);
    QCOMPARE(d->train.targets, Dataset::Targets::Values);
    QCOMPARE(d->test.f32, (std::vector<float>{8, 9}));
    QCOMPARE(d->test.values, (std::vector<float>{1, 0}));

    // An archive with a test split: int32 token ids stay ids, int64 [N, T] targets are ids per
    // position with -100 ignored; inputs=float makes the same ids numbers.
    const QString npz = m_tmp.filePath(QStringLiteral("seq.npz"));
    const QHash<QString, QByteArray> members = {
        {QStringLiteral("x_train"),
         npy("<i4", QStringLiteral("2, 3"), raw<int32_t>({1, 2, 3, 4, 5, 6}))},
        {QStringLiteral("y_train"),
         npy("<i8", QStringLiteral("2, 3"), raw<int64_t>({2, 3, -100, 5, 6, 7}))},
        {QStringLiteral("x_test"), npy("<i4", QStringLiteral("1, 3"), raw<int32_t>({7, 8, 9}))},
        {QStringLiteral("y_test"), npy("<i8", QStringLiteral("1, 3"), raw<int64_t>({8, 9, 1}))}};
    QVERIFY(writeNpz(npz, members));
    auto s = loadDataset(QStringLiteral("npz:") + npz);
    QVERIFY2(s.ok(), qPrintable(s ? QString() : s.error().message));
    QCOMPARE(s->train.storage, Dataset::Storage::I64);
    QCOMPARE(s->train.targets, Dataset::Targets::Ids);
    QCOMPARE(s->train.labels, (std::vector<int64_t>{2, 3, kIgnoredTarget, 5, 6, 7}));
    QCOMPARE(s->numClasses, 10);
    QCOMPARE(s->test.i64, (std::vector<int64_t>{7, 8, 9}));
    auto f = loadDataset(QStringLiteral("npz:%1,inputs=float").arg(npz));
    QVERIFY(f.ok());
    QCOMPARE(f->train.f32, (std::vector<float>{1, 2, 3, 4, 5, 6}));
    QVERIFY(f->contentHash != s->contentHash);
    auto blob = datasetToContainer(*s);
    QVERIFY(blob.ok());
    auto back = datasetFromContainer(*blob, QStringLiteral("peer"));
    QVERIFY2(back.ok(), qPrintable(back ? QString() : back.error().message));
    QCOMPARE(back->contentHash, s->contentHash);
}

void TestDatasets::arrayErrors_data() {
    QTest::addColumn<QByteArray>("x");
    QTest::addColumn<QByteArray>("y");
    QTest::addColumn<QString>("expected");
    const QByteArray y3 = npy("<i8", QStringLiteral("3,"), raw<int64_t>({0, 1, 0}));
    const QByteArray x3 = npy("<f4", QStringLiteral("3,"), raw<float>({0, 1, 2}));
    QTest::newRow("truncated header") << npy("<f4", QStringLiteral("3,"), {}).left(30) << y3
                                      << QStringLiteral("header is cut short");
    QTest::newRow("no magic") << QByteArray("NUMPY but not really") << y3
                              << QStringLiteral("no \\x93NUMPY magic");
    QTest::newRow("fortran order") << npy("<f4", QStringLiteral("3,"), raw<float>({0, 1, 2}), true)
                                   << y3 << QStringLiteral("Fortran order");
    QTest::newRow("unknown dtype") << npy("<c8", QStringLiteral("3,"), QByteArray(24, 0)) << y3
                                   << QStringLiteral("dtype c8 is not supported");
    QTest::newRow("big-endian") << npy(">f4", QStringLiteral("3,"), QByteArray(12, 0)) << y3
                                << QStringLiteral("big-endian");
    QTest::newRow("data short of its shape")
        << npy("<f4", QStringLiteral("3, 2"), raw<float>({0, 1, 2})) << y3
        << QStringLiteral("holds 12 bytes of data; its shape (3, 2) of float32 needs 24");
    QTest::newRow("x and y lengths") << x3 << npy("<i8", QStringLiteral("2,"), raw<int64_t>({0, 1}))
                                     << QStringLiteral("x holds 3 samples but y holds 2");
    QTest::newRow("negative class")
        << x3 << npy("<i8", QStringLiteral("3,"), raw<int64_t>({0, -1, 0}))
        << QStringLiteral("target 1 of y is -1");
    QTest::newRow("not finite") << x3
                                << npy("<f4", QStringLiteral("3,"),
                                       raw<float>({0, std::numeric_limits<float>::infinity(), 0}))
                                << QStringLiteral("target 1 of y is not finite");
}

void TestDatasets::arrayErrors() {
    QFETCH(QByteArray, x);
    QFETCH(QByteArray, y);
    QFETCH(QString, expected);
    const QString dir =
        m_tmp.filePath(QStringLiteral("bad-") + QLatin1String(QTest::currentDataTag()));
    QDir().mkpath(dir);
    QVERIFY(writeFile(dir + QStringLiteral("/x_train.npy"), x));
    QVERIFY(writeFile(dir + QStringLiteral("/y_train.npy"), y));
    auto d = loadDataset(QStringLiteral("npy:") + dir);
    QVERIFY(!d.ok());
    QVERIFY2(d.error().message.contains(expected) && d.error().message.contains(dir),
             qPrintable(d.error().message));
    // The same arrays in an archive; and archives that are not.
    const QString npz = dir + QStringLiteral(".npz");
    QVERIFY(writeNpz(npz, {{QStringLiteral("x_train"), x}, {QStringLiteral("y_train"), y}}));
    auto z = loadDataset(QStringLiteral("npz:") + npz);
    QVERIFY(!z.ok());
    QVERIFY2(z.error().message.contains(expected), qPrintable(z.error().message));
    QVERIFY(writeFile(npz, QByteArray("PK\x03\x04 cut off")));
    auto cut = loadDataset(QStringLiteral("npz:") + npz);
    QVERIFY(!cut.ok());
    QVERIFY2(cut.error().message.contains(npz), qPrintable(cut.error().message));
    QVERIFY(writeNpz(npz, {{QStringLiteral("x_train"), x}}));
    auto half = loadDataset(QStringLiteral("npz:") + npz);
    QVERIFY(!half.ok());
    QVERIFY2(half.error().message.contains(QStringLiteral("holds no y_train array")),
             qPrintable(half.error().message));
}

void TestDatasets::imageFolders() {
    const QString dir = m_tmp.filePath(QStringLiteral("images"));
    QVERIFY(writeImageFolder(dir, 10));
    auto d = loadDataset(QStringLiteral("images:%1,size=16").arg(dir));
    QVERIFY2(d.ok(), qPrintable(d ? QString() : d.error().message));
    QCOMPARE(d->classNames,
             (QStringList{QStringLiteral("blue"), QStringLiteral("green"), QStringLiteral("red")}));
    QCOMPARE(d->train.count(), 24); // every fifth of each class's ten held out
    QCOMPARE(d->test.count(), 6);
    QCOMPARE(d->train.sampleShape, (std::vector<int64_t>{3, 16, 16}));
    // Pixels keep their class's colour, channel by channel: a red image's first plane is the
    // brightest.
    const int64_t plane = 16 * 16;
    for (int64_t i = 0; i < d->train.count(); ++i) {
        double sum[3] = {0, 0, 0};
        for (int c = 0; c < 3; ++c)
            for (int64_t p = 0; p < plane; ++p)
                sum[c] += d->train.u8[size_t(i * 3 * plane + c * plane + p)];
        const int64_t label = d->train.labels[size_t(i)]; // blue 0, green 1, red 2
        QVERIFY(sum[2 - label] > sum[(3 - label) % 3] && sum[2 - label] > sum[(4 - label) % 3]);
    }
    // A 40×20 image is scaled to 32×16 and its centre 16×16 kept.
    const QString one = m_tmp.filePath(QStringLiteral("wide"));
    QDir().mkpath(one + QStringLiteral("/a"));
    QDir().mkpath(one + QStringLiteral("/b"));
    QImage wide(40, 20, QImage::Format_RGB888);
    for (int x = 0; x < 40; ++x)
        for (int y = 0; y < 20; ++y)
            wide.setPixel(x, y, x < 10 || x >= 30 ? qRgb(0, 0, 0) : qRgb(250, 250, 250));
    for (int i = 0; i < 5; ++i) {
        QVERIFY(wide.save(one + QStringLiteral("/a/%1.png").arg(i)));
        QVERIFY(wide.save(one + QStringLiteral("/b/%1.bmp").arg(i)));
    }
    auto w = loadDataset(QStringLiteral("images:%1,size=16").arg(one));
    QVERIFY2(w.ok(), qPrintable(w ? QString() : w.error().message));
    // The black borders fall outside the centre crop.
    for (int64_t p = 0; p < 3 * plane; ++p)
        QVERIFY(w->train.u8[size_t(p)] > 200);
    // A test folder replaces the hold-out.
    const QString test = m_tmp.filePath(QStringLiteral("images-test"));
    QVERIFY(writeImageFolder(test, 2, 9));
    auto t = loadDataset(QStringLiteral("images:%1,size=8,test=%2").arg(dir, test));
    QVERIFY(t.ok());
    QCOMPARE(t->train.count(), 30);
    QCOMPARE(t->test.count(), 6);
}

void TestDatasets::imageErrors() {
    const QString dir = m_tmp.filePath(QStringLiteral("bad-images"));
    QVERIFY(writeImageFolder(dir, 6));
    // A corrupt JPEG is refused by name, or skipped and counted with skip_bad=1.
    const QString bad = dir + QStringLiteral("/green/broken.jpg");
    QVERIFY(writeFile(bad, QByteArray("\xff\xd8\xff\xe0 not really a JPEG", 24)));
    auto d = loadDataset(QStringLiteral("images:%1,size=8").arg(dir));
    QVERIFY(!d.ok());
    QVERIFY2(d.error().message.contains(bad) &&
                 d.error().message.contains(QStringLiteral("skip_bad=1")),
             qPrintable(d.error().message));
    auto skipped = loadDataset(QStringLiteral("images:%1,size=8,skip_bad=1").arg(dir));
    QVERIFY2(skipped.ok(), qPrintable(skipped ? QString() : skipped.error().message));
    QCOMPARE(skipped->train.count() + skipped->test.count(), 18);
    QVERIFY(skipped->description.contains(QStringLiteral("1 unreadable file(s) skipped")));
    QVERIFY(QFile::remove(bad));
    // An empty class folder, no class folders, a test class the training folder lacks.
    QDir().mkpath(dir + QStringLiteral("/yellow"));
    auto empty = loadDataset(QStringLiteral("images:") + dir);
    QVERIFY(!empty.ok());
    QVERIFY2(empty.error().message.contains(dir + QStringLiteral("/yellow")),
             qPrintable(empty.error().message));
    QVERIFY(QDir(dir + QStringLiteral("/yellow")).removeRecursively());
    const QString flat = m_tmp.filePath(QStringLiteral("flat-images"));
    QDir().mkpath(flat);
    auto none = loadDataset(QStringLiteral("images:") + flat);
    QVERIFY(!none.ok());
    QVERIFY2(none.error().message.contains(QStringLiteral("no class folders")),
             qPrintable(none.error().message));
    const QString other = m_tmp.filePath(QStringLiteral("other-images"));
    QVERIFY(writeImageFolder(other, 1));
    QDir().mkpath(other + QStringLiteral("/purple"));
    auto unknown = loadDataset(QStringLiteral("images:%1,test=%2").arg(dir, other));
    QVERIFY(!unknown.ok());
    QVERIFY2(unknown.error().message.contains(QStringLiteral("\"purple\"")),
             qPrintable(unknown.error().message));
    auto size = loadDataset(QStringLiteral("images:%1,size=0").arg(dir));
    QVERIFY(!size.ok());
    // A FIFO named like an image is not a file: it is left out, never opened (which would
    // block).
    const QString fifo = dir + QStringLiteral("/red/pipe.png");
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    auto piped = loadDataset(QStringLiteral("images:%1,size=8").arg(dir));
    QVERIFY2(piped.ok(), qPrintable(piped ? QString() : piped.error().message));
    QCOMPARE(piped->train.count() + piped->test.count(), 18);
}

QTEST_GUILESS_MAIN(TestDatasets)
#include "test_datasets.moc"
