#pragma once

// JSON as the files models come with write it. Qt's parser decodes each string with
// QString::fromUtf8, which takes a U+FEFF at a string's start for a byte-order mark and drops it:
// "\xEF\xBB\xBFx" reads as "x", though the escaped "\ufeff" survives. Tokenizer files hold such
// strings (Gemma's vocabulary has six, Llama 2's one), so every model file and chat line is read
// through parseJson(), which keeps them.

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonParseError>

namespace tandem {

// The document `bytes` holds, with every U+FEFF inside it kept; a byte-order mark before the
// document itself is passed over, as JSON readers do.
QJsonDocument parseJson(const QByteArray& bytes, QJsonParseError* error = nullptr);

} // namespace tandem
