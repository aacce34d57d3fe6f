// Reading tokenizer.json into the pieces of tokenizerparts.h, and running them: added tokens
// first, then per stretch between them the normalizers, the pre-tokenizers and BPE; the
// post-processor's tokens around the whole; the decoders on the way back.

#include "formats/tokenizer.h"

#include "common/files.h"
#include "formats/json.h"

#include "formats/sentencepiece.h"
#include "formats/sha256.h"
#include "formats/tokenizerparts.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace tandem {

namespace {

constexpr qsizetype kCachedWordLength = 64;
// What a model folder's tokenizer files may hold: Gemma 3's tokenizer.json is 33 MB, the
// settings files a few kilobytes.
constexpr qint64 kMaxTokenizerBytes = qint64(256) << 20;
constexpr qint64 kMaxConfigBytes = qint64(16) << 20;

QString typeOf(const QJsonObject& o) {
    return o.value(QStringLiteral("type")).toString();
}

[[noreturn]] void unsupported(const QString& part, const QJsonObject& o) {
    refuse(QStringLiteral("its %1 \"%2\" is not one Tandem implements").arg(part, typeOf(o)));
}

// A "pattern" of Split, Replace: {"String": "..."} or {"Regex": "..."}.
QRegularExpression patternOf(const QJsonObject& o, const QString& part) {
    const QJsonObject p = o.value(QStringLiteral("pattern")).toObject();
    QString re;
    if (p.contains(QStringLiteral("String")))
        re = QRegularExpression::escape(p.value(QStringLiteral("String")).toString());
    else if (p.contains(QStringLiteral("Regex")))
        re = p.value(QStringLiteral("Regex")).toString();
    else
        refuse(QStringLiteral("its %1 has no pattern String or Regex").arg(part));
    QRegularExpression r(re, QRegularExpression::UseUnicodePropertiesOption);
    if (!r.isValid())
        refuse(QStringLiteral("its %1 pattern %2 is not a regular expression Tandem can use: %3")
                   .arg(part, re, r.errorString()));
    r.optimize();
    return r;
}

// ---- Normalizers ---------------------------------------------------------------------------

void addNormalizer(const QJsonObject& o, std::vector<Normalizer>& out) {
    const QString t = typeOf(o);
    static const QHash<QString, QString::NormalizationForm> forms{
        {QStringLiteral("NFC"), QString::NormalizationForm_C},
        {QStringLiteral("NFD"), QString::NormalizationForm_D},
        {QStringLiteral("NFKC"), QString::NormalizationForm_KC},
        {QStringLiteral("NFKD"), QString::NormalizationForm_KD}};
    if (forms.contains(t)) {
        const auto form = forms.value(t);
        out.push_back({[form](QString& s) { s = s.normalized(form); }});
    } else if (t == QLatin1String("Lowercase")) {
        out.push_back({[](QString& s) { s = s.toLower(); }});
    } else if (t == QLatin1String("Prepend")) {
        const QString p = o.value(QStringLiteral("prepend")).toString();
        out.push_back({[p](QString& s) {
                           if (!s.isEmpty())
                               s.prepend(p);
                       },
                       true});
    } else if (t == QLatin1String("Replace")) {
        const QRegularExpression re = patternOf(o, QStringLiteral("normalizer Replace"));
        const QString content = o.value(QStringLiteral("content")).toString();
        out.push_back({[re, content](QString& s) { s.replace(re, content); }});
    } else if (t == QLatin1String("Strip")) {
        const bool left = o.value(QStringLiteral("strip_left")).toBool(true);
        const bool right = o.value(QStringLiteral("strip_right")).toBool(true);
        out.push_back({[left, right](QString& s) {
            qsizetype a = 0, b = s.size();
            while (left && a < b && s.at(a).isSpace())
                ++a;
            while (right && b > a && s.at(b - 1).isSpace())
                --b;
            s = s.mid(a, b - a);
        }});
    } else if (t == QLatin1String("Sequence")) {
        for (const auto& n : o.value(QStringLiteral("normalizers")).toArray())
            addNormalizer(n.toObject(), out);
    } else {
        unsupported(QStringLiteral("normalizer"), o);
    }
}

// ---- Pre-tokenizers ------------------------------------------------------------------------

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior behaviorOf(const QJsonObject& o) {
    static const QHash<QString, Behavior> names{
        {QStringLiteral("Removed"), Behavior::Removed},
        {QStringLiteral("Isolated"), Behavior::Isolated},
        {QStringLiteral("MergedWithPrevious"), Behavior::MergedWithPrevious},
        {QStringLiteral("MergedWithNext"), Behavior::MergedWithNext},
        {QStringLiteral("Contiguous"), Behavior::Contiguous}};
    const QString b = o.value(QStringLiteral("behavior")).toString();
    if (!names.contains(b))
        refuse(QStringLiteral("its pre-tokenizer Split's behavior \"%1\" is not one Tandem "
                              "implements")
                   .arg(b));
    return names.value(b);
}

// Splits each piece at the matches of `re`, as Hugging Face's Split does; with `invert` the
// stretches between matches are what the behaviour applies to.
void splitPieces(std::vector<Piece>& pieces, const QRegularExpression& re, Behavior behavior,
                 bool invert) {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (const Piece& p : pieces) {
        // (start, end, isMatch) over the whole piece
        std::vector<std::tuple<qsizetype, qsizetype, bool>> parts;
        qsizetype at = 0;
        auto it = re.globalMatch(p.text);
        while (it.hasNext()) {
            const auto m = it.next();
            if (m.capturedLength() == 0)
                continue;
            if (m.capturedStart() > at)
                parts.emplace_back(at, m.capturedStart(), invert);
            parts.emplace_back(m.capturedStart(), m.capturedEnd(), !invert);
            at = m.capturedEnd();
        }
        if (at < p.text.size())
            parts.emplace_back(at, p.text.size(), invert);
        std::vector<std::pair<qsizetype, qsizetype>> spans;
        bool lastWasMatch = false;
        for (const auto& [a, b, match] : parts) {
            switch (behavior) {
            case Behavior::Removed:
                if (!match)
                    spans.emplace_back(a, b);
                break;
            case Behavior::Isolated:
                spans.emplace_back(a, b);
                break;
            case Behavior::MergedWithPrevious:
                if (match && !spans.empty() && !lastWasMatch)
                    spans.back().second = b;
                else
                    spans.emplace_back(a, b);
                break;
            case Behavior::MergedWithNext:
                break; // below, from the end
            case Behavior::Contiguous:
                if (match && lastWasMatch)
                    spans.back().second = b;
                else
                    spans.emplace_back(a, b);
                break;
            }
            lastWasMatch = match;
        }
        if (behavior == Behavior::MergedWithNext) {
            // A match joins the stretch after it, unless that is a match too.
            bool nextWasMatch = false;
            for (auto r = parts.rbegin(); r != parts.rend(); ++r) {
                const auto& [a, b, match] = *r;
                if (match && !nextWasMatch && !spans.empty())
                    spans.back().first = a;
                else
                    spans.emplace_back(a, b);
                nextWasMatch = match;
            }
            std::reverse(spans.begin(), spans.end());
        }
        for (size_t i = 0; i < spans.size(); ++i)
            out.push_back({p.text.mid(spans[i].first, spans[i].second - spans[i].first),
                           p.atStart && spans[i].first == 0});
    }
    pieces = std::move(out);
}

const QRegularExpression& gpt2Pattern() {
    static const QRegularExpression re = [] {
        QRegularExpression r(QStringLiteral("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
                                            "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"),
                             QRegularExpression::UseUnicodePropertiesOption);
        r.optimize();
        return r;
    }();
    return re;
}

void addPreTokenizer(const QJsonObject& o, std::vector<PreTokenizer>& out) {
    const QString t = typeOf(o);
    if (t == QLatin1String("Sequence")) {
        for (const auto& p : o.value(QStringLiteral("pretokenizers")).toArray())
            addPreTokenizer(p.toObject(), out);
    } else if (t == QLatin1String("ByteLevel")) {
        const bool prefix = o.value(QStringLiteral("add_prefix_space")).toBool(false);
        const bool regex = o.value(QStringLiteral("use_regex")).toBool(true);
        out.push_back([prefix, regex](std::vector<Piece>& pieces) {
            if (prefix)
                for (Piece& p : pieces)
                    if (!p.text.startsWith(QLatin1Char(' ')))
                        p.text.prepend(QLatin1Char(' '));
            if (regex)
                splitPieces(pieces, gpt2Pattern(), Behavior::Isolated, false);
            const auto& map = byteToChar();
            for (Piece& p : pieces) {
                const QByteArray utf8 = p.text.toUtf8();
                std::u32string mapped;
                mapped.reserve(size_t(utf8.size()));
                for (char b : utf8)
                    mapped.push_back(map[uchar(b)]);
                p.text = QString::fromUcs4(mapped.data(), qsizetype(mapped.size()));
            }
        });
    } else if (t == QLatin1String("Split")) {
        const QRegularExpression re = patternOf(o, QStringLiteral("pre-tokenizer Split"));
        const Behavior b = behaviorOf(o);
        const bool invert = o.value(QStringLiteral("invert")).toBool(false);
        out.push_back([re, b, invert](std::vector<Piece>& p) { splitPieces(p, re, b, invert); });
    } else if (t == QLatin1String("Metaspace")) {
        const QString rep = o.value(QStringLiteral("replacement")).toString(QStringLiteral("▁"));
        QString scheme = o.value(QStringLiteral("prepend_scheme")).toString();
        if (scheme.isEmpty())
            scheme = o.value(QStringLiteral("add_prefix_space")).toBool(true)
                         ? QStringLiteral("always")
                         : QStringLiteral("never");
        if (scheme != QLatin1String("always") && scheme != QLatin1String("first") &&
            scheme != QLatin1String("never"))
            refuse(QStringLiteral("its Metaspace prepend_scheme \"%1\" is not one Tandem "
                                  "implements")
                       .arg(scheme));
        const bool split = o.value(QStringLiteral("split")).toBool(true);
        const QRegularExpression at(QRegularExpression::escape(rep));
        out.push_back([rep, scheme, split, at](std::vector<Piece>& pieces) {
            for (Piece& p : pieces) {
                p.text.replace(QLatin1Char(' '), rep);
                if (!p.text.startsWith(rep) && (scheme == QLatin1String("always") ||
                                                (scheme == QLatin1String("first") && p.atStart)))
                    p.text.prepend(rep);
            }
            if (split)
                splitPieces(pieces, at, Behavior::MergedWithNext, false);
        });
    } else if (t == QLatin1String("Digits")) {
        const QRegularExpression re(o.value(QStringLiteral("individual_digits")).toBool(false)
                                        ? QStringLiteral("\\p{N}")
                                        : QStringLiteral("\\p{N}+"));
        out.push_back(
            [re](std::vector<Piece>& p) { splitPieces(p, re, Behavior::Isolated, false); });
    } else if (t == QLatin1String("Whitespace")) {
        const QRegularExpression re(QStringLiteral("\\w+|[^\\w\\s]+"),
                                    QRegularExpression::UseUnicodePropertiesOption);
        out.push_back([re](std::vector<Piece>& p) { splitPieces(p, re, Behavior::Removed, true); });
    } else if (t == QLatin1String("WhitespaceSplit")) {
        const QRegularExpression re(QStringLiteral("\\s+"),
                                    QRegularExpression::UseUnicodePropertiesOption);
        out.push_back(
            [re](std::vector<Piece>& p) { splitPieces(p, re, Behavior::Removed, false); });
    } else {
        unsupported(QStringLiteral("pre-tokenizer"), o);
    }
}

// ---- Decoders ------------------------------------------------------------------------------

void stripEach(std::vector<QByteArray>& tokens, char c, int start, int stop) {
    for (QByteArray& t : tokens) {
        int a = 0, b = int(t.size());
        while (a < start && a < b && t.at(a) == c)
            ++a;
        for (int n = 0; n < stop && b > a && t.at(b - 1) == c; ++n)
            --b;
        t = t.mid(a, b - a);
    }
}

void addDecoder(const QJsonObject& o, std::vector<Decoder>& out) {
    const QString t = typeOf(o);
    if (t == QLatin1String("Sequence")) {
        for (const auto& d : o.value(QStringLiteral("decoders")).toArray())
            addDecoder(d.toObject(), out);
    } else if (t == QLatin1String("ByteLevel")) {
        out.push_back([](std::vector<QByteArray>& tokens) {
            for (QByteArray& tok : tokens) {
                QByteArray bytes;
                for (char32_t c : QString::fromUtf8(tok).toUcs4()) {
                    const int b = byteOfChar(c);
                    if (b >= 0)
                        bytes.append(char(b));
                    else
                        bytes.append(QString::fromUcs4(&c, 1).toUtf8());
                }
                tok = bytes;
            }
        });
    } else if (t == QLatin1String("Metaspace")) {
        const QByteArray rep =
            o.value(QStringLiteral("replacement")).toString(QStringLiteral("▁")).toUtf8();
        QString scheme = o.value(QStringLiteral("prepend_scheme")).toString();
        if (scheme.isEmpty())
            scheme = o.value(QStringLiteral("add_prefix_space")).toBool(true)
                         ? QStringLiteral("always")
                         : QStringLiteral("never");
        const bool strip = scheme != QLatin1String("never");
        out.push_back([rep, strip](std::vector<QByteArray>& tokens) {
            for (size_t i = 0; i < tokens.size(); ++i) {
                tokens[i].replace(rep, " ");
                if (i == 0 && strip && tokens[i].startsWith(' '))
                    tokens[i].remove(0, 1);
            }
        });
    } else if (t == QLatin1String("Replace")) {
        const QJsonObject p = o.value(QStringLiteral("pattern")).toObject();
        if (!p.contains(QStringLiteral("String")))
            refuse(QStringLiteral("its decoder Replace has a Regex pattern, which Tandem does "
                                  "not implement"));
        const QByteArray from = p.value(QStringLiteral("String")).toString().toUtf8();
        const QByteArray to = o.value(QStringLiteral("content")).toString().toUtf8();
        out.push_back([from, to](std::vector<QByteArray>& tokens) {
            for (QByteArray& tok : tokens)
                tok.replace(from, to);
        });
    } else if (t == QLatin1String("ByteFallback")) {
        out.push_back([](std::vector<QByteArray>& tokens) {
            for (QByteArray& tok : tokens) {
                if (tok.size() == 6 && tok.startsWith("<0x") && tok.endsWith('>')) {
                    bool ok = false;
                    const int b = tok.mid(3, 2).toInt(&ok, 16);
                    if (ok)
                        tok = QByteArray(1, char(b));
                }
            }
        });
    } else if (t == QLatin1String("Fuse")) {
        out.push_back([](std::vector<QByteArray>& tokens) {
            QByteArray all;
            for (const QByteArray& tok : tokens)
                all += tok;
            tokens = {all};
        });
    } else if (t == QLatin1String("Strip")) {
        const QString c = o.value(QStringLiteral("content")).toString();
        if (c.size() != 1 || c.at(0).unicode() > 127)
            refuse(QStringLiteral("its decoder Strip strips \"%1\"; Tandem implements one ASCII "
                                  "character")
                       .arg(c));
        const char ch = char(c.at(0).unicode());
        const int start = o.value(QStringLiteral("start")).toInt();
        const int stop = o.value(QStringLiteral("stop")).toInt();
        out.push_back([ch, start, stop](std::vector<QByteArray>& tokens) {
            stripEach(tokens, ch, start, stop);
        });
    } else {
        unsupported(QStringLiteral("decoder"), o);
    }
}

} // namespace

Tokenizer::Tokenizer()
    : m(std::make_unique<TokenizerParts>()) {}
Tokenizer::~Tokenizer() = default;

int32_t Tokenizer::vocabSize() const {
    return int32_t(m->idToToken.size());
}
int32_t Tokenizer::modelVocabSize() const {
    return m->modelVocabSize;
}
const std::vector<int32_t>& Tokenizer::prefixTokens() const {
    return m->prefix;
}
const std::vector<int32_t>& Tokenizer::suffixTokens() const {
    return m->suffix;
}
int32_t Tokenizer::bos() const {
    return m->bos;
}
int32_t Tokenizer::eos() const {
    return m->eos;
}
QString Tokenizer::bosToken() const {
    return m->bosToken;
}
QString Tokenizer::eosToken() const {
    return m->eosToken;
}
QString Tokenizer::chatTemplate() const {
    return m->chatTemplate;
}
QByteArray Tokenizer::fingerprint() const {
    return m->fingerprint;
}
const QString& Tokenizer::name() const {
    return m->name;
}

void AddedTrie::insert(QStringView content, int token) {
    int32_t at = 0;
    for (QChar c : content) {
        auto& next = m_nodes[size_t(at)].next;
        const char16_t u = c.unicode();
        auto it = std::lower_bound(next.begin(), next.end(), u,
                                   [](const auto& e, char16_t v) { return e.first < v; });
        if (it == next.end() || it->first != u) {
            const int32_t node = int32_t(m_nodes.size());
            it = next.insert(it, {u, node});
            m_nodes.emplace_back();
        }
        at = it->second;
    }
    // Of two tokens with one content (the file says both), the first read stays.
    if (m_nodes[size_t(at)].token < 0)
        m_nodes[size_t(at)].token = token;
}

std::pair<int, qsizetype> AddedTrie::longestAt(QStringView text, qsizetype at) const {
    std::pair<int, qsizetype> best{-1, 0};
    int32_t node = 0;
    for (qsizetype i = at; i < text.size(); ++i) {
        const auto& next = m_nodes[size_t(node)].next;
        const char16_t u = text[i].unicode();
        auto it = std::lower_bound(next.begin(), next.end(), u,
                                   [](const auto& e, char16_t v) { return e.first < v; });
        if (it == next.end() || it->first != u)
            break;
        node = it->second;
        if (m_nodes[size_t(node)].token >= 0)
            best = {m_nodes[size_t(node)].token, i + 1 - at};
    }
    return best;
}

namespace {

// A character of \w as Hugging Face's tokenizers (Rust's regex) means it.
bool isWordChar(QChar c) {
    return c.isLetterOrNumber() || c.isMark() || c.category() == QChar::Punctuation_Connector ||
           c.unicode() == 0x200C || c.unicode() == 0x200D;
}

} // namespace

std::vector<AddedSplit> splitAdded(QStringView text, const AddedTrie& trie,
                                   const std::vector<AddedToken>& added) {
    std::vector<AddedSplit> out;
    qsizetype done = 0; // the end of the last token taken
    for (qsizetype i = 0; i < text.size();) {
        const auto [token, length] = trie.longestAt(text, i);
        if (token < 0) {
            ++i;
            continue;
        }
        qsizetype start = i, stop = i + length;
        i = stop; // matches do not overlap, even one passed over
        if (start < done)
            continue; // inside what the last token's rstrip took
        const AddedToken& a = added[size_t(token)];
        if (a.singleWord && ((start > 0 && isWordChar(text[start - 1])) ||
                             (stop < text.size() && isWordChar(text[stop]))))
            continue;
        if (a.lstrip) {
            qsizetype s = start;
            while (s > 0 && text[s - 1].isSpace())
                --s;
            start = std::max(s, done);
        }
        if (a.rstrip)
            while (stop < text.size() && text[stop].isSpace())
                ++stop;
        if (done < start)
            out.push_back({done, start, -1});
        out.push_back({start, stop, token});
        done = stop;
    }
    if (done < text.size())
        out.push_back({done, text.size(), -1});
    return out;
}

int32_t Tokenizer::idOf(const QString& token) const {
    for (const AddedToken& a : m->added)
        if (a.content == token)
            return a.id;
    return m->bpe.vocab.value(token, -1);
}

bool Tokenizer::isSpecial(int32_t id) const {
    const auto it = m->addedById.constFind(id);
    return it != m->addedById.constEnd() && m->added[size_t(*it)].special;
}

std::vector<int32_t> Tokenizer::encode(QStringView text, bool addSpecial, bool continuation) const {
    std::vector<int32_t> out;
    if (addSpecial)
        out = m->prefix;
    QHash<QString, std::vector<int32_t>> cache;
    auto encodeNormalized = [&](const QString& s, bool atStart) {
        std::vector<Piece> pieces{{s, atStart}};
        for (const PreTokenizer& p : m->preTokenizers)
            p(pieces);
        for (const Piece& p : pieces) {
            if (p.text.isEmpty())
                continue;
            if (p.text.size() > kCachedWordLength) {
                m->bpe.encodeWord(p.text, out);
                continue;
            }
            auto hit = cache.constFind(p.text);
            if (hit == cache.constEnd()) {
                std::vector<int32_t> ids;
                m->bpe.encodeWord(p.text, ids);
                hit = cache.insert(p.text, std::move(ids));
            }
            out.insert(out.end(), hit->begin(), hit->end());
        }
    };
    // A stretch between added tokens: normalized, then cut again by the added tokens matched in
    // normalized text, its pieces pre-tokenized and encoded.
    auto encodeStretch = [&](QStringView stretch, bool atStart) {
        QString s = stretch.toString();
        for (const Normalizer& n : m->normalizers)
            if (!(n.prepends && continuation && !atStart && stretch.data() == text.data()))
                n.apply(s);
        if (m->normalizedTrie.empty()) {
            encodeNormalized(s, atStart);
            return;
        }
        for (const AddedSplit& piece : splitAdded(s, m->normalizedTrie, m->added)) {
            if (piece.token >= 0)
                out.push_back(m->added[size_t(piece.token)].id);
            else
                encodeNormalized(s.mid(piece.from, piece.to - piece.from),
                                 atStart && piece.from == 0);
        }
    };
    for (const AddedSplit& piece : splitAdded(text, m->addedTrie, m->added)) {
        if (piece.token >= 0)
            out.push_back(m->added[size_t(piece.token)].id);
        else
            encodeStretch(text.mid(piece.from, piece.to - piece.from),
                          piece.from == 0 && !continuation);
    }
    if (addSpecial)
        out.insert(out.end(), m->suffix.begin(), m->suffix.end());
    return out;
}

QByteArray Tokenizer::decode(const std::vector<int32_t>& ids, bool skipSpecial) const {
    std::vector<QByteArray> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids) {
        if (id < 0 || size_t(id) >= m->idToToken.size() || m->idToToken[size_t(id)].isNull())
            continue;
        if (skipSpecial && isSpecial(id))
            continue;
        tokens.push_back(m->idToToken[size_t(id)].toUtf8());
    }
    if (m->joinWithSpaces)
        return tokens.empty() ? QByteArray()
                              : QByteArrayList(tokens.begin(), tokens.end()).join(' ');
    for (const Decoder& d : m->decoders)
        d(tokens);
    QByteArray all;
    for (const QByteArray& t : tokens)
        all += t;
    return all;
}

namespace detail {

void readModel(const QJsonObject& model, TokenizerParts& p);
void readPostProcessor(const QJsonObject& o, TokenizerParts& p);
void readAddedTokens(const QJsonArray& added, TokenizerParts& p);
void readConfig(const QJsonObject& config, TokenizerParts& p);

} // namespace detail

Expected<std::shared_ptr<const Tokenizer>> Tokenizer::fromJson(const QByteArray& tokenizerJson,
                                                               const QByteArray& config,
                                                               const QString& name,
                                                               QJsonObject* json) {
    QJsonParseError err;
    const QJsonDocument doc = parseJson(tokenizerJson, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is not a JSON object (%2 at byte %3)")
                             .arg(name, err.errorString())
                             .arg(err.offset));
    QJsonObject cfg;
    if (!config.isEmpty()) {
        const QJsonDocument c = parseJson(config, &err);
        if (err.error != QJsonParseError::NoError || !c.isObject())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the tokenizer_config.json beside %1 is not a JSON "
                                            "object (%2 at byte %3)")
                                 .arg(name, err.errorString())
                                 .arg(err.offset));
        cfg = c.object();
    }
    const QJsonObject o = doc.object();
    std::shared_ptr<Tokenizer> t(new Tokenizer);
    TokenizerParts& p = *t->m;
    p.name = name;
    Sha256 h;
    h.addData(tokenizerJson);
    h.addData(config);
    p.fingerprint = h.result().toHex();
    try {
        detail::readModel(o.value(QStringLiteral("model")).toObject(), p);
        p.modelVocabSize = int32_t(p.idToToken.size());
        detail::readAddedTokens(o.value(QStringLiteral("added_tokens")).toArray(), p);
        if (const QJsonValue n = o.value(QStringLiteral("normalizer")); n.isObject())
            addNormalizer(n.toObject(), p.normalizers);
        if (const QJsonValue n = o.value(QStringLiteral("pre_tokenizer")); n.isObject())
            addPreTokenizer(n.toObject(), p.preTokenizers);
        if (const QJsonValue n = o.value(QStringLiteral("post_processor")); n.isObject())
            detail::readPostProcessor(n.toObject(), p);
        if (const QJsonValue n = o.value(QStringLiteral("decoder")); n.isObject())
            addDecoder(n.toObject(), p.decoders);
        else
            p.joinWithSpaces = true;
        detail::readConfig(cfg, p);
    } catch (const TokenizerRefusal& r) {
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 cannot be used: %2").arg(name, r.what));
    }
    if (json)
        *json = o;
    return std::shared_ptr<const Tokenizer>(std::move(t));
}

Expected<std::shared_ptr<const Tokenizer>> Tokenizer::fromFolder(const QString& dir,
                                                                 QJsonObject* json) {
    if (json)
        *json = QJsonObject();
    const QDir d(dir);
    QByteArray config;
    if (const QString c = d.filePath(QStringLiteral("tokenizer_config.json")); QFile::exists(c)) {
        auto bytes = readRegularFile(c, kMaxConfigBytes);
        if (!bytes)
            return bytes.error();
        config = *bytes;
    }
    QFile f(d.filePath(QStringLiteral("tokenizer.json")));
    Expected<std::shared_ptr<const Tokenizer>> t = std::shared_ptr<const Tokenizer>();
    if (f.exists()) {
        auto bytes = readRegularFile(f.fileName(), kMaxTokenizerBytes);
        if (!bytes)
            return bytes.error();
        t = fromJson(*bytes, config, f.fileName(), json);
    } else if (QFile spm(d.filePath(QStringLiteral("tokenizer.model")));
               spm.open(QIODevice::ReadOnly)) {
        // SentencePiece's own file, where a folder has no tokenizer.json: the same tokenizer,
        // described as tokenizer.json (sentencepiece.h). Its BOS and EOS are the model's own
        // unless tokenizer_config.json names others.
        auto model = readSentencePieceModel(spm.read(kMaxSentencePieceBytes + 1), spm.fileName());
        if (!model)
            return model.error();
        QJsonObject cfg = parseJson(config).object();
        for (const auto& [key, piece] : {std::pair{QStringLiteral("bos_token"), model->bosPiece},
                                         std::pair{QStringLiteral("eos_token"), model->eosPiece}})
            if (!cfg.contains(key) && !piece.isEmpty())
                cfg.insert(key, piece);
        t = fromJson(model->tokenizerJson, QJsonDocument(cfg).toJson(QJsonDocument::Compact),
                     spm.fileName());
    } else {
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("%1 cannot be read: %2; a Hugging Face model folder keeps "
                                        "its tokenizer there (or SentencePiece's in "
                                        "tokenizer.model)")
                             .arg(f.fileName(), f.errorString()));
    }
    if (!t || (*t)->eos() >= 0)
        return t;
    // The EOS id a model's generation settings or config name, when the tokenizer's do not.
    for (const char* file : {"generation_config.json", "config.json"}) {
        auto bytes = readRegularFile(d.filePath(QLatin1String(file)), kMaxConfigBytes);
        if (!bytes)
            continue;
        const QJsonValue v = parseJson(*bytes).object().value(QStringLiteral("eos_token_id"));
        const int id = v.isArray() ? v.toArray().first().toInt(-1) : v.toInt(-1);
        if (id >= 0 && id < (*t)->vocabSize()) {
            auto& parts = *const_cast<Tokenizer*>(t->get())->m;
            parts.eos = id;
            parts.eosToken = parts.idToToken[size_t(id)];
            break;
        }
    }
    return t;
}

} // namespace tandem
