// A folder of images, one subfolder per class: `images:DIR[,size=S][,test=DIR][,skip_bad=1]`.
// Each image is decoded once with Qt's image readers (PNG, JPEG, BMP, and WebP where Qt's image
// formats plugin is installed), made RGB, scaled so that its shorter side is S and cut to the
// centre S×S square, and kept as [3, S, S] bytes: every machine then trains on identical
// pixels, shipped decoded, whatever image libraries it has.

#include "common/files.h"
#include "formats/dataset.h"
#include "formats/datasetspec.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>

namespace tandem {

namespace {

constexpr int kDefaultSize = 64;
constexpr int kMaxSize = 1024;
constexpr qint64 kMaxImageBytes = qint64(256) << 20;

const QStringList& imagePatterns() {
    static const QStringList p = {QStringLiteral("*.png"), QStringLiteral("*.jpg"),
                                  QStringLiteral("*.jpeg"), QStringLiteral("*.bmp"),
                                  QStringLiteral("*.webp")};
    return p;
}

struct Folder {
    QStringList classes;
    QList<QStringList> files; // per class, sorted
};

Expected<Folder> listClasses(const QString& dir, const QStringList& known) {
    if (!QFileInfo(dir).isDir())
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("%1 is not a folder (images: takes a folder with one "
                                        "subfolder of images per class)")
                             .arg(dir));
    Folder f;
    f.classes = known.isEmpty() ? QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot,
                                                      QDir::Name | QDir::IgnoreCase)
                                : known;
    if (f.classes.size() < 1)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 has no class folders; put each class's images in a "
                                        "subfolder named after it")
                             .arg(dir));
    for (const QString& c : f.classes) {
        const QDir sub(QDir(dir).filePath(c));
        QStringList files;
        for (const QString& name :
             sub.entryList(imagePatterns(), QDir::Files | QDir::Readable, QDir::Name))
            files << sub.filePath(name);
        if (files.isEmpty() && known.isEmpty())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("class folder %1 holds no PNG, JPEG, BMP or WebP "
                                            "images")
                                 .arg(sub.path()));
        f.files << files;
    }
    if (!known.isEmpty()) {
        const QStringList here =
            QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name | QDir::IgnoreCase);
        for (const QString& c : here)
            if (!known.contains(c))
                return makeError(ErrorCode::Incompatible,
                                 QStringLiteral("%1 has a class folder \"%2\" that the training "
                                                "folder does not have")
                                     .arg(dir, c));
    }
    return f;
}

// The image as [3, size, size] bytes, channel by channel; an empty array when it cannot be read,
// with `why` saying so.
std::vector<uint8_t> decode(const QString& path, int size, QString* why) {
    if (auto st = checkRegularFile(path); !st) {
        *why = st.error().message;
        return {};
    }
    if (QFileInfo(path).size() > kMaxImageBytes) {
        *why = QStringLiteral("%1 is larger than %2 MB").arg(path).arg(kMaxImageBytes >> 20);
        return {};
    }
    QImageReader reader(path);
    reader.setAutoTransform(true); // EXIF orientation, as a photo viewer shows it
    QImage image = reader.read();
    if (image.isNull()) {
        *why = QStringLiteral("%1 cannot be decoded: %2").arg(path, reader.errorString());
        return {};
    }
    image = image.convertToFormat(QImage::Format_RGB888);
    const QImage scaled = image.width() < image.height()
                              ? image.scaledToWidth(size, Qt::SmoothTransformation)
                              : image.scaledToHeight(size, Qt::SmoothTransformation);
    const QImage square =
        scaled.copy((scaled.width() - size) / 2, (scaled.height() - size) / 2, size, size);
    std::vector<uint8_t> out(size_t(3 * size * size));
    for (int y = 0; y < size; ++y) {
        const uchar* row = square.constScanLine(y);
        for (int x = 0; x < size; ++x)
            for (int c = 0; c < 3; ++c)
                out[size_t((c * size + y) * size + x)] = row[3 * x + c];
    }
    return out;
}

struct Decoded {
    Dataset data;
    int skipped = 0;
};

Expected<Decoded> decodeAll(const Folder& f, int size, bool skipBad) {
    Decoded d;
    d.data.storage = Dataset::Storage::U8;
    d.data.sampleShape = {3, size, size};
    for (qsizetype c = 0; c < f.classes.size(); ++c)
        for (const QString& path : f.files[c]) {
            QString why;
            const std::vector<uint8_t> pixels = decode(path, size, &why);
            if (pixels.empty()) {
                if (!skipBad)
                    return makeError(ErrorCode::Corrupt,
                                     why + QStringLiteral("; remove it, or add skip_bad=1 to "
                                                          "the data spec to leave such files "
                                                          "out"));
                ++d.skipped;
                continue;
            }
            d.data.u8.insert(d.data.u8.end(), pixels.begin(), pixels.end());
            d.data.labels.push_back(c);
        }
    return d;
}

} // namespace

Expected<DatasetSplits> readImageDataset(const QString& body, const QString& spec) {
    auto opts = parseSpecOptions(
        body, {QStringLiteral("size"), QStringLiteral("test"), QStringLiteral("skip_bad")}, spec);
    if (!opts)
        return opts.error();
    int size = kDefaultSize;
    if (opts->values.contains(QStringLiteral("size"))) {
        bool ok = false;
        size = opts->values.value(QStringLiteral("size")).toInt(&ok);
        if (!ok || size < 1 || size > kMaxSize)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("dataset spec %1: size= takes pixels from 1 to %2")
                                 .arg(spec)
                                 .arg(kMaxSize));
    }
    const bool skipBad = opts->values.value(QStringLiteral("skip_bad")) == QLatin1String("1");
    auto folder = listClasses(opts->file, {});
    if (!folder)
        return folder.error();
    auto all = decodeAll(*folder, size, skipBad);
    if (!all)
        return all.error();
    DatasetSplits s;
    s.spec = spec;
    s.kind = QStringLiteral("images");
    s.classNames = folder->classes;
    s.numClasses = int(folder->classes.size());
    int skipped = all->skipped;
    const QString testDir = opts->values.value(QStringLiteral("test"));
    if (!testDir.isEmpty()) {
        auto testFolder = listClasses(testDir, folder->classes);
        if (!testFolder)
            return testFolder.error();
        auto test = decodeAll(*testFolder, size, skipBad);
        if (!test)
            return test.error();
        skipped += test->skipped;
        s.train = std::move(all->data);
        s.test = std::move(test->data);
    } else {
        // Every fifth image of each class is held out, so every class is tested.
        const Dataset& a = all->data;
        const int64_t per = a.sampleSize();
        for (Dataset* d : {&s.train, &s.test}) {
            d->storage = Dataset::Storage::U8;
            d->sampleShape = a.sampleShape;
        }
        QList<int> seen(s.numClasses, 0);
        for (int64_t i = 0; i < a.count(); ++i) {
            const int64_t c = a.labels[size_t(i)];
            Dataset& dst = (seen[c]++ % 5 == 4) ? s.test : s.train;
            dst.u8.insert(dst.u8.end(), a.u8.begin() + i * per, a.u8.begin() + (i + 1) * per);
            dst.labels.push_back(c);
        }
    }
    if (s.train.count() == 0 || s.test.count() == 0)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 has too few images to train and test on (%2 and %3)")
                             .arg(opts->file)
                             .arg(s.train.count())
                             .arg(s.test.count()));
    s.description =
        QStringLiteral("images in %1 (%2 classes, %3×%3%4%5)")
            .arg(opts->file)
            .arg(s.numClasses)
            .arg(size)
            .arg(testDir.isEmpty() ? QStringLiteral("; every fifth held out")
                                   : QStringLiteral("; test: %1").arg(testDir),
                 skipped > 0 ? QStringLiteral("; %1 unreadable file(s) skipped").arg(skipped)
                             : QString());
    s.finish();
    return s;
}

} // namespace tandem
