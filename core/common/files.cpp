#include "common/files.h"

#include "common/failpoint.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStorageInfo>

#if defined(Q_OS_UNIX)
#include <sys/statvfs.h>
#endif

namespace tandem {

namespace {

QString kindOf(const QFileInfo& fi) {
    if (fi.isDir())
        return QStringLiteral("a folder");
    // QFileInfo has no FIFO or device test of its own; what remains is one of those.
    return QStringLiteral("a device, pipe or socket");
}

} // namespace

Status checkRegularFile(const QString& path) {
    const QFileInfo fi(path);
    if (!fi.exists())
        return makeError(ErrorCode::NotFound, QStringLiteral("%1: no such file").arg(path));
    if (!fi.isFile())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 is %2, not a regular file; give a file's path")
                             .arg(path, kindOf(fi)));
    return success();
}

Expected<QByteArray> readRegularFile(const QString& path, qint64 maxBytes) {
    if (auto st = checkRegularFile(path); !st)
        return st.error();
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::Io,
                         QStringLiteral("%1: cannot open: %2").arg(path, f.errorString()));
    const auto tooLarge = [&] {
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1: larger than %2 bytes; refusing it").arg(path).arg(maxBytes));
    };
    if (f.size() > maxBytes)
        return tooLarge();
    // The reported size is only a hint (the file may grow while it is read): read in chunks of
    // what it said is left (a page at least, 4 MB at most), and stop one byte past the cap. A
    // small file takes two reads and no more memory than it holds.
    QByteArray bytes;
    const qint64 reported = f.size();
    bytes.reserve(qsizetype(std::min<qint64>(reported, maxBytes)));
    constexpr qint64 kChunk = qint64(4) << 20;
    for (;;) {
        const qint64 left = std::max<qint64>(4096, reported + 1 - qint64(bytes.size()));
        const qint64 want = std::min({kChunk, left, maxBytes + 1 - qint64(bytes.size())});
        if (want <= 0)
            return tooLarge();
        const qsizetype before = bytes.size();
        bytes.resize(before + qsizetype(want));
        const qint64 got = f.read(bytes.data() + before, want);
        if (got < 0)
            return makeError(ErrorCode::Io,
                             QStringLiteral("%1: read failed: %2").arg(path, f.errorString()));
        bytes.resize(before + qsizetype(got));
        if (got == 0)
            break;
    }
    if (qint64(bytes.size()) > maxBytes)
        return tooLarge();
    return bytes;
}

qint64 megabytesCeil(qint64 bytes) {
    constexpr qint64 kMb = 1000 * 1000;
    return (std::max<qint64>(bytes, 0) + kMb - 1) / kMb;
}

Expected<QJsonObject> readJsonObjectFile(const QString& path, const QString& what) {
    auto bytes = readRegularFile(path, 1 << 20);
    if (!bytes)
        return makeError(bytes.error().code,
                         QStringLiteral("%1 %2").arg(what, bytes.error().message));
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(*bytes, &perr);
    if (!doc.isObject())
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("%1 is not a JSON object: %2").arg(path, perr.errorString()));
    return doc.object();
}

Status writeFileAtomically(const QString& path, const QByteArray& bytes, const char* failpoint) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        return writeError(path, bytes.size(), f.errorString());
    if (TANDEM_FAILPOINT(failpoint))
        return writeError(path, bytes.size(),
                          QStringLiteral("failpoint %1").arg(QLatin1String(failpoint)));
    if (!f.commit())
        return writeError(path, bytes.size(), f.errorString());
    return success();
}

Error writeError(const QString& path, qint64 neededBytes, const QString& platformText) {
    QString dir = QFileInfo(path).absolutePath();
    while (!QFileInfo::exists(dir) && dir != QDir::rootPath())
        dir = QFileInfo(dir).absolutePath();
    const QStorageInfo volume(dir);
    const qint64 free = freeBytesAt(dir);
    // The write failed and the volume cannot hold what was asked: that is the reason, whatever
    // text the platform gave (a failed flush often reports "Unknown error").
    if (free >= 0 && free < std::max<qint64>(neededBytes, 1 << 16))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot write %1: no space left on %2 (needs about %3 MB, "
                                        "%4 MB free); free some space and try again")
                             .arg(path, volume.isValid() ? volume.rootPath() : dir)
                             .arg(megabytesCeil(neededBytes))
                             .arg(free / (1000 * 1000)));
    return makeError(ErrorCode::Io, QStringLiteral("cannot write %1: %2").arg(path, platformText));
}

qint64 freeBytesAt(const QString& dir) {
#if defined(Q_OS_UNIX)
    struct statvfs st;
    if (statvfs(QFile::encodeName(dir).constData(), &st) == 0)
        return qint64(st.f_bavail) * qint64(st.f_frsize);
    return -1;
#else
    const QStorageInfo volume(dir);
    return volume.isValid() ? volume.bytesAvailable() : -1;
#endif
}

} // namespace tandem
