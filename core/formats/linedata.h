#pragma once

// What the data kinds read a line at a time share (jsonl:, chat:, preference pairs): one JSON
// object a line, blank lines passed over, every error placed as "FILE, line N: …"; and where a
// conversation's tokens first differ from those of a shorter rendering of it.

#include "common/expected.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

namespace tandem {

// "FILE, line N: WHAT", as a corrupt-data error.
Error lineError(const QString& file, qsizetype line, const QString& what);

// A text file's bytes, refused when it cannot be read, is empty or is not UTF-8 (by its line).
Expected<QByteArray> readTextFile(const QString& file);

// The line of the first byte that is not UTF-8, or 0 when all are.
qsizetype invalidUtf8Line(const QByteArray& b);

// Line `line` of `file` as the JSON object it must hold; refused by its number otherwise.
Expected<QJsonObject> jsonLineObject(const QByteArray& raw, const QString& file, qsizetype line);

// Calls `each` with the object of every line that is not blank, and its number, in order, and
// stops at its first error; a line that is not a JSON object is refused by its number.
Status forEachJsonLine(const QByteArray& bytes, const QString& file,
                       const std::function<Status(const QJsonObject&, qsizetype)>& each);

// How many tokens `a` and `b` share from their start.
qsizetype sharedPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

} // namespace tandem
