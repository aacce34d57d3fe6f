#include "formats/linedata.h"

#include "formats/json.h"

namespace tandem {

Error lineError(const QString& file, qsizetype line, const QString& what) {
    return makeError(ErrorCode::Corrupt,
                     QStringLiteral("%1, line %2: %3").arg(file).arg(line).arg(what));
}

Status forEachJsonLine(const QByteArray& bytes, const QString& file,
                       const std::function<Status(const QJsonObject&, qsizetype)>& each) {
    qsizetype line = 0;
    for (const QByteArray& raw : bytes.split('\n')) {
        ++line;
        if (raw.trimmed().isEmpty())
            continue;
        QJsonParseError err;
        const QJsonDocument doc = parseJson(raw, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject())
            return lineError(file, line,
                             QStringLiteral("is not a JSON object (%1)")
                                 .arg(err.error == QJsonParseError::NoError
                                          ? QStringLiteral("not an object")
                                          : err.errorString()));
        if (auto st = each(doc.object(), line); !st)
            return st;
    }
    return success();
}

qsizetype sharedPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    qsizetype n = 0;
    while (n < qsizetype(a.size()) && n < qsizetype(b.size()) && a[size_t(n)] == b[size_t(n)])
        ++n;
    return n;
}

} // namespace tandem
