// Text for a Hugging Face model, through that model's tokenizer:
//   text:FILE    one document: the file
//   jsonl:FILE   one document per line, its "text" field (field=NAME for another)
//   chat:FILE    one conversation per line, {"messages": [{"role", "content"}, …]}, written
//                with the model's chat template; only the assistant's tokens are trained
// Documents are encoded with the tokenizer's template (a BOS) and joined with its EOS, then
// cut into windows of context + 1 tokens. The tokens are cached by the SHA-256 of the file,
// the tokenizer and the options, so a second run (and a peer, which receives tokens) never
// tokenizes again.

#include "formats/chattemplate.h"
#include "formats/datapreview.h"

#include "formats/dataset.h"
#include "formats/datasetspec.h"
#include "formats/json.h"
#include "formats/linedata.h"
#include "formats/sha256.h"
#include "formats/tokenizer.h"
#include "formats/tokenstream.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <thread>

namespace tandem {

namespace {

constexpr int64_t kDefaultContext = 256;
constexpr qsizetype kChunk = 1 << 20;

// The tokens of a file: documents back to back, each position marked trained or not.
struct Encoded {
    std::vector<int32_t> tokens;
    std::vector<uint8_t> trained;
    std::vector<int64_t> starts; // where each document begins
};

void append(Encoded& e, const std::vector<int32_t>& ids, bool trained) {
    e.tokens.insert(e.tokens.end(), ids.begin(), ids.end());
    e.trained.insert(e.trained.end(), ids.size(), trained ? 1 : 0);
}

// A long text in pieces of about kChunk characters, cut only after "X\n" before a character
// that is not a space: a place where the families' expressions split anyway, so the tokens are
// those of the whole text at once. The pieces are tokenized on every core.
void encodeText(const Tokenizer& tok, const QString& text, Encoded& e) {
    std::vector<std::pair<qsizetype, qsizetype>> pieces;
    for (qsizetype at = 0; at < text.size();) {
        qsizetype end = text.size();
        if (text.size() - at > 2 * kChunk) {
            end = at + kChunk;
            while (end < text.size() - 1 && !(text[end - 1] == QLatin1Char('\n') && end >= 2 &&
                                              !text[end - 2].isSpace() && !text[end].isSpace()))
                ++end;
            if (end >= text.size() - 1) // no place to cut: the rest in one piece
                end = text.size();
        }
        pieces.emplace_back(at, end);
        at = end;
    }
    std::vector<std::vector<int32_t>> ids(pieces.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < pieces.size(); i = next++)
            ids[i] = tok.encode(
                QStringView(text).mid(pieces[i].first, pieces[i].second - pieces[i].first), false,
                pieces[i].first > 0);
    };
    const size_t threads =
        std::min<size_t>(pieces.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread& t : pool)
        t.join();
    append(e, tok.prefixTokens(), true);
    for (const auto& part : ids)
        append(e, part, true);
    append(e, tok.suffixTokens(), true);
}

// The EOS after a document, unless the tokenizer's template put one there already.
void endDocument(const Tokenizer& tok, Encoded& e) {
    if (tok.eos() >= 0 && (e.tokens.empty() || e.tokens.back() != tok.eos()))
        append(e, {tok.eos()}, true);
}

// One conversation: its rendering's tokens, with the assistant's turns marked trained. A turn
// is what rendering it adds after the conversation so far with the generation prompt, so its
// end-of-turn tokens are learnt too.
Status encodeChat(const Tokenizer& tok, const ChatTemplate& tmpl,
                  const std::vector<ChatMessage>& messages, Encoded& e) {
    auto render = [&](size_t n, bool gen) {
        return tmpl.render(std::vector<ChatMessage>(messages.begin(), messages.begin() + long(n)),
                           gen, tok.bosToken(), tok.eosToken());
    };
    auto all = render(messages.size(), false);
    if (!all)
        return all.error();
    const std::vector<int32_t> ids = tok.encode(*all, false);
    std::vector<uint8_t> trained(ids.size(), 0);
    for (size_t i = 0; i < messages.size(); ++i) {
        if (messages[i].role != QLatin1String("assistant"))
            continue;
        auto before = render(i, true);
        auto through = render(i + 1, false);
        if (!before || !through)
            continue;
        const qsizetype from = sharedPrefix(ids, tok.encode(*before, false));
        const qsizetype to = sharedPrefix(ids, tok.encode(*through, false));
        for (qsizetype k = from; k < to; ++k)
            trained[size_t(k)] = 1;
    }
    e.tokens.insert(e.tokens.end(), ids.begin(), ids.end());
    e.trained.insert(e.trained.end(), trained.begin(), trained.end());
    return success();
}

Expected<std::vector<ChatMessage>> messagesOf(const QJsonObject& o, const QString& file,
                                              qsizetype line) {
    const QJsonValue m = o.value(QStringLiteral("messages"));
    if (!m.isArray() || m.toArray().isEmpty())
        return lineError(file, line, QStringLiteral("has no \"messages\" list"));
    std::vector<ChatMessage> out;
    for (const auto& v : m.toArray()) {
        auto msg = chatMessageFromJson(v);
        if (!msg)
            return lineError(file, line, msg.error().message);
        out.push_back(std::move(*msg));
    }
    return out;
}

struct TextOptions {
    QString kind, file, field = QStringLiteral("text");
    bool refuseLong = false;
    int64_t context = kDefaultContext;
    std::shared_ptr<const Tokenizer> tok;
    std::optional<ChatTemplate> tmpl;
    QString templateSource; // part of the cache key
    QString dir;            // the tokenizer's folder
};

// One JSON line's document appended to `e`: a conversation through the chat template (its
// assistant's tokens trained), or the `field` string, every token trained.
Status encodeDocument(const TextOptions& o, const QJsonObject& doc, qsizetype line, Encoded& e) {
    if (o.kind == QLatin1String("chat")) {
        auto messages = messagesOf(doc, o.file, line);
        if (!messages)
            return messages.error();
        if (auto st = encodeChat(*o.tok, *o.tmpl, *messages, e); !st)
            return makeError(
                st.error().code,
                QStringLiteral("%1, line %2: %3").arg(o.file).arg(line).arg(st.error().message));
        return success();
    }
    const QJsonValue v = doc.value(o.field);
    if (!v.isString())
        return lineError(o.file, line,
                         QStringLiteral("has no \"%1\" string (field=%1)").arg(o.field));
    append(e, o.tok->encode(v.toString(), true), true);
    endDocument(*o.tok, e);
    return success();
}

Expected<Encoded> encodeFile(const TextOptions& o, const QByteArray& bytes) {
    Encoded e;
    if (o.kind == QLatin1String("text")) {
        e.starts.push_back(0);
        encodeText(*o.tok, QString::fromUtf8(bytes), e);
        endDocument(*o.tok, e);
        return e;
    }
    const Status read = forEachJsonLine(bytes, o.file, [&](const QJsonObject& doc, qsizetype line) {
        const size_t before = e.tokens.size();
        e.starts.push_back(int64_t(before));
        if (auto st = encodeDocument(o, doc, line, e); !st)
            return st;
        if (o.refuseLong && int64_t(e.tokens.size() - before) > o.context + 1)
            return Status(lineError(o.file, line,
                                    QStringLiteral("holds %1 tokens, more than one window of %2 "
                                                   "(long=refuse); use a larger context= or "
                                                   "long=split")
                                        .arg(e.tokens.size() - before)
                                        .arg(o.context + 1)));
        return success();
    });
    if (!read)
        return read.error();
    if (e.starts.empty())
        return makeError(ErrorCode::Corrupt, QStringLiteral("%1 holds no documents").arg(o.file));
    return e;
}

QString cacheDir() {
    const QString env = qEnvironmentVariable("TANDEM_TOKEN_CACHE");
    return env.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation) +
                               QStringLiteral("/tandem/tokens")
                         : env;
}

QByteArray raw(const void* p, size_t bytes) {
    return QByteArray(static_cast<const char*>(p), qsizetype(bytes));
}

// The cache: KEY.tokens (int32), KEY.trained (a byte a token), KEY.starts (int64), written
// whole or not at all; a damaged entry is encoded again.
std::optional<Encoded> cached(const QString& key) {
    QFile t(cacheDir() + QLatin1Char('/') + key + QStringLiteral(".tokens"));
    QFile m(cacheDir() + QLatin1Char('/') + key + QStringLiteral(".trained"));
    QFile s(cacheDir() + QLatin1Char('/') + key + QStringLiteral(".starts"));
    if (!t.open(QIODevice::ReadOnly) || !m.open(QIODevice::ReadOnly) ||
        !s.open(QIODevice::ReadOnly) || t.size() != m.size() * 4 || s.size() % 8 != 0 ||
        s.size() == 0)
        return std::nullopt;
    Encoded e;
    e.tokens.resize(size_t(m.size()));
    e.trained.resize(size_t(m.size()));
    e.starts.resize(size_t(s.size() / 8));
    if (t.read(reinterpret_cast<char*>(e.tokens.data()), t.size()) != t.size() ||
        m.read(reinterpret_cast<char*>(e.trained.data()), m.size()) != m.size() ||
        s.read(reinterpret_cast<char*>(e.starts.data()), s.size()) != s.size())
        return std::nullopt;
    return e;
}

void keep(const QString& key, const Encoded& e) {
    QDir().mkpath(cacheDir());
    const std::pair<const char*, QByteArray> files[] = {
        {".tokens", raw(e.tokens.data(), e.tokens.size() * 4)},
        {".trained", raw(e.trained.data(), e.trained.size())},
        {".starts", raw(e.starts.data(), e.starts.size() * 8)}};
    for (const auto& [ext, bytes] : files) {
        QSaveFile f(cacheDir() + QLatin1Char('/') + key + QLatin1String(ext));
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
            return; // a cache that cannot be written is only slower
    }
}

// Tokens [from, to) of `e` as a stream of the narrowest type the vocabulary fits.
Expected<std::shared_ptr<const TokenStream>> streamOf(const Encoded& e, int64_t from, int64_t to,
                                                      int32_t vocab, const QString& name) {
    const bool narrow = vocab <= 65536;
    QByteArray bytes(qsizetype((to - from) * (narrow ? 2 : 4)), Qt::Uninitialized);
    for (int64_t i = from; i < to; ++i) {
        const int32_t t = e.tokens[size_t(i)];
        if (narrow) {
            const uint16_t v = uint16_t(t);
            memcpy(bytes.data() + (i - from) * 2, &v, 2);
        } else {
            memcpy(bytes.data() + (i - from) * 4, &t, 4);
        }
    }
    return TokenStream::fromBytes(bytes, narrow ? TokenType::U16 : TokenType::U32, name);
}

Dataset windowsOf(std::shared_ptr<const TokenStream> stream, int64_t context) {
    Dataset d;
    d.storage = Dataset::Storage::Windows;
    d.targets = Dataset::Targets::Ids;
    d.sampleShape = d.targetShape = {context};
    d.windows = stream->size() > context ? (stream->size() - 1) / context : 0;
    d.stream = std::move(stream);
    return d;
}

// Chat: windows of the packed conversations [from, to), each target the next token or -100
// where that token is not the assistant's; windows with nothing to learn are left out.
Dataset maskedWindowsOf(const Encoded& e, int64_t from, int64_t to, int64_t context) {
    Dataset d;
    d.storage = Dataset::Storage::I64;
    d.targets = Dataset::Targets::Ids;
    d.sampleShape = d.targetShape = {context};
    for (int64_t w = from; w + context + 1 <= to; w += context) {
        bool any = false;
        for (int64_t k = 1; k <= context && !any; ++k)
            any = e.trained[size_t(w + k)] != 0;
        if (!any)
            continue;
        for (int64_t k = 0; k < context; ++k) {
            d.i64.push_back(e.tokens[size_t(w + k)]);
            d.labels.push_back(e.trained[size_t(w + k + 1)] ? e.tokens[size_t(w + k + 1)]
                                                            : kIgnoredTarget);
        }
    }
    return d;
}

Expected<Encoded> encodeCached(const TextOptions& o, const QString& file) {
    auto read = readTextFile(file);
    if (!read)
        return read.error();
    const QByteArray& bytes = *read;
    Sha256 h;
    h.addData(bytes);
    h.addData(o.tok->fingerprint());
    h.addData(QStringLiteral("%1|%2|%3|")
                  .arg(o.kind, o.field)
                  .arg(o.refuseLong ? o.context : 0)
                  .toUtf8());
    h.addData(o.templateSource.toUtf8());
    const QString key = QString::fromLatin1(h.result().toHex());
    if (auto hit = cached(key))
        return *hit;
    TextOptions one = o;
    one.file = file;
    auto e = encodeFile(one, bytes);
    if (e)
        keep(key, *e);
    return e;
}

// The chat template: the spec's template=FILE, else the tokenizer's.
Status readTemplate(TextOptions& o, const QString& file, const QString& dir) {
    QString name;
    auto read = specTemplateSource(*o.tok, file, dir, &name);
    if (!read)
        return read.error();
    const QString source = *read;
    if (source.isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 has no chat_template, so chat: cannot write its "
                                        "conversations; give one with template=FILE (a "
                                        "Jinja file) or use jsonl:")
                             .arg(name));
    auto t = ChatTemplate::parse(source, name);
    if (!t)
        return t.error();
    o.tmpl = *t;
    o.templateSource = source;
    return success();
}

// The ids a model must score for this text: the model's vocabulary, and any added token past
// its end that the text uses (not added tokens the text never holds: Gemma 3's
// <image_soft_token> is 262144 beside a model of 262,144 ids).
int idsToScore(const Tokenizer& tok, const Encoded& train, const Encoded& test) {
    int n = tok.modelVocabSize();
    for (const Encoded* e : {&train, &test})
        for (int32_t id : e->tokens)
            n = std::max(n, id + 1);
    return n;
}

// A text kind's spec read whole: its options, its tokenizer, and for chat its template; `test`
// receives the test=FILE it names.
Expected<TextOptions> textOptionsOf(const QString& kind, const QString& body, const QString& spec,
                                    const QString& tokenizerDir, QString* test) {
    auto opts = parseSpecOptions(body,
                                 {QStringLiteral("context"), QStringLiteral("test"),
                                  QStringLiteral("field"), QStringLiteral("long"),
                                  QStringLiteral("tokenizer"), QStringLiteral("template")},
                                 spec);
    if (!opts)
        return opts.error();
    TextOptions o;
    o.kind = kind;
    o.file = opts->file;
    if (opts->values.contains(QStringLiteral("field")))
        o.field = opts->values.value(QStringLiteral("field"));
    const QString lng = opts->values.value(QStringLiteral("long"), QStringLiteral("split"));
    if (lng != QLatin1String("split") && lng != QLatin1String("refuse"))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1: long= takes split or refuse").arg(spec));
    o.refuseLong = lng == QLatin1String("refuse");
    auto context = specContext(*opts, spec, kDefaultContext);
    if (!context)
        return context.error();
    o.context = *context;
    QString dir;
    auto tok = specTokenizer(*opts, spec, tokenizerDir, &dir);
    if (!tok)
        return tok.error();
    o.tok = *tok;
    o.dir = dir;
    if (kind == QLatin1String("chat"))
        if (auto st = readTemplate(o, opts->values.value(QStringLiteral("template")), dir); !st)
            return st.error();
    if (test)
        *test = opts->values.value(QStringLiteral("test"));
    return o;
}

} // namespace

Expected<DatasetSplits> readTextDataset(const QString& kind, const QString& body,
                                        const QString& spec, const QString& tokenizerDir) {
    QString testFile;
    auto read = textOptionsOf(kind, body, spec, tokenizerDir, &testFile);
    if (!read)
        return read.error();
    const TextOptions& o = *read;
    auto all = encodeCached(o, o.file);
    if (!all)
        return all.error();
    DatasetSplits s;
    s.spec = spec;
    s.kind = kind;
    std::optional<Encoded> test;
    int64_t cut = int64_t(all->tokens.size());
    if (!testFile.isEmpty()) {
        auto t = encodeCached(o, testFile);
        if (!t)
            return t.error();
        test = std::move(*t);
    } else if (all->starts.size() >= 2) {
        // The last tenth of the documents (one at least) is held out.
        cut = all->starts[all->starts.size() - std::max<size_t>(1, all->starts.size() / 10)];
    } else {
        cut -= cut / 10;
    }
    const Encoded& testTokens = test ? *test : *all;
    s.numClasses = idsToScore(*o.tok, *all, testTokens);
    const int64_t testFrom = test ? 0 : cut;
    const int64_t testTo = int64_t(testTokens.tokens.size());
    if (kind == QLatin1String("chat")) {
        s.train = maskedWindowsOf(*all, 0, cut, o.context);
        s.test = maskedWindowsOf(testTokens, testFrom, testTo, o.context);
    } else {
        auto train = streamOf(*all, 0, cut, s.numClasses, o.file);
        auto held = streamOf(testTokens, testFrom, testTo, s.numClasses, o.file);
        if (!train || !held)
            return train ? held.error() : train.error();
        s.train = windowsOf(*train, o.context);
        s.test = windowsOf(*held, o.context);
    }
    if (s.train.count() == 0 || s.test.count() == 0)
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1 gives %2 training and %3 test window(s) of %4 tokens%5; "
                           "use more text or a shorter context")
                .arg(o.file)
                .arg(s.train.count())
                .arg(s.test.count())
                .arg(o.context + 1)
                .arg(kind == QLatin1String("chat")
                         ? QStringLiteral(" with assistant tokens to learn")
                         : QString()));
    s.description =
        QStringLiteral("%1 %2 (%3 tokens in %4 document(s) through %5's tokenizer, windows of %6)")
            .arg(kind, QFileInfo(o.file).fileName())
            .arg(all->tokens.size())
            .arg(all->starts.size())
            .arg(QFileInfo(o.dir).fileName())
            .arg(o.context);
    s.finish();
    return s;
}

namespace {

// A document's text in pieces of trained and untrained tokens, each decoded as part of all
// before it, so that a character split across two tokens is whole.
QList<std::pair<QString, bool>> piecesOf(const Tokenizer& tok, const std::vector<int32_t>& ids,
                                         const std::vector<uint8_t>& trained) {
    QList<std::pair<QString, bool>> pieces;
    qsizetype shown = 0;
    QString before;
    for (size_t from = 0; from < ids.size();) {
        size_t to = from;
        while (to < ids.size() && trained[to] == trained[from])
            ++to;
        const QString upTo = QString::fromUtf8(
            tok.decode(std::vector<int32_t>(ids.begin(), ids.begin() + long(to)), false));
        pieces.append({upTo.mid(shown), trained[from] != 0});
        shown = upTo.size();
        from = to;
    }
    return pieces;
}

// The windows maskedWindowsOf() cuts from `trained` (the packed documents' flags): how many,
// and how many hold no trained token.
std::pair<int64_t, int64_t> windowsOfFlags(const std::vector<uint8_t>& trained, int64_t context) {
    int64_t windows = 0, empty = 0;
    for (int64_t w = 0; w + context + 1 <= int64_t(trained.size()); w += context) {
        ++windows;
        bool any = false;
        for (int64_t k = 1; k <= context && !any; ++k)
            any = trained[size_t(w + k)] != 0;
        empty += any ? 0 : 1;
    }
    return {windows, empty};
}

} // namespace

Expected<DataPreview> previewData(const QString& spec, const QString& tokenizerDir, int documents) {
    const QString kind = spec.section(QLatin1Char(':'), 0, 0);
    if (kind != QLatin1String("chat") && kind != QLatin1String("jsonl"))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("a preview reads chat: and jsonl: data, not %1").arg(spec));
    auto read = textOptionsOf(kind, spec.section(QLatin1Char(':'), 1), spec, tokenizerDir, nullptr);
    if (!read)
        return read.error();
    const TextOptions& o = *read;
    auto bytes = readTextFile(o.file);
    if (!bytes)
        return bytes.error();
    DataPreview p;
    p.kind = kind;
    p.context = o.context;
    std::vector<uint8_t> packed;
    qsizetype line = 0;
    for (const QByteArray& raw : bytes->split('\n')) {
        ++line;
        if (raw.trimmed().isEmpty())
            continue;
        // Each line on its own: one that cannot be read is listed, and the others still are.
        auto doc = jsonLineObject(raw, o.file, line);
        Encoded one;
        const Status read = doc ? encodeDocument(o, *doc, line, one) : Status(doc.error());
        if (!read) {
            p.refused << read.error().message;
            continue;
        }
        const int64_t n = int64_t(one.tokens.size());
        const int64_t start = int64_t(packed.size());
        p.lengths.push_back(n);
        p.longer += n > p.context ? 1 : 0;
        p.cut += n > 0 && start / p.context != (start + n - 1) / p.context ? 1 : 0;
        packed.insert(packed.end(), one.trained.begin(), one.trained.end());
        if (p.first.size() < documents) {
            DataPreview::Document d;
            d.line = line;
            d.tokens = n;
            d.trained = std::count(one.trained.begin(), one.trained.end(), uint8_t(1));
            d.pieces = piecesOf(*o.tok, one.tokens, one.trained);
            p.first << d;
        }
    }
    std::tie(p.windows, p.leftOut) = windowsOfFlags(packed, p.context);
    return p;
}

} // namespace tandem
