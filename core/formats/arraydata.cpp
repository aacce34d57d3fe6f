// NumPy arrays: `npz:FILE` (an .npz archive, read with libzip, with x_train and y_train and
// optionally x_test and y_test, as Keras' mnist.npz) and `npy:DIR` (the same names as .npy
// files). Arrays may have any shape and the dtypes NumPy writes for numbers; what they become:
//   inputs   float32, except integer arrays wider than a byte (token ids), which stay int64 for
//            a model that embeds them; inputs=float or inputs=ids overrides
//   targets  integers of one value per sample: class labels; integers of more: ids per
//            position (-100 ignored); floats and booleans: values to predict

#include "common/files.h"
#include "formats/corrupt.h"
#include "formats/dataset.h"
#include "formats/datasetspec.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QtEndian>
#include <qfloat16.h>

#include <zip.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

namespace tandem {

namespace {

constexpr qint64 kMaxArrayBytes = qint64(4) << 30;
constexpr int kMaxDims = 8;

} // namespace

QString NpyArray::dtype() const {
    static const QHash<QString, QString> names = {{QStringLiteral("f2"), QStringLiteral("float16")},
                                                  {QStringLiteral("f4"), QStringLiteral("float32")},
                                                  {QStringLiteral("f8"), QStringLiteral("float64")},
                                                  {QStringLiteral("i1"), QStringLiteral("int8")},
                                                  {QStringLiteral("i2"), QStringLiteral("int16")},
                                                  {QStringLiteral("i4"), QStringLiteral("int32")},
                                                  {QStringLiteral("i8"), QStringLiteral("int64")},
                                                  {QStringLiteral("u1"), QStringLiteral("uint8")},
                                                  {QStringLiteral("b1"), QStringLiteral("bool")}};
    return names.value(QLatin1Char(kind) + QString::number(width));
}

Expected<NpyArray> parseNpy(const QByteArray& b, const QString& name) {
    if (b.size() < 10 || !b.startsWith("\x93NUMPY"))
        return corrupt(name, QStringLiteral("is not a NumPy .npy array (no \\x93NUMPY magic)"));
    const int major = uchar(b[6]);
    qint64 headerLen = 0, start = 0;
    if (major == 1) {
        headerLen = qFromLittleEndian<quint16>(b.constData() + 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12)
            return corrupt(name, QStringLiteral("its header is cut short"));
        headerLen = qFromLittleEndian<quint32>(b.constData() + 8);
        start = 12;
    } else {
        return corrupt(name, QStringLiteral("is .npy format version %1, which is not supported "
                                            "(1 to 3 are)")
                                 .arg(major));
    }
    if (start + headerLen > b.size())
        return corrupt(name, QStringLiteral("its header is cut short"));
    const QString header = QString::fromLatin1(b.mid(start, headerLen));
    static const QRegularExpression descrRe(
        QStringLiteral("'descr'\\s*:\\s*'([<>|=])([a-zA-Z])(\\d+)'"));
    static const QRegularExpression orderRe(QStringLiteral("'fortran_order'\\s*:\\s*(\\w+)"));
    static const QRegularExpression shapeRe(QStringLiteral("'shape'\\s*:\\s*\\(([^)]*)\\)"));
    const auto descr = descrRe.match(header);
    const auto order = orderRe.match(header);
    const auto shape = shapeRe.match(header);
    if (!descr.hasMatch() || !order.hasMatch() || !shape.hasMatch())
        return corrupt(
            name,
            QStringLiteral("its header is not a NumPy array header: %1").arg(header.left(120)));
    NpyArray a;
    a.kind = descr.captured(2).at(0).toLatin1();
    a.width = descr.captured(3).toInt();
    if (a.dtype().isEmpty())
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1: dtype %2%3 is not supported; use float16/32/64, "
                                        "int8 to int64, uint8 or bool")
                             .arg(name, descr.captured(2), descr.captured(3)));
    if (descr.captured(1) == QLatin1String(">") && a.width > 1)
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 is big-endian; save it little-endian "
                                        "(array.astype(array.dtype.newbyteorder('<')))")
                             .arg(name));
    if (order.captured(1) != QLatin1String("False"))
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 is in Fortran order; save it in C order "
                                        "(numpy.ascontiguousarray)")
                             .arg(name));
    int64_t elements = 1;
    for (const QString& d : shape.captured(1).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const qint64 v = d.trimmed().toLongLong(&ok);
        if (!ok || v < 0 || v > std::numeric_limits<int32_t>::max() ||
            int(a.shape.size()) >= kMaxDims)
            return corrupt(
                name,
                QStringLiteral("its shape (%1) is not one Tandem reads").arg(shape.captured(1)));
        a.shape.push_back(v);
        if (v > 0 && elements > kMaxArrayBytes / v)
            return corrupt(name,
                           QStringLiteral("its shape (%1) is too large").arg(shape.captured(1)));
        elements *= v;
    }
    if (a.shape.empty())
        return corrupt(name, QStringLiteral("holds a single number, not an array of samples"));
    const qint64 bytes = elements * a.width;
    if (b.size() - start - headerLen != bytes)
        return corrupt(name, QStringLiteral("holds %1 bytes of data; its shape (%2) of %3 needs "
                                            "%4")
                                 .arg(b.size() - start - headerLen)
                                 .arg(shape.captured(1), a.dtype())
                                 .arg(bytes));
    a.data = b.mid(start + headerLen);
    return a;
}

namespace {

// Element i as a double, whatever the array's dtype.
double valueAt(const NpyArray& a, int64_t i) {
    const char* p = a.data.constData() + i * a.width;
    switch (a.kind) {
    case 'f':
        if (a.width == 2) {
            const quint16 bits = qFromLittleEndian<quint16>(p);
            qfloat16 h;
            std::memcpy(static_cast<void*>(&h), &bits, sizeof h); // its two bytes, bit for bit
            return double(h);
        }
        if (a.width == 4)
            return double(qFromLittleEndian<float>(p));
        return qFromLittleEndian<double>(p);
    case 'i':
        switch (a.width) {
        case 1:
            return double(qint8(*p));
        case 2:
            return double(qFromLittleEndian<qint16>(p));
        case 4:
            return double(qFromLittleEndian<qint32>(p));
        default:
            return double(qFromLittleEndian<qint64>(p));
        }
    default: // u1, b1
        return double(uchar(*p));
    }
}

int64_t integerAt(const NpyArray& a, int64_t i) {
    const char* p = a.data.constData() + i * a.width;
    if (a.kind == 'i' && a.width == 8)
        return qFromLittleEndian<qint64>(p); // exactly, beyond a double's 53 bits
    return int64_t(valueAt(a, i));
}

// The four arrays' bytes, from an .npz archive or a folder of .npy files; the test pair may be
// missing.
Expected<QHash<QString, QByteArray>> readNpz(const QString& path) {
    if (auto st = checkRegularFile(path); !st)
        return st.error();
    int err = 0;
    std::unique_ptr<zip_t, decltype(&zip_discard)> za(
        zip_open(QFile::encodeName(path).constData(), ZIP_RDONLY | ZIP_CHECKCONS, &err),
        &zip_discard);
    if (!za) {
        zip_error_t e;
        zip_error_init_with_code(&e, err);
        const QString why = QString::fromUtf8(zip_error_strerror(&e));
        zip_error_fini(&e);
        return corrupt(path, QStringLiteral("is not a readable .npz (zip) archive: %1").arg(why));
    }
    QHash<QString, QByteArray> out;
    for (const char* key : {"x_train", "y_train", "x_test", "y_test"}) {
        const QByteArray member = QByteArray(key) + ".npy";
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat(za.get(), member.constData(), 0, &st) != 0)
            continue;
        if (!(st.valid & ZIP_STAT_SIZE) || st.size > quint64(kMaxArrayBytes))
            return corrupt(path, QStringLiteral("%1 is larger than %2 bytes")
                                     .arg(QString::fromLatin1(member))
                                     .arg(kMaxArrayBytes));
        std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(
            zip_fopen(za.get(), member.constData(), 0), &zip_fclose);
        QByteArray bytes(qsizetype(st.size), Qt::Uninitialized);
        const zip_int64_t n = f ? zip_fread(f.get(), bytes.data(), st.size) : -1;
        if (n != zip_int64_t(st.size))
            return corrupt(path, QStringLiteral("%1 cannot be read whole: %2")
                                     .arg(QString::fromLatin1(member),
                                          QString::fromUtf8(zip_strerror(za.get()))));
        out.insert(QLatin1String(key), bytes);
    }
    return out;
}

Expected<QHash<QString, QByteArray>> readNpyDir(const QString& dir) {
    if (!QFileInfo(dir).isDir())
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("%1 is not a folder (npy: takes a folder holding "
                                        "x_train.npy and y_train.npy)")
                             .arg(dir));
    QHash<QString, QByteArray> out;
    for (const char* key : {"x_train", "y_train", "x_test", "y_test"}) {
        const QString file = QDir(dir).filePath(QLatin1String(key) + QStringLiteral(".npy"));
        if (!QFileInfo::exists(file))
            continue;
        auto bytes = readRegularFile(file, kMaxArrayBytes);
        if (!bytes)
            return bytes.error();
        out.insert(QLatin1String(key), *bytes);
    }
    return out;
}

// One split from its x and y arrays.
Expected<Dataset> splitOf(const NpyArray& x, const NpyArray& y, bool ids, const QString& what) {
    if (x.count() != y.count())
        return corrupt(
            what,
            QStringLiteral("x holds %1 samples but y holds %2").arg(x.count()).arg(y.count()));
    Dataset d;
    d.sampleShape.assign(x.shape.begin() + 1, x.shape.end());
    d.targetShape.assign(y.shape.begin() + 1, y.shape.end());
    const int64_t nx = x.count() * x.perRow(), ny = y.count() * y.perRow();
    if (ids) {
        d.storage = Dataset::Storage::I64;
        d.i64.resize(size_t(nx));
        for (int64_t i = 0; i < nx; ++i)
            d.i64[size_t(i)] = integerAt(x, i);
    } else {
        d.storage = Dataset::Storage::F32;
        d.f32.resize(size_t(nx));
        for (int64_t i = 0; i < nx; ++i)
            d.f32[size_t(i)] = float(valueAt(x, i));
    }
    if (y.integer()) {
        d.targets = y.shape.size() == 1 ? Dataset::Targets::Class : Dataset::Targets::Ids;
        d.labels.resize(size_t(ny));
        for (int64_t i = 0; i < ny; ++i) {
            d.labels[size_t(i)] = integerAt(y, i);
            if (d.labels[size_t(i)] < 0 &&
                !(d.targets == Dataset::Targets::Ids && d.labels[size_t(i)] == kIgnoredTarget))
                return corrupt(what, QStringLiteral("target %1 of y is %2; class and token ids "
                                                    "must be 0 or more (-100 marks a position "
                                                    "to ignore)")
                                         .arg(i)
                                         .arg(d.labels[size_t(i)]));
        }
    } else {
        d.targets = Dataset::Targets::Values;
        if (d.targetShape.empty())
            d.targetShape = {1}; // one value per sample, as a [B, 1] output gives it
        d.values.resize(size_t(ny));
        for (int64_t i = 0; i < ny; ++i) {
            d.values[size_t(i)] = float(valueAt(y, i));
            if (!std::isfinite(d.values[size_t(i)]))
                return corrupt(what, QStringLiteral("target %1 of y is not finite").arg(i));
        }
        for (int64_t i = 0; i < nx && !ids; ++i)
            if (!std::isfinite(d.f32[size_t(i)]))
                return corrupt(what, QStringLiteral("input value %1 of x is not finite").arg(i));
    }
    return d;
}

// Every fifth sample of `all` is held out for testing.
void holdOut(const Dataset& all, Dataset& train, Dataset& test) {
    for (Dataset* d : {&train, &test}) {
        d->storage = all.storage;
        d->sampleShape = all.sampleShape;
        d->targets = all.targets;
        d->targetShape = all.targetShape;
    }
    const int64_t px = all.sampleSize(), py = all.targetSize();
    for (int64_t i = 0; i < all.count(); ++i) {
        Dataset& dst = (i % 5 == 4) ? test : train;
        if (all.storage == Dataset::Storage::I64)
            dst.i64.insert(dst.i64.end(), all.i64.begin() + i * px, all.i64.begin() + (i + 1) * px);
        else
            dst.f32.insert(dst.f32.end(), all.f32.begin() + i * px, all.f32.begin() + (i + 1) * px);
        if (all.targets == Dataset::Targets::Values)
            dst.values.insert(dst.values.end(), all.values.begin() + i * py,
                              all.values.begin() + (i + 1) * py);
        else
            dst.labels.insert(dst.labels.end(), all.labels.begin() + i * py,
                              all.labels.begin() + (i + 1) * py);
    }
}

// The largest class or token id among the targets.
int largestId(const Dataset& d) {
    int64_t best = -1;
    for (int64_t v : d.labels)
        best = std::max(best, v);
    return int(std::min<int64_t>(best, std::numeric_limits<int>::max() - 1));
}

} // namespace

Expected<DatasetSplits> readArrayDataset(const QString& kind, const QString& body,
                                         const QString& spec) {
    auto opts = parseSpecOptions(body, {QStringLiteral("inputs")}, spec);
    if (!opts)
        return opts.error();
    const QString inputs = opts->values.value(QStringLiteral("inputs"));
    if (!inputs.isEmpty() && inputs != QLatin1String("float") && inputs != QLatin1String("ids"))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1: inputs= takes float or ids").arg(spec));
    auto files = kind == QLatin1String("npz") ? readNpz(opts->file) : readNpyDir(opts->file);
    if (!files)
        return files.error();
    const bool hasTest = files->contains(QStringLiteral("x_test"));
    for (const char* key : {"x_train", "y_train"})
        if (!files->contains(QLatin1String(key)))
            return corrupt(opts->file, QStringLiteral("holds no %1 array").arg(QLatin1String(key)));
    if (hasTest != files->contains(QStringLiteral("y_test")))
        return corrupt(opts->file, QStringLiteral("holds one of x_test and y_test without the "
                                                  "other"));
    // Errors name the file an array is in: DIR/x_train.npy, or FILE.npz (x_train.npy).
    const auto where = [&](const QString& key) {
        return kind == QLatin1String("npy")
                   ? QDir(opts->file).filePath(key + QStringLiteral(".npy"))
                   : QStringLiteral("%1 (%2.npy)").arg(opts->file, key);
    };
    QHash<QString, NpyArray> arrays;
    for (auto it = files->constBegin(); it != files->constEnd(); ++it) {
        auto a = parseNpy(it.value(), where(it.key()));
        if (!a)
            return a.error();
        arrays.insert(it.key(), std::move(*a));
    }
    const NpyArray& x = arrays[QStringLiteral("x_train")];
    // Token ids are integers wider than a byte; bytes and booleans are pixels or flags.
    const bool ids = inputs.isEmpty() ? (x.integer() && x.width > 1 && x.kind != 'b')
                                      : inputs == QLatin1String("ids");
    if (ids && !x.integer())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1: inputs=ids needs integer x_train, not %2")
                             .arg(opts->file, x.dtype()));
    DatasetSplits s;
    s.spec = spec;
    s.kind = kind;
    const auto pair = [&](const char* x, const char* y) {
        return QStringLiteral("%1 and %2").arg(where(QLatin1String(x)), where(QLatin1String(y)));
    };
    auto train = splitOf(x, arrays[QStringLiteral("y_train")], ids, pair("x_train", "y_train"));
    if (!train)
        return train.error();
    if (hasTest) {
        auto test = splitOf(arrays[QStringLiteral("x_test")], arrays[QStringLiteral("y_test")], ids,
                            pair("x_test", "y_test"));
        if (!test)
            return test.error();
        if (test->sampleShape != train->sampleShape || test->targetShape != train->targetShape ||
            test->targets != train->targets)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1: the test arrays' shapes or dtypes differ from "
                                            "the training arrays'")
                                 .arg(opts->file));
        s.train = std::move(*train);
        s.test = std::move(*test);
    } else {
        holdOut(*train, s.train, s.test);
    }
    if (s.train.count() == 0 || s.test.count() == 0)
        return corrupt(opts->file, QStringLiteral("holds too few samples to train and test on"));
    if (s.train.targets != Dataset::Targets::Values)
        s.numClasses = std::max(largestId(s.train), largestId(s.test)) + 1;
    s.description = QStringLiteral("%1 %2 (%3 samples of %4 → %5%6)")
                        .arg(kind, QFileInfo(opts->file).fileName())
                        .arg(s.train.count() + s.test.count())
                        .arg(x.dtype(), arrays[QStringLiteral("y_train")].dtype(),
                             hasTest ? QString() : QStringLiteral("; every fifth held out"));
    s.finish();
    return s;
}

} // namespace tandem
