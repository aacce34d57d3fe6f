#include "formats/linedata.h"

#include "formats/json.h"

#include <QFile>

namespace tandem {

Error lineError(const QString& file, qsizetype line, const QString& what) {
    return makeError(ErrorCode::Corrupt,
                     QStringLiteral("%1, line %2: %3").arg(file).arg(line).arg(what));
}

qsizetype invalidUtf8Line(const QByteArray& b) {
    const auto* p = reinterpret_cast<const uchar*>(b.constData());
    const qsizetype n = b.size();
    qsizetype line = 1;
    for (qsizetype i = 0; i < n;) {
        const uchar c = p[i];
        int more = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
        if (more < 0 || (more > 0 && c < 0xC2 && more == 1) || i + more >= n + (more == 0))
            return line;
        for (int k = 1; k <= more; ++k)
            if (i + k >= n || (p[i + k] & 0xC0) != 0x80)
                return line;
        if (c == '\n')
            ++line;
        i += more + 1;
    }
    return 0;
}

Expected<QByteArray> readTextFile(const QString& file) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("%1 cannot be read: %2").arg(file, f.errorString()));
    QByteArray bytes = f.readAll();
    if (bytes.trimmed().isEmpty())
        return makeError(ErrorCode::Corrupt, QStringLiteral("%1 is empty").arg(file));
    if (const qsizetype line = invalidUtf8Line(bytes))
        return lineError(file, line, QStringLiteral("is not valid UTF-8; save the file as UTF-8"));
    return bytes;
}

Status forEachJsonLine(const QByteArray& bytes, const QString& file,
                       const std::function<Status(const QJsonObject&, qsizetype)>& each) {
    qsizetype line = 0;
    for (const QByteArray& raw : bytes.split('\n')) {
        ++line;
        if (raw.trimmed().isEmpty())
            continue;
        auto doc = jsonLineObject(raw, file, line);
        if (!doc)
            return doc.error();
        if (auto st = each(*doc, line); !st)
            return st;
    }
    return success();
}

Expected<QJsonObject> jsonLineObject(const QByteArray& raw, const QString& file, qsizetype line) {
    QJsonParseError err;
    const QJsonDocument doc = parseJson(raw, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return lineError(file, line,
                         QStringLiteral("is not a JSON object (%1)")
                             .arg(err.error == QJsonParseError::NoError
                                      ? QStringLiteral("not an object")
                                      : err.errorString()));
    return doc.object();
}

qsizetype sharedPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    qsizetype n = 0;
    while (n < qsizetype(a.size()) && n < qsizetype(b.size()) && a[size_t(n)] == b[size_t(n)])
        ++n;
    return n;
}

} // namespace tandem
