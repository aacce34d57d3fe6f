#include "formats/json.h"

namespace tandem {

QJsonDocument parseJson(const QByteArray& bytes, QJsonParseError* error) {
    static const QByteArray kBom("\xEF\xBB\xBF");
    const qsizetype from = bytes.startsWith(kBom) ? kBom.size() : 0;
    if (bytes.indexOf(kBom, from) < 0)
        return QJsonDocument::fromJson(from ? bytes.mid(from) : bytes, error);
    // Outside a string U+FEFF is not JSON at all, so every one left is inside one: written as
    // its escape, Qt keeps it.
    QByteArray escaped = bytes.mid(from);
    escaped.replace(kBom, QByteArrayLiteral("\\ufeff"));
    return QJsonDocument::fromJson(escaped, error);
}

} // namespace tandem
