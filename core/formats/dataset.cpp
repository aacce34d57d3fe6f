#include "formats/dataset.h"

#include "formats/corrupt.h"
#include "formats/gzip.h"
#include "formats/sha256.h"
#include "formats/tensorfile.h"
#include "formats/tokenstream.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QtEndian>

#include <algorithm>
#include <cmath>

Q_LOGGING_CATEGORY(lcData, "tandem.data")

namespace tandem {

namespace {

// Bounds on what a dataset file may claim. They are far above any real image dataset that fits
// in a desktop's memory and low enough that a corrupt header cannot make us allocate wildly.
constexpr qint64 kMaxFileBytes = qint64(4) << 30;
constexpr int64_t kMaxDim = 1 << 16;
constexpr int64_t kMaxSamples = int64_t(1) << 31;
constexpr int kMaxClasses = 100000;
constexpr int kMaxVocabulary = 1 << 24;

template <typename T> void addRaw(Sha256& h, const std::vector<T>& v) {
    h.addData(QByteArrayView(reinterpret_cast<const char*>(v.data()),
                             static_cast<qsizetype>(v.size() * sizeof(T))));
}

void hashSplit(Sha256& h, const Dataset& d) {
    for (int64_t s : d.sampleShape)
        h.addData(QByteArrayView(reinterpret_cast<const char*>(&s), sizeof s));
    const int64_t n = d.count();
    h.addData(QByteArrayView(reinterpret_cast<const char*>(&n), sizeof n));
    // Images and tables with class labels hash as they always have, so that caches and
    // checkpoints made before other kinds existed stay valid; the other kinds add a tag.
    switch (d.storage) {
    case Dataset::Storage::U8:
        addRaw(h, d.u8);
        break;
    case Dataset::Storage::F32:
        addRaw(h, d.f32);
        break;
    case Dataset::Storage::I64:
        h.addData("storage i64\n");
        addRaw(h, d.i64);
        break;
    case Dataset::Storage::Windows: {
        h.addData("storage windows " + tokenTypeName(d.stream->type()).toLatin1() + '\n');
        // In slices, so that a mapped file is hashed without being copied.
        const int64_t tokens = d.windows * d.sampleShape[0] + 1;
        constexpr int64_t kSlice = int64_t(1) << 22;
        for (int64_t from = 0; from < tokens; from += kSlice) {
            const int64_t n = std::min(kSlice, tokens - from);
            h.addData(d.stream->view(d.firstToken + from, n));
            d.stream->releasePages(d.firstToken + from, n);
        }
        break;
    }
    }
    switch (d.targets) {
    case Dataset::Targets::Class:
        addRaw(h, d.labels);
        break;
    case Dataset::Targets::Ids:
        h.addData("targets ids\n");
        for (int64_t s : d.targetShape)
            h.addData(QByteArrayView(reinterpret_cast<const char*>(&s), sizeof s));
        addRaw(h, d.labels);
        break;
    case Dataset::Targets::Values:
        h.addData("targets values\n");
        for (int64_t s : d.targetShape)
            h.addData(QByteArrayView(reinterpret_cast<const char*>(&s), sizeof s));
        addRaw(h, d.values);
        break;
    }
}

QByteArray hashOf(const DatasetSplits& s) {
    Sha256 h;
    h.addData(s.kind.toUtf8());
    hashSplit(h, s.train);
    hashSplit(h, s.test);
    return h.result().toHex();
}

void finish(DatasetSplits& s) {
    s.contentHash = s.heldHash = hashOf(s);
}

void truncateSplit(Dataset& d, int64_t n) {
    if (n <= 0 || n >= d.count())
        return;
    const auto per = static_cast<size_t>(d.sampleSize());
    const auto perTarget = static_cast<size_t>(d.targetSize());
    const auto rows = static_cast<size_t>(n);
    switch (d.storage) {
    case Dataset::Storage::U8:
        d.u8.resize(per * rows);
        break;
    case Dataset::Storage::F32:
        d.f32.resize(per * rows);
        break;
    case Dataset::Storage::I64:
        d.i64.resize(per * rows);
        break;
    case Dataset::Storage::Windows:
        d.windows = n;
        return;
    }
    if (d.targets == Dataset::Targets::Values)
        d.values.resize(perTarget * rows);
    else
        d.labels.resize(perTarget * rows);
}

Status checkLabels(const std::vector<int64_t>& labels, int numClasses, const QString& name) {
    for (size_t i = 0; i < labels.size(); ++i)
        if (labels[i] < 0 || labels[i] >= numClasses)
            return corrupt(name, QStringLiteral("label %1 of sample %2 is outside 0..%3")
                                     .arg(labels[i])
                                     .arg(i)
                                     .arg(numClasses - 1));
    return success();
}

QString firstExisting(const QString& dir, const QStringList& names) {
    for (const QString& n : names) {
        const QString p = QDir(dir).filePath(n);
        if (QFileInfo::exists(p))
            return p;
    }
    return QDir(dir).filePath(names.first());
}

} // namespace

int64_t Dataset::sampleSize() const {
    int64_t n = 1;
    for (int64_t s : sampleShape)
        n *= s;
    return n;
}

void DatasetSplits::finish() {
    tandem::finish(*this);
}

int64_t Dataset::targetSize() const {
    int64_t n = 1;
    for (int64_t s : targetShape)
        n *= s;
    return n;
}

int64_t Dataset::count() const {
    if (storage == Storage::Windows)
        return windows;
    const int64_t per = std::max<int64_t>(1, targetSize());
    return targets == Targets::Values ? int64_t(values.size()) / per : int64_t(labels.size()) / per;
}

void DatasetSplits::limitTrain(int64_t n) {
    if (n > 0 && n < train.count())
        heldHash.clear();
    truncateSplit(train, n);
}
void DatasetSplits::limitTest(int64_t n) {
    if (n > 0 && n < test.count())
        heldHash.clear();
    truncateSplit(test, n);
}

QString defaultFashionMnistDir() {
    const QByteArray env = qgetenv("FASHION_MNIST_DIR");
    if (!env.isEmpty())
        return QString::fromLocal8Bit(env);
    return QStringLiteral("/usr/share/datasets/fashion-mnist");
}

// ---- IDX ---------------------------------------------------------------------------------

namespace {

struct IdxHeader {
    std::vector<int64_t> dims;
    qint64 headerSize = 0;
    qint64 payload = 0; // bytes of data the dimensions promise
};

// Parses an IDX header from the first bytes of a file: nothing while more bytes are needed.
Expected<std::optional<IdxHeader>> parseIdxHeader(QByteArrayView bytes, const QString& name) {
    // Header: two zero bytes, a type code, the number of dimensions, then one big-endian
    // uint32 per dimension.
    if (bytes.size() < 4)
        return std::optional<IdxHeader>();
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.constData());
    if (p[0] != 0 || p[1] != 0)
        return corrupt(name, QStringLiteral("not an IDX file (bad magic number)"));
    if (p[2] != 0x08)
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1: IDX element type 0x%2 is not supported; only "
                                        "unsigned bytes (0x08) are")
                             .arg(name)
                             .arg(p[2], 2, 16, QLatin1Char('0')));
    const int ndims = p[3];
    if (ndims < 1 || ndims > 4)
        return corrupt(name, QStringLiteral("IDX file claims %1 dimensions").arg(ndims));
    IdxHeader h;
    h.headerSize = 4 + 4 * ndims;
    if (bytes.size() < h.headerSize)
        return std::optional<IdxHeader>();
    h.payload = 1;
    for (int i = 0; i < ndims; ++i) {
        const int64_t d = qFromBigEndian<quint32>(p + 4 + 4 * i);
        const int64_t cap = i == 0 ? kMaxSamples : kMaxDim;
        if (d < 1 || d > cap)
            return corrupt(name, QStringLiteral("dimension %1 has size %2").arg(i).arg(d));
        h.dims.push_back(d);
        h.payload *= d;
        if (h.payload > kMaxFileBytes)
            return corrupt(name, QStringLiteral("claims more data than any dataset we accept"));
    }
    return std::optional<IdxHeader>(std::move(h));
}

} // namespace

DeclaredLength idxDeclaredLength(const QString& name) {
    return [name](QByteArrayView head) -> Expected<std::optional<qint64>> {
        auto h = parseIdxHeader(head, name);
        if (!h)
            return h.error();
        if (!*h)
            return std::optional<qint64>();
        return std::optional<qint64>((*h)->headerSize + (*h)->payload);
    };
}

Expected<IdxArray> parseIdx(const QByteArray& bytes, const QString& name) {
    auto header = parseIdxHeader(bytes, name);
    if (!header)
        return header.error();
    if (!*header)
        return corrupt(name, bytes.size() < 4 ? QStringLiteral("too short to be an IDX file (%1 "
                                                               "bytes)")
                                                    .arg(bytes.size())
                                              : QStringLiteral("truncated IDX header"));
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.constData());
    const qsizetype headerSize = qsizetype((*header)->headerSize);
    const int64_t total = (*header)->payload;
    IdxArray out;
    out.dims = (*header)->dims;
    const qsizetype payload = bytes.size() - headerSize;
    if (payload < total)
        return corrupt(name, QStringLiteral("truncated: the header promises %1 bytes of data but "
                                            "the file holds %2")
                                 .arg(total)
                                 .arg(payload));
    if (payload > total)
        return corrupt(name,
                       QStringLiteral("%1 unexpected bytes after the data").arg(payload - total));
    out.data.assign(p + headerSize, p + headerSize + total);
    return out;
}

namespace {

Expected<Dataset> readIdxSplit(const QString& dir, const QString& prefix, const QString& what) {
    const QString imgPath = firstExisting(dir, {prefix + QStringLiteral("-images-idx3-ubyte.gz"),
                                                prefix + QStringLiteral("-images-idx3-ubyte"),
                                                prefix + QStringLiteral("-images.idx3-ubyte")});
    const QString lblPath = firstExisting(dir, {prefix + QStringLiteral("-labels-idx1-ubyte.gz"),
                                                prefix + QStringLiteral("-labels-idx1-ubyte"),
                                                prefix + QStringLiteral("-labels.idx1-ubyte")});
    auto imgBytes = readFileMaybeGzip(imgPath, kMaxFileBytes, idxDeclaredLength(imgPath));
    if (!imgBytes)
        return makeError(imgBytes.error().code,
                         QStringLiteral("%1 images: %2").arg(what, imgBytes.error().message));
    auto lblBytes = readFileMaybeGzip(lblPath, kMaxFileBytes, idxDeclaredLength(lblPath));
    if (!lblBytes)
        return makeError(lblBytes.error().code,
                         QStringLiteral("%1 labels: %2").arg(what, lblBytes.error().message));
    auto img = parseIdx(*imgBytes, imgPath);
    if (!img)
        return img.error();
    auto lbl = parseIdx(*lblBytes, lblPath);
    if (!lbl)
        return lbl.error();
    if (img->dims.size() != 3)
        return corrupt(imgPath, QStringLiteral("expected 3 dimensions (count, rows, columns), "
                                               "found %1")
                                    .arg(img->dims.size()));
    if (lbl->dims.size() != 1)
        return corrupt(lblPath,
                       QStringLiteral("expected 1 dimension, found %1").arg(lbl->dims.size()));
    if (lbl->dims[0] != img->dims[0])
        return corrupt(lblPath, QStringLiteral("holds %1 labels but %2 holds %3 images")
                                    .arg(lbl->dims[0])
                                    .arg(imgPath)
                                    .arg(img->dims[0]));
    Dataset d;
    d.storage = Dataset::Storage::U8;
    d.sampleShape = {1, img->dims[1], img->dims[2]};
    d.u8 = std::move(img->data);
    d.labels.assign(lbl->data.begin(), lbl->data.end());
    if (auto st = checkLabels(d.labels, 10, lblPath); !st)
        return st.error();
    return d;
}

} // namespace

Expected<DatasetSplits> readIdxDataset(const QString& dir, const QString& spec) {
    if (!QFileInfo(dir).isDir())
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("dataset folder %1 does not exist").arg(dir));
    DatasetSplits s;
    s.spec = spec;
    s.kind = QStringLiteral("idx");
    s.numClasses = 10;
    s.description = QStringLiteral("IDX images in %1").arg(QDir(dir).absolutePath());
    auto train = readIdxSplit(dir, QStringLiteral("train"), QStringLiteral("training"));
    if (!train)
        return train.error();
    auto test = readIdxSplit(dir, QStringLiteral("t10k"), QStringLiteral("test"));
    if (!test)
        return test.error();
    if (train->sampleShape != test->sampleShape)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: training and test images differ in size").arg(dir));
    s.train = std::move(*train);
    s.test = std::move(*test);
    if (spec.startsWith(QLatin1String("fashion-mnist")))
        s.classNames = {QStringLiteral("T-shirt/top"), QStringLiteral("Trouser"),
                        QStringLiteral("Pullover"),    QStringLiteral("Dress"),
                        QStringLiteral("Coat"),        QStringLiteral("Sandal"),
                        QStringLiteral("Shirt"),       QStringLiteral("Sneaker"),
                        QStringLiteral("Bag"),         QStringLiteral("Ankle boot")};
    finish(s);
    return s;
}

// ---- CIFAR-10 ----------------------------------------------------------------------------

Expected<DatasetSplits> readCifar10(const QString& dir, const QString& spec) {
    // Each record is one label byte followed by 3072 bytes: 1024 red, 1024 green, 1024 blue,
    // row-major 32x32; that is already CHW.
    constexpr int64_t kImage = 3 * 32 * 32;
    constexpr int64_t kRecord = 1 + kImage;
    if (!QFileInfo(dir).isDir())
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("dataset folder %1 does not exist").arg(dir));
    auto readFiles = [&](const QStringList& files) -> Expected<Dataset> {
        Dataset d;
        d.storage = Dataset::Storage::U8;
        d.sampleShape = {3, 32, 32};
        for (const QString& f : files) {
            const QString path = QDir(dir).filePath(f);
            auto bytes = readFileMaybeGzip(path, kMaxFileBytes);
            if (!bytes)
                return bytes.error();
            if (bytes->isEmpty() || bytes->size() % kRecord != 0)
                return corrupt(path, QStringLiteral("size %1 is not a whole number of %2-byte "
                                                    "CIFAR-10 records; the file is truncated or "
                                                    "not a CIFAR-10 binary batch")
                                         .arg(bytes->size())
                                         .arg(kRecord));
            const auto* p = reinterpret_cast<const uint8_t*>(bytes->constData());
            const int64_t n = bytes->size() / kRecord;
            d.u8.reserve(d.u8.size() + static_cast<size_t>(n * kImage));
            for (int64_t i = 0; i < n; ++i) {
                const uint8_t* r = p + i * kRecord;
                if (r[0] > 9)
                    return corrupt(path, QStringLiteral("record %1 has label %2; CIFAR-10 labels "
                                                        "are 0..9")
                                             .arg(i)
                                             .arg(r[0]));
                d.labels.push_back(r[0]);
                d.u8.insert(d.u8.end(), r + 1, r + kRecord);
            }
        }
        return d;
    };
    QStringList trainFiles;
    for (int i = 1; i <= 5; ++i)
        trainFiles << QStringLiteral("data_batch_%1.bin").arg(i);
    // Smaller copies (tests, subsets) may ship fewer training batches; at least the first.
    while (trainFiles.size() > 1 && !QFileInfo::exists(QDir(dir).filePath(trainFiles.last())))
        trainFiles.removeLast();
    auto train = readFiles(trainFiles);
    if (!train)
        return train.error();
    auto test = readFiles({QStringLiteral("test_batch.bin")});
    if (!test)
        return test.error();
    DatasetSplits s;
    s.spec = spec;
    s.kind = QStringLiteral("cifar10");
    s.numClasses = 10;
    s.description = QStringLiteral("CIFAR-10 batches in %1").arg(QDir(dir).absolutePath());
    s.classNames = {QStringLiteral("airplane"), QStringLiteral("automobile"),
                    QStringLiteral("bird"),     QStringLiteral("cat"),
                    QStringLiteral("deer"),     QStringLiteral("dog"),
                    QStringLiteral("frog"),     QStringLiteral("horse"),
                    QStringLiteral("ship"),     QStringLiteral("truck")};
    s.train = std::move(*train);
    s.test = std::move(*test);
    finish(s);
    return s;
}

// ---- CSV ---------------------------------------------------------------------------------

namespace {

// Splits one CSV line. Quoted fields ("a, b") and doubled quotes are honoured; a line break
// inside quotes is not supported (tabular numeric data has none).
Expected<QList<QByteArray>> splitCsvLine(const QByteArray& line, const QString& name, int lineNo) {
    QList<QByteArray> fields;
    QByteArray cur;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    cur += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields << cur.trimmed();
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (quoted)
        return corrupt(name, QStringLiteral("line %1: unterminated quote").arg(lineNo));
    fields << cur.trimmed();
    return fields;
}

bool parseFloat(const QByteArray& s, float* out) {
    bool ok = false;
    const double v = s.toDouble(&ok);
    if (!ok || !std::isfinite(v))
        return false;
    *out = static_cast<float>(v);
    return true;
}

// The label column: named by the caller (a header name or a 0-based index), else the column
// headed "label" (in any case) wherever it stands, else the last column.
Expected<qsizetype> labelColumnIndex(const QString& labelColumn, bool header,
                                     const QStringList& headerNames, qsizetype ncols,
                                     const QString& name) {
    qsizetype labelIdx = ncols - 1;
    if (labelColumn.isEmpty() && header) {
        for (qsizetype c = 0; c < headerNames.size(); ++c)
            if (headerNames[c].compare(QLatin1String("label"), Qt::CaseInsensitive) == 0) {
                labelIdx = c;
                break;
            }
    }
    if (!labelColumn.isEmpty()) {
        bool isIndex = false;
        const int idx = labelColumn.toInt(&isIndex);
        if (header && headerNames.contains(labelColumn)) {
            labelIdx = headerNames.indexOf(labelColumn);
        } else if (isIndex) {
            if (idx < 0 || idx >= ncols)
                return makeError(ErrorCode::InvalidArgument,
                                 QStringLiteral("%1: label column %2 is outside 0..%3")
                                     .arg(name)
                                     .arg(idx)
                                     .arg(ncols - 1));
            labelIdx = idx;
        } else {
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("%1: there is no column named \"%2\"%3")
                                 .arg(name, labelColumn,
                                      header ? QStringLiteral(" (columns: %1)")
                                                   .arg(headerNames.join(QStringLiteral(", ")))
                                             : QStringLiteral(" (the file has no header row)")));
        }
    }

    return labelIdx;
}

// Class indices for the rows' raw labels: integers are indices already; names become the
// sorted distinct names, unless the caller fixed them (a test file must use the training
// file's classes).
Status assignClasses(const QList<QByteArray>& rawLabels, bool numericLabels,
                     const QStringList& knownClasses, const QString& name, CsvTable& out) {
    Dataset& d = out.data;
    if (numericLabels && knownClasses.isEmpty()) {
        // Integer labels are class indices already.
        int64_t maxLabel = 0;
        for (const QByteArray& l : rawLabels)
            maxLabel = std::max<int64_t>(maxLabel, l.toLongLong());
        if (maxLabel >= kMaxClasses)
            return corrupt(name, QStringLiteral("label %1 is too large; labels must be class "
                                                "indices below %2")
                                     .arg(maxLabel)
                                     .arg(kMaxClasses));
        for (const QByteArray& l : rawLabels)
            d.labels.push_back(l.toLongLong());
        for (int64_t i = 0; i <= maxLabel; ++i)
            out.classNames << QString::number(i);
    } else {
        // Names: classes are the sorted distinct names, unless the caller fixed them (a test
        // file must use the training file's classes).
        QStringList classes = knownClasses;
        if (classes.isEmpty()) {
            for (const QByteArray& l : rawLabels)
                classes << QString::fromUtf8(l);
            classes.removeDuplicates();
            classes.sort();
            if (classes.size() > kMaxClasses)
                return corrupt(name, QStringLiteral("has %1 distinct labels; at most %2 are "
                                                    "supported")
                                         .arg(classes.size())
                                         .arg(kMaxClasses));
        }
        QHash<QString, int> index;
        for (int i = 0; i < classes.size(); ++i)
            index.insert(classes[i], i);
        for (qsizetype r = 0; r < rawLabels.size(); ++r) {
            const auto it = index.constFind(QString::fromUtf8(rawLabels[r]));
            if (it == index.constEnd())
                return corrupt(name, QStringLiteral("label \"%1\" does not occur in the "
                                                    "training data")
                                         .arg(QString::fromUtf8(rawLabels[r])));
            d.labels.push_back(*it);
        }
        out.classNames = classes;
    }
    return success();
}

} // namespace

Expected<CsvTable> parseCsv(const QByteArray& text, const QString& labelColumn, const QString& name,
                            const QStringList& knownClasses, bool floatTarget) {
    QList<QByteArray> lines = text.split('\n');
    QList<QList<QByteArray>> rows;
    QList<int> lineNos;
    for (int i = 0; i < lines.size(); ++i) {
        QByteArray l = lines[i];
        if (l.endsWith('\r'))
            l.chop(1);
        if (l.trimmed().isEmpty())
            continue;
        auto f = splitCsvLine(l, name, i + 1);
        if (!f)
            return f.error();
        rows << *f;
        lineNos << i + 1;
    }
    if (rows.isEmpty())
        return corrupt(name, QStringLiteral("holds no rows"));
    const qsizetype ncols = rows.first().size();
    if (ncols < 2)
        return corrupt(name, QStringLiteral("needs at least one feature column and a label "
                                            "column; line %1 has %2 field(s)")
                                 .arg(lineNos.first())
                                 .arg(ncols));
    // The first row is a header when one of its fields is not a number while the row below
    // holds a number there (a column of class names is text in every row). A file of one row
    // is a header only if none of its fields is a number.
    bool header = false;
    float v;
    if (rows.size() == 1) {
        header = std::none_of(rows[0].begin(), rows[0].end(),
                              [&](const QByteArray& f) { return parseFloat(f, &v); });
    } else {
        for (qsizetype c = 0; c < ncols && !header; ++c)
            header =
                !parseFloat(rows[0][c], &v) && c < rows[1].size() && parseFloat(rows[1][c], &v);
    }
    QStringList headerNames;
    if (header)
        for (const QByteArray& f : rows.first())
            headerNames << QString::fromUtf8(f);

    const auto labelIdxOr = labelColumnIndex(labelColumn, header, headerNames, ncols, name);
    if (!labelIdxOr)
        return labelIdxOr.error();
    const qsizetype labelIdx = *labelIdxOr;

    CsvTable out;
    Dataset& d = out.data;
    d.storage = Dataset::Storage::F32;
    d.sampleShape = {ncols - 1};
    QList<QByteArray> rawLabels;
    bool numericLabels = true;
    for (qsizetype r = header ? 1 : 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        if (row.size() != ncols)
            return corrupt(name, QStringLiteral("line %1 has %2 fields; the first row has %3")
                                     .arg(lineNos[r])
                                     .arg(row.size())
                                     .arg(ncols));
        for (qsizetype c = 0; c < ncols; ++c) {
            if (c == labelIdx)
                continue;
            float v;
            if (!parseFloat(row[c], &v))
                return corrupt(name, QStringLiteral("line %1, column %2: \"%3\" is not a number")
                                         .arg(lineNos[r])
                                         .arg(c + 1)
                                         .arg(QString::fromUtf8(row[c].left(40))));
            d.f32.push_back(v);
        }
        if (floatTarget) {
            float t;
            if (!parseFloat(row[labelIdx], &t))
                return corrupt(name, QStringLiteral("line %1, target column %2: \"%3\" is not a "
                                                    "number")
                                         .arg(lineNos[r])
                                         .arg(labelIdx + 1)
                                         .arg(QString::fromUtf8(row[labelIdx].left(40))));
            d.values.push_back(t);
        }
        rawLabels << row[labelIdx];
        bool isInt = false;
        const qlonglong v = row[labelIdx].toLongLong(&isInt);
        if (!isInt || v < 0)
            numericLabels = false;
    }
    if (rawLabels.isEmpty())
        return corrupt(name, QStringLiteral("has a header but no data rows"));
    if (floatTarget) {
        // One float per row, shaped [1] as a regression model's [batch, 1] output is.
        d.targets = Dataset::Targets::Values;
        d.targetShape = {1};
        return out;
    }

    if (auto st = assignClasses(rawLabels, numericLabels, knownClasses, name, out); !st)
        return st.error();
    return out;
}

Expected<DatasetSplits> readCsvDataset(const QString& specBody, const QString& spec) {
    const QStringList parts = specBody.split(QLatin1Char(','));
    const QString file = parts.first();
    QString label, testFile;
    bool regression = false;
    for (int i = 1; i < parts.size(); ++i) {
        const QString& p = parts[i];
        if (p.startsWith(QLatin1String("label=")) && !regression) {
            label = p.mid(6);
        } else if (p.startsWith(QLatin1String("target=")) && label.isEmpty()) {
            label = p.mid(7);
            regression = true;
        } else if (p.startsWith(QLatin1String("test="))) {
            testFile = p.mid(5);
        } else {
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("dataset spec %1: unknown option \"%2\" (use label= "
                                            "for a class column or target= for a number to "
                                            "predict, and test=)")
                                 .arg(spec, p));
        }
    }
    if (regression && label.isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1: target= needs a column").arg(spec));
    if (file.isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1 names no file").arg(spec));
    auto text = readFileMaybeGzip(file, kMaxFileBytes);
    if (!text)
        return text.error();
    auto table = parseCsv(*text, label, file, {}, regression);
    if (!table)
        return table.error();

    DatasetSplits s;
    s.spec = spec;
    s.kind = QStringLiteral("csv");
    if (!regression) {
        s.classNames = table->classNames;
        s.numClasses = static_cast<int>(table->classNames.size());
    }
    if (!testFile.isEmpty()) {
        auto testText = readFileMaybeGzip(testFile, kMaxFileBytes);
        if (!testText)
            return testText.error();
        // Numeric labels keep their meaning; named labels must map onto the training classes.
        const bool named =
            table->classNames.size() > 0 && table->classNames.first() != QStringLiteral("0");
        auto testTable =
            parseCsv(*testText, label, testFile,
                     named && !regression ? table->classNames : QStringList{}, regression);
        if (!testTable)
            return testTable.error();
        if (testTable->data.sampleShape != table->data.sampleShape)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 has %2 feature columns but %3 has %4")
                                 .arg(testFile)
                                 .arg(testTable->data.sampleShape[0])
                                 .arg(file)
                                 .arg(table->data.sampleShape[0]));
        if (!regression)
            if (auto st = checkLabels(testTable->data.labels, s.numClasses, testFile); !st)
                return st.error();
        s.train = std::move(table->data);
        s.test = std::move(testTable->data);
        s.description = QStringLiteral("CSV %1 (test: %2)").arg(file, testFile);
    } else {
        // Every fifth row is held out: rows are often sorted by class, so a tail split would
        // test on classes never seen in training.
        const Dataset& all = table->data;
        const int64_t per = all.sampleSize();
        s.train.storage = s.test.storage = Dataset::Storage::F32;
        s.train.sampleShape = s.test.sampleShape = all.sampleShape;
        s.train.targets = s.test.targets = all.targets;
        s.train.targetShape = s.test.targetShape = all.targetShape;
        for (int64_t i = 0; i < all.count(); ++i) {
            Dataset& dst = (i % 5 == 4) ? s.test : s.train;
            dst.f32.insert(dst.f32.end(), all.f32.begin() + i * per,
                           all.f32.begin() + (i + 1) * per);
            if (regression)
                dst.values.push_back(all.values[static_cast<size_t>(i)]);
            else
                dst.labels.push_back(all.labels[static_cast<size_t>(i)]);
        }
        if (s.train.count() == 0 || s.test.count() == 0)
            return corrupt(
                file,
                QStringLiteral("has too few rows (%1) to hold out a test split").arg(all.count()));
        s.description = QStringLiteral("CSV %1 (every fifth row held out for testing)").arg(file);
    }
    finish(s);
    return s;
}

// ---- Container -----------------------------------------------------------------------------

namespace {

QString targetsName(Dataset::Targets t) {
    switch (t) {
    case Dataset::Targets::Class:
        return QStringLiteral("class");
    case Dataset::Targets::Ids:
        return QStringLiteral("ids");
    case Dataset::Targets::Values:
        return QStringLiteral("values");
    }
    return {};
}

template <typename T> QByteArray rawBytes(const std::vector<T>& v) {
    return QByteArray(reinterpret_cast<const char*>(v.data()), qsizetype(v.size() * sizeof(T)));
}

template <typename T> void assignRaw(std::vector<T>& v, const QByteArray& bytes) {
    v.resize(size_t(bytes.size()) / sizeof(T));
    if (!v.empty())
        memcpy(v.data(), bytes.constData(), v.size() * sizeof(T));
}

// A split as records: x (inputs) and y (targets), or for a token stream the tokens its windows
// cover as a blob, described in the metadata.
void putSplit(TensorFile& f, const QString& prefix, const Dataset& d, TokenPlacement where) {
    if (d.storage == Dataset::Storage::Windows) {
        QJsonObject w{{QStringLiteral("dtype"), tokenTypeName(d.stream->type())},
                      {QStringLiteral("context"), qint64(d.sampleShape[0])},
                      {QStringLiteral("windows"), qint64(d.windows)}};
        if (where == TokenPlacement::Apart)
            w.insert(QStringLiteral("tokens"), QStringLiteral("apart"));
        else
            f.blobs.insert(prefix + QStringLiteral(".tokens"), splitTokens(d));
        f.meta.insert(prefix + QStringLiteral("_windows"), w);
        return;
    }
    TensorRecord x;
    x.name = prefix + QStringLiteral(".x");
    x.shape = {d.count()};
    x.shape.insert(x.shape.end(), d.sampleShape.begin(), d.sampleShape.end());
    switch (d.storage) {
    case Dataset::Storage::U8:
        x.dtype = DType::U8;
        x.data = rawBytes(d.u8);
        break;
    case Dataset::Storage::F32:
        x.dtype = DType::F32;
        x.data = rawBytes(d.f32);
        break;
    case Dataset::Storage::I64:
    case Dataset::Storage::Windows:
        x.dtype = DType::I64;
        x.data = rawBytes(d.i64);
        break;
    }
    TensorRecord y;
    y.name = prefix + QStringLiteral(".y");
    y.shape = {d.count()};
    y.shape.insert(y.shape.end(), d.targetShape.begin(), d.targetShape.end());
    y.dtype = d.targets == Dataset::Targets::Values ? DType::F32 : DType::I64;
    y.data = d.targets == Dataset::Targets::Values ? rawBytes(d.values) : rawBytes(d.labels);
    f.tensors << x << y;
    f.meta.insert(prefix + QStringLiteral("_targets"), targetsName(d.targets));
}

Expected<Dataset> getWindows(const TensorFile& f, const QString& prefix, const QString& name,
                             const TokenSource& tokens) {
    const QJsonObject w = f.meta.value(prefix + QStringLiteral("_windows")).toObject();
    TokenType type;
    const QString dtype = w.value(QStringLiteral("dtype")).toString();
    const int64_t context = w.value(QStringLiteral("context")).toInteger();
    const int64_t windows = w.value(QStringLiteral("windows")).toInteger();
    const bool apart = w.value(QStringLiteral("tokens")).toString() == QLatin1String("apart");
    if (!tokenTypeFromName(dtype, &type) || context < 1 || context > kMaxDim || windows < 1 ||
        (!apart && !f.blobs.contains(prefix + QStringLiteral(".tokens"))))
        return corrupt(name, QStringLiteral("the %1 token windows are malformed").arg(prefix));
    if (apart && !tokens)
        return corrupt(name, QStringLiteral("the %1 tokens are not with it").arg(prefix));
    auto stream = apart ? tokens(prefix, dtype)
                        : TokenStream::fromBytes(f.blobs.value(prefix + QStringLiteral(".tokens")),
                                                 type, name);
    if (!stream)
        return stream.error();
    if ((*stream)->type() != type)
        return corrupt(name, QStringLiteral("the %1 tokens are not %2").arg(prefix, dtype));
    if ((*stream)->size() != windows * context + 1)
        return corrupt(
            name, QStringLiteral("the %1 token windows do not match their tokens").arg(prefix));
    Dataset d;
    d.storage = Dataset::Storage::Windows;
    d.targets = Dataset::Targets::Ids;
    d.sampleShape = d.targetShape = {context};
    d.stream = std::move(*stream);
    d.windows = windows;
    return d;
}

Expected<Dataset> getSplit(const TensorFile& f, const QString& prefix, int numClasses,
                           const QString& name, const TokenSource& tokens) {
    if (f.meta.contains(prefix + QStringLiteral("_windows")))
        return getWindows(f, prefix, name, tokens);
    const QString targets = f.meta.value(prefix + QStringLiteral("_targets"))
                                .toString(targetsName(Dataset::Targets::Class));
    const TensorRecord* x = nullptr;
    const TensorRecord* y = nullptr;
    for (const TensorRecord& t : f.tensors) {
        if (t.name == prefix + QStringLiteral(".x"))
            x = &t;
        else if (t.name == prefix + QStringLiteral(".y"))
            y = &t;
    }
    Dataset d;
    if (targets == targetsName(Dataset::Targets::Ids))
        d.targets = Dataset::Targets::Ids;
    else if (targets == targetsName(Dataset::Targets::Values))
        d.targets = Dataset::Targets::Values;
    else if (targets != targetsName(Dataset::Targets::Class))
        return corrupt(name, QStringLiteral("unknown kind of targets \"%1\"").arg(targets));
    const DType yType = d.targets == Dataset::Targets::Values ? DType::F32 : DType::I64;
    if (!x || !y || x->shape.size() < 2 || y->dtype != yType || y->shape.empty() ||
        (d.targets == Dataset::Targets::Class && y->shape.size() != 1) ||
        y->shape[0] != x->shape[0] ||
        (x->dtype != DType::U8 && x->dtype != DType::F32 && x->dtype != DType::I64))
        return corrupt(name, QStringLiteral("the %1 split is missing or malformed").arg(prefix));
    d.sampleShape.assign(x->shape.begin() + 1, x->shape.end());
    d.targetShape.assign(y->shape.begin() + 1, y->shape.end());
    if (x->dtype == DType::U8) {
        d.storage = Dataset::Storage::U8;
        d.u8.assign(x->data.begin(), x->data.end());
    } else if (x->dtype == DType::F32) {
        d.storage = Dataset::Storage::F32;
        assignRaw(d.f32, x->data);
    } else {
        d.storage = Dataset::Storage::I64;
        assignRaw(d.i64, x->data);
    }
    if (d.targets == Dataset::Targets::Values) {
        assignRaw(d.values, y->data);
        for (float v : d.values)
            if (!std::isfinite(v))
                return corrupt(name, QStringLiteral("a %1 target is not finite").arg(prefix));
        return d;
    }
    assignRaw(d.labels, y->data);
    if (d.targets == Dataset::Targets::Ids) {
        for (int64_t v : d.labels)
            if (v != kIgnoredTarget && (v < 0 || v >= numClasses))
                return corrupt(name, QStringLiteral("a %1 target id %2 is outside 0..%3")
                                         .arg(prefix)
                                         .arg(v)
                                         .arg(numClasses - 1));
        return d;
    }
    if (auto st = checkLabels(d.labels, numClasses, name); !st)
        return st.error();
    return d;
}

} // namespace

QByteArray splitTokens(const Dataset& d) {
    if (d.storage != Dataset::Storage::Windows || !d.stream)
        return {};
    const QByteArrayView v = d.stream->view(d.firstToken, d.windows * d.sampleShape[0] + 1);
    return QByteArray::fromRawData(v.data(), v.size());
}

Expected<QByteArray> datasetToContainer(const DatasetSplits& data, TokenPlacement tokens) {
    TensorFile f;
    f.meta =
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("tandem-dataset")},
                    {QStringLiteral("dataset_kind"), data.kind},
                    {QStringLiteral("spec"), data.spec},
                    {QStringLiteral("description"), data.description},
                    {QStringLiteral("num_classes"), data.numClasses},
                    {QStringLiteral("class_names"), QJsonArray::fromStringList(data.classNames)},
                    // What the blob holds: less than the dataset when the run uses only the
                    // first samples (--limit-train), which keep the whole dataset's hash as
                    // their identity.
                    {QStringLiteral("hash"),
                     QString::fromLatin1(data.heldHash.isEmpty() ? hashOf(data) : data.heldHash)},
                    {QStringLiteral("identity"), QString::fromLatin1(data.contentHash)}};
    putSplit(f, QStringLiteral("train"), data.train, tokens);
    putSplit(f, QStringLiteral("test"), data.test, tokens);
    return serializeCheckpoint(f);
}

Expected<DatasetSplits> datasetFromContainer(const QByteArray& bytes, const QString& name,
                                             const TokenSource& tokens) {
    auto f = parseCheckpoint(bytes, name);
    if (!f)
        return f.error();
    const QJsonObject m = f->meta;
    if (m.value(QStringLiteral("kind")).toString() != QLatin1String("tandem-dataset"))
        return corrupt(name, QStringLiteral("not a Tandem dataset"));
    DatasetSplits s;
    s.kind = m.value(QStringLiteral("dataset_kind")).toString();
    s.spec = m.value(QStringLiteral("spec")).toString();
    s.description = m.value(QStringLiteral("description")).toString();
    s.numClasses = m.value(QStringLiteral("num_classes")).toInt();
    for (const QJsonValue& v : m.value(QStringLiteral("class_names")).toArray())
        s.classNames << v.toString();
    // Regression data has no classes; a vocabulary may be far larger than a class list.
    if (s.numClasses < 0 || s.numClasses > kMaxVocabulary)
        return corrupt(name, QStringLiteral("invalid class count"));
    auto train = getSplit(*f, QStringLiteral("train"), s.numClasses, name, tokens);
    if (!train)
        return train.error();
    auto test = getSplit(*f, QStringLiteral("test"), s.numClasses, name, tokens);
    if (!test)
        return test.error();
    s.train = std::move(*train);
    s.test = std::move(*test);
    if (s.train.targets == Dataset::Targets::Class && s.numClasses < 1)
        return corrupt(name, QStringLiteral("invalid class count"));
    finish(s);
    if (s.contentHash != m.value(QStringLiteral("hash")).toString().toLatin1())
        return corrupt(name, QStringLiteral("its content does not match its hash"));
    if (const QString identity = m.value(QStringLiteral("identity")).toString();
        !identity.isEmpty())
        s.contentHash = identity.toLatin1();
    return s;
}

} // namespace tandem
