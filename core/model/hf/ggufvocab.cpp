// The tokenizer half of a GGUF export (ggufexport.h): a Hugging Face folder's tokenizer.json and
// tokenizer_config.json as the tokenizer.ggml.* keys llama.cpp reads. Byte-level BPE is written
// as llama.cpp's "gpt2" model: the vocabulary in id order (padded to the model's vocab_size with
// unused [PADn] entries, as llama.cpp's converter pads), each token's type (added special tokens
// are control tokens, other added tokens user-defined), the merges, and the pre-tokenizer under
// the name llama.cpp gives its splitting expression. SentencePiece-style BPE over "▁" with byte
// fallback (Llama 2, Mistral, Gemma) is written as llama.cpp's "llama" model: the same tokens,
// the byte tokens typed as such, and a score for each token in place of the merges, higher the
// earlier its merge comes (llama.cpp's SentencePiece tokenizer joins the pair whose result
// scores highest).
#include "model/hf/ggufvocab.h"

#include "common/files.h"
#include "formats/tokenizer.h"

#include <QDir>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>

namespace tandem {

namespace {

// llama.cpp's token types (gguf-py's TokenType).
constexpr int64_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6;

// The splitting expressions of the byte-level tokenizers llama.cpp knows, by the name its
// vocabulary loader gives them (llama-vocab.cpp).
struct PreTokenizer {
    const char* name;
    const char* regex;
};
constexpr PreTokenizer kPreTokenizers[] = {
    {"llama-bpe",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    {"qwen2",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    // GPT-4o's o200k (Phi-4-mini, Llama 4).
    {"gpt-4o",
     R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
};

// The spellings llama.cpp's vocabulary loader takes for the end of a turn (llama-vocab.cpp): it
// makes any token so spelled a control token, whatever the file says, and warns when it has to.
// Such a token is written as a control token here, which is what llama.cpp then holds: Qwen's
// vocabulary has "</s>" as an ordinary token.
constexpr const char* kEndOfGeneration[] = {"<|eot_id|>",
                                            "<|im_end|>",
                                            "<|end|>",
                                            "<|return|>",
                                            "<|call|>",
                                            "<|flush|>",
                                            "<|calls|>",
                                            "<end_of_turn>",
                                            "<|endoftext|>",
                                            "</s>",
                                            "<|eom_id|>",
                                            "<EOT>",
                                            "_<EOT>",
                                            "[EOT]",
                                            "[EOS]",
                                            "<|end_of_text|>",
                                            "<end_of_utterance>",
                                            "<eos>",
                                            "<turn|>",
                                            "<|tool_response>"};

// Added tokens that llama.cpp's converter treats as control tokens though the file does not mark
// them special.
bool looksSpecial(const QString& t) {
    if (t == QLatin1String("<pad>") || t == QLatin1String("<mask>") ||
        t == QLatin1String("<2mass>") || t == QLatin1String("[@BOS@]"))
        return true;
    return (t.startsWith(QLatin1String("<|")) && t.endsWith(QLatin1String("|>"))) ||
           (t.startsWith(QStringLiteral("<\uFF5C")) && t.endsWith(QStringLiteral("\uFF5C>")));
}

Error refuse(const QString& file, const QString& why) {
    return makeError(ErrorCode::Unsupported,
                     QStringLiteral("%1 cannot be written to GGUF: %2").arg(file, why));
}

// The pre-tokenizer's llama.cpp name, or an error naming what it is.
Expected<QString> preTokenizerName(const QJsonObject& pre, const QString& file) {
    const QString type = pre.value(QLatin1String("type")).toString();
    if (type == QLatin1String("ByteLevel") && pre.value(QLatin1String("use_regex")).toBool(true))
        return QStringLiteral("gpt-2");
    if (type == QLatin1String("Sequence")) {
        const QJsonArray parts = pre.value(QLatin1String("pretokenizers")).toArray();
        if (parts.size() == 2) {
            const QJsonObject split = parts[0].toObject(), bytes = parts[1].toObject();
            const QString regex = split.value(QLatin1String("pattern"))
                                      .toObject()
                                      .value(QLatin1String("Regex"))
                                      .toString();
            if (split.value(QLatin1String("type")).toString() == QLatin1String("Split") &&
                bytes.value(QLatin1String("type")).toString() == QLatin1String("ByteLevel")) {
                for (const PreTokenizer& p : kPreTokenizers)
                    if (regex == QLatin1String(p.regex))
                        return QString::fromLatin1(p.name);
                return refuse(file, QStringLiteral("its pre-tokenizer splits with an expression "
                                                   "llama.cpp has no name for (%1…)")
                                        .arg(regex.left(40)));
            }
        }
    }
    return refuse(file, QStringLiteral("its pre-tokenizer (%1) is not one llama.cpp reads as "
                                       "byte-level BPE")
                            .arg(type.isEmpty() ? QStringLiteral("none") : type));
}

// A merge as "left right", from either form tokenizer.json writes it in.
QByteArray mergeText(const QJsonValue& m) {
    if (m.isString())
        return m.toString().toUtf8();
    const QJsonArray pair = m.toArray();
    return (pair.at(0).toString() + QLatin1Char(' ') + pair.at(1).toString()).toUtf8();
}

// SentencePiece-style BPE's scores: a token made by the merge of rank r scores -r (its earliest
// merge, where several make it), one no merge makes scores below them all.
std::vector<double> mergeScores(const QJsonObject& model, const std::vector<QByteArray>& tokens) {
    QHash<QByteArray, qsizetype> idOf;
    idOf.reserve(qsizetype(tokens.size()));
    for (size_t i = tokens.size(); i-- > 0;) // the first of equal spellings last, so it stays
        idOf.insert(tokens[i], qsizetype(i));
    const QJsonArray merges = model.value(QLatin1String("merges")).toArray();
    std::vector<double> scores(tokens.size(), -double(merges.size()) - 1);
    QByteArray result;
    for (qsizetype rank = merges.size() - 1; rank >= 0; --rank) {
        const QJsonValue m = merges.at(rank);
        if (m.isArray()) {
            const QJsonArray pair = m.toArray();
            result = pair.at(0).toString().toUtf8() + pair.at(1).toString().toUtf8();
        } else {
            result = m.toString().toUtf8();
            const qsizetype space = result.indexOf(' ');
            if (space < 0)
                continue;
            result.remove(space, 1);
        }
        if (auto it = idOf.constFind(result); it != idOf.constEnd())
            scores[size_t(it.value())] = -double(rank);
    }
    return scores;
}

// The "▁" before the text: a Prepend normalizer (Llama 2), or Metaspace's prefix.
bool addsSpacePrefix(const QJsonObject& root) {
    const QByteArray normalizer =
        QJsonDocument(root.value(QLatin1String("normalizer")).toObject()).toJson();
    const QJsonObject pre = root.value(QLatin1String("pre_tokenizer")).toObject();
    return normalizer.contains("\"Prepend\"") ||
           (pre.value(QLatin1String("type")).toString() == QLatin1String("Metaspace") &&
            pre.value(QLatin1String("prepend_scheme")).toString() != QLatin1String("never"));
}

// The BOS, EOS and padding tokens, whether a BOS or EOS is added, and the chat template.
void addSpecialTokens(GgufVocab& v, const Tokenizer& t, const QString& dir) {
    v.bos = t.bos();
    v.eos = t.eos();
    v.addBos = !t.prefixTokens().empty();
    v.addEos = !t.suffixTokens().empty();
    v.chatTemplate = t.chatTemplate();
    auto config = readJsonObjectFile(QDir(dir).filePath(QStringLiteral("tokenizer_config.json")),
                                     QStringLiteral("tokenizer_config.json"));
    if (config) {
        const QJsonValue pad = config->value(QLatin1String("pad_token"));
        const QString padText = pad.isObject()
                                    ? pad.toObject().value(QLatin1String("content")).toString()
                                    : pad.toString();
        if (!padText.isEmpty())
            v.pad = t.idOf(padText);
    }
}

bool isByteToken(const QByteArray& t) {
    static const QRegularExpression re(QStringLiteral("^<0x[0-9A-F]{2}>$"));
    return t.size() == 6 && re.match(QString::fromLatin1(t)).hasMatch();
}

} // namespace

Expected<GgufVocab> ggufVocabOf(const QString& dir, int64_t vocabSize) {
    const QString file = QDir(dir).filePath(QStringLiteral("tokenizer.json"));
    // The tokenizer reads tokenizer.json once, and hands back the parsed file for the rest.
    QJsonObject root;
    auto tokenizer = Tokenizer::fromFolder(dir, &root);
    if (!tokenizer)
        return makeError(tokenizer.error().code,
                         QStringLiteral("a GGUF file needs the model's tokenizer: %1")
                             .arg(tokenizer.error().message));
    if (root.isEmpty())
        return refuse(dir,
                      QStringLiteral("it has SentencePiece's tokenizer.model and no "
                                     "tokenizer.json, which a GGUF export reads (transformers' "
                                     "AutoTokenizer.from_pretrained(folder).save_pretrained("
                                     "folder) writes one)"));
    const QJsonObject model = root.value(QLatin1String("model")).toObject();
    if (model.value(QLatin1String("type")).toString() != QLatin1String("BPE"))
        return refuse(file, QStringLiteral("its model is %1, and Tandem writes BPE tokenizers to "
                                           "GGUF")
                                .arg(model.value(QLatin1String("type")).toString()));
    const bool sentencePiece = model.value(QLatin1String("byte_fallback")).toBool();

    GgufVocab v;
    if (sentencePiece) {
        v.model = QStringLiteral("llama");
        v.addSpacePrefix = addsSpacePrefix(root);
    } else {
        v.model = QStringLiteral("gpt2");
        auto pre = preTokenizerName(root.value(QLatin1String("pre_tokenizer")).toObject(), file);
        if (!pre)
            return pre.error();
        v.pre = *pre;
    }
    // Each id's spelling; an id no entry names is padding.
    std::vector<QByteArray> byId(size_t(std::max<int64_t>(vocabSize, 0)));
    std::vector<bool> named(byId.size(), false);
    const QJsonObject vocab = model.value(QLatin1String("vocab")).toObject();
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        const int64_t id = it.value().toInteger(-1);
        if (id < 0 || id >= vocabSize)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 has token id %2, outside the model's vocabulary "
                                            "of %3 (config.json's vocab_size)")
                                 .arg(file)
                                 .arg(id)
                                 .arg(vocabSize));
        byId[size_t(id)] = it.key().toUtf8();
        named[size_t(id)] = true;
    }
    std::vector<int64_t> addedType(byId.size(), 0);
    for (const QJsonValue& a : root.value(QLatin1String("added_tokens")).toArray()) {
        const QJsonObject o = a.toObject();
        const int64_t id = o.value(QLatin1String("id")).toInteger(-1);
        // Gemma 3's <image_soft_token> lies past the 262,144 ids its model scores: no text the
        // model writes holds it, and GGUF's vocabulary has the model's size.
        if (id < 0 || id >= vocabSize)
            continue;
        const QString content = o.value(QLatin1String("content")).toString();
        byId[size_t(id)] = content.toUtf8();
        named[size_t(id)] = true;
        addedType[size_t(id)] = o.value(QLatin1String("special")).toBool() || looksSpecial(content)
                                    ? kControl
                                    : kUserDefined;
    }
    QSet<QByteArray> endOfGeneration;
    for (const char* eog : kEndOfGeneration)
        endOfGeneration.insert(QByteArray(eog));
    v.tokens.reserve(byId.size());
    v.types.reserve(byId.size());
    for (size_t i = 0; i < byId.size(); ++i) {
        if (!named[i]) {
            v.tokens.push_back(QByteArray("[PAD") + QByteArray::number(qint64(i)) + ']');
            v.types.push_back(kUnused);
            continue;
        }
        QByteArray& token = byId[i];
        const int64_t added = addedType[i];
        v.types.push_back(added ? added : kNormal);
        if (endOfGeneration.contains(token))
            v.types.back() = kControl;
        if (sentencePiece && !added && isByteToken(token))
            v.types.back() = kByte;
        v.tokens.push_back(std::move(token));
    }
    if (sentencePiece) {
        v.scores = mergeScores(model, v.tokens);
        const QByteArray unk = model.value(QLatin1String("unk_token")).toString().toUtf8();
        for (size_t i = 0; i < v.tokens.size() && !unk.isEmpty(); ++i)
            if (v.tokens[i] == unk) {
                v.types[i] = kUnknown;
                v.unk = int32_t(i);
            }
    } else {
        for (const QJsonValue& m : model.value(QLatin1String("merges")).toArray())
            v.merges.push_back(mergeText(m));
    }
    addSpecialTokens(v, **tokenizer, dir);
    return v;
}

} // namespace tandem
