#include "formats/prefdata.h"

#include "formats/chattemplate.h"
#include "formats/datasetspec.h"
#include "formats/linedata.h"
#include "formats/tokenizer.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace tandem {

namespace {

// One answer after its prompt: the tokens of both, and where the answer's begin.
struct Written {
    std::vector<int32_t> ids;
    qsizetype from = 0;
};

// A side of a line: its text, or its messages.
struct Side {
    bool present = false;
    bool conversational = false;
    QString text;
    std::vector<ChatMessage> messages;
};

Expected<Side> sideOf(const QJsonObject& o, const char* key, const QString& file, qsizetype line) {
    const QJsonValue v = o.value(QLatin1String(key));
    Side s;
    if (v.isUndefined() || v.isNull())
        return s;
    s.present = true;
    if (v.isString()) {
        s.text = v.toString();
        return s;
    }
    if (!v.isArray())
        return lineError(file, line,
                         QStringLiteral("\"%1\" is neither text nor a list of messages")
                             .arg(QLatin1String(key)));
    s.conversational = true;
    for (const QJsonValue& m : v.toArray()) {
        auto msg = chatMessageFromJson(m);
        if (!msg)
            return lineError(
                file, line,
                QStringLiteral("\"%1\": %2").arg(QLatin1String(key), msg.error().message));
        s.messages.push_back(std::move(*msg));
    }
    return s;
}

bool sameMessage(const ChatMessage& a, const ChatMessage& b) {
    return a.role == b.role && a.content == b.content;
}

// TRL's implicit prompt: conversations given whole, the messages they share first.
void extractPrompt(Side& prompt, Side& chosen, Side& rejected) {
    size_t n = 0;
    while (n < chosen.messages.size() && n < rejected.messages.size() &&
           sameMessage(chosen.messages[n], rejected.messages[n]))
        ++n;
    prompt.present = n > 0;
    prompt.conversational = true;
    prompt.messages.assign(chosen.messages.begin(), chosen.messages.begin() + long(n));
    chosen.messages.erase(chosen.messages.begin(), chosen.messages.begin() + long(n));
    rejected.messages.erase(rejected.messages.begin(), rejected.messages.begin() + long(n));
}

Expected<Written> write(const Tokenizer& tok, const ChatTemplate* tmpl, const Side& prompt,
                        const Side& answer) {
    Written w;
    if (!prompt.conversational) {
        w.ids = tok.encode(prompt.text, false);
        w.from = qsizetype(w.ids.size());
        const std::vector<int32_t> a = tok.encode(answer.text, false);
        w.ids.insert(w.ids.end(), a.begin(), a.end());
        if (tok.eos() >= 0)
            w.ids.push_back(tok.eos());
        return w;
    }
    std::vector<ChatMessage> all = prompt.messages;
    all.insert(all.end(), answer.messages.begin(), answer.messages.end());
    auto asked = tmpl->render(prompt.messages, true, tok.bosToken(), tok.eosToken());
    if (!asked)
        return asked.error();
    auto whole = tmpl->render(all, false, tok.bosToken(), tok.eosToken());
    if (!whole)
        return whole.error();
    w.ids = tok.encode(*whole, false);
    w.from = sharedPrefix(w.ids, tok.encode(*asked, false));
    return w;
}

// What is wrong with a line's sides, or nothing.
QString checkSides(const Side& prompt, const Side& chosen, const Side& rejected) {
    for (const auto& [side, key] : {std::pair{&chosen, "chosen"}, {&rejected, "rejected"}}) {
        if (!side->present)
            return QStringLiteral("has no \"%1\"").arg(QLatin1String(key));
        if (side->conversational != prompt.conversational)
            return QStringLiteral("\"prompt\" and \"%1\" must both be text or both lists of "
                                  "messages")
                .arg(QLatin1String(key));
        if (!side->conversational && side->text.trimmed().isEmpty())
            return QStringLiteral("the %1 answer is empty").arg(QLatin1String(key));
        if (side->conversational &&
            (side->messages.empty() || side->messages.front().role != QLatin1String("assistant")))
            return QStringLiteral("\"%1\" must hold the assistant's answer after the prompt")
                .arg(QLatin1String(key));
        for (const ChatMessage& m : side->messages)
            if (m.content.trimmed().isEmpty())
                return QStringLiteral("the %1 answer is empty").arg(QLatin1String(key));
    }
    if (!prompt.present)
        return QStringLiteral("has no \"prompt\" (or, with messages, no first messages that "
                              "\"chosen\" and \"rejected\" share)");
    return {};
}

// Sequence `w` as one row of a pair: inputs, and targets one token later where the answer is.
void addRow(Dataset& d, const Written& w, int64_t context, int32_t pad) {
    const auto n = int64_t(w.ids.size());
    for (int64_t k = 0; k < context; ++k) {
        d.i64.push_back(k < n - 1 ? w.ids[size_t(k)] : pad);
        const bool counts = k + 1 < n && k + 1 >= int64_t(w.from);
        d.labels.push_back(counts ? w.ids[size_t(k + 1)] : kIgnoredTarget);
    }
}

// One line's pair as the two rows it adds to `d`.
Status readPair(const QJsonObject& o, const QString& file, qsizetype line, const Tokenizer& tok,
                const ChatTemplate* tmpl, int64_t context, Dataset& d) {
    Side sides[3];
    const char* keys[3] = {"prompt", "chosen", "rejected"};
    for (int i = 0; i < 3; ++i) {
        auto s = sideOf(o, keys[i], file, line);
        if (!s)
            return s.error();
        sides[i] = std::move(*s);
    }
    auto& [prompt, chosen, rejected] = sides;
    if (!prompt.present && chosen.conversational && rejected.conversational)
        extractPrompt(prompt, chosen, rejected);
    else if (!prompt.present)
        prompt.conversational = chosen.conversational;
    if (const QString wrong = checkSides(prompt, chosen, rejected); !wrong.isEmpty())
        return lineError(file, line, wrong);
    if (prompt.conversational && !tmpl)
        return lineError(file, line,
                         QStringLiteral("holds messages, but the tokenizer has no chat "
                                        "template to write them with; give one with "
                                        "template=FILE, or write the pair as text"));
    Written rows[2];
    for (int i = 0; i < 2; ++i) {
        auto w = write(tok, tmpl, prompt, sides[i + 1]);
        if (!w)
            return lineError(file, line, w.error().message);
        const auto n = int64_t(w->ids.size());
        if (w->from >= n)
            return lineError(file, line,
                             QStringLiteral("the %1 answer adds no tokens after the prompt")
                                 .arg(QLatin1String(keys[i + 1])));
        if (n > context + 1)
            return lineError(file, line,
                             QStringLiteral("the prompt and the %1 answer are %2 tokens, "
                                            "more than the context of %3 holds (%4 with the "
                                            "first token); use a larger context= or a "
                                            "shorter pair")
                                 .arg(QLatin1String(keys[i + 1]))
                                 .arg(n)
                                 .arg(context)
                                 .arg(context + 1));
        rows[i] = std::move(*w);
    }
    for (const Written& w : rows)
        addRow(d, w, context, std::max(tok.eos(), 0));
    return success();
}

} // namespace

Expected<Dataset> readPreferencePairs(const QByteArray& bytes, const QString& file,
                                      const Tokenizer& tok, const ChatTemplate* tmpl,
                                      int64_t context) {
    Dataset d;
    d.storage = Dataset::Storage::I64;
    d.targets = Dataset::Targets::Ids;
    d.sampleShape = d.targetShape = {2, context};
    const Status read = forEachJsonLine(bytes, file, [&](const QJsonObject& o, qsizetype line) {
        return readPair(o, file, line, tok, tmpl, context, d);
    });
    if (!read)
        return read.error();
    if (d.i64.empty())
        return makeError(ErrorCode::Corrupt, QStringLiteral("%1 holds no pairs").arg(file));
    return d;
}

namespace {

constexpr int64_t kDefaultPairContext = 256;

// The chat template: template=FILE, else the tokenizer's; none when neither has one (a file
// of plain-text pairs needs none, and a conversational line says what is missing).
Expected<std::optional<ChatTemplate>> templateOf(const Tokenizer& tok, const QString& file,
                                                 const QString& dir) {
    QString name;
    auto source = specTemplateSource(tok, file, dir, &name);
    if (!source)
        return source.error();
    if (source->isEmpty())
        return std::optional<ChatTemplate>();
    auto t = ChatTemplate::parse(*source, name);
    if (!t)
        return t.error();
    return std::optional<ChatTemplate>(std::move(*t));
}

// Pairs [from, to) of `d`.
Dataset pairsOf(const Dataset& d, int64_t from, int64_t to) {
    Dataset out = d;
    const int64_t size = d.sampleSize();
    out.i64.assign(d.i64.begin() + from * size, d.i64.begin() + to * size);
    out.labels.assign(d.labels.begin() + from * size, d.labels.begin() + to * size);
    return out;
}

} // namespace

Expected<DatasetSplits> readPreferenceDataset(const QString& body, const QString& spec,
                                              const QString& tokenizerDir) {
    auto opts = parseSpecOptions(body,
                                 {QStringLiteral("context"), QStringLiteral("test"),
                                  QStringLiteral("tokenizer"), QStringLiteral("template")},
                                 spec);
    if (!opts)
        return opts.error();
    auto context = specContext(*opts, spec, kDefaultPairContext);
    if (!context)
        return context.error();
    QString dir;
    auto tok = specTokenizer(*opts, spec, tokenizerDir, &dir);
    if (!tok)
        return tok.error();
    auto tmpl = templateOf(**tok, opts->values.value(QStringLiteral("template")), dir);
    if (!tmpl)
        return tmpl.error();
    const ChatTemplate* t = *tmpl ? &**tmpl : nullptr;
    auto read = [&](const QString& file) -> Expected<Dataset> {
        auto bytes = readTextFile(file);
        if (!bytes)
            return bytes.error();
        return readPreferencePairs(*bytes, file, **tok, t, *context);
    };
    auto all = read(opts->file);
    if (!all)
        return all.error();
    DatasetSplits s;
    s.spec = spec;
    s.kind = QStringLiteral("prefs");
    const QString testFile = opts->values.value(QStringLiteral("test"));
    if (!testFile.isEmpty()) {
        auto held = read(testFile);
        if (!held)
            return held.error();
        s.train = std::move(*all);
        s.test = std::move(*held);
    } else {
        // The last tenth of the pairs (one at least) is held out; one pair alone trains.
        const int64_t n = all->count();
        const int64_t cut = n < 2 ? n : n - std::max<int64_t>(1, n / 10);
        s.train = pairsOf(*all, 0, cut);
        s.test = n < 2 ? pairsOf(*all, 0, n) : pairsOf(*all, cut, n);
    }
    int numClasses = (*tok)->modelVocabSize();
    for (const Dataset* d : {&s.train, &s.test})
        for (int64_t id : d->i64)
            numClasses = std::max<int>(numClasses, int(id) + 1);
    s.numClasses = numClasses;
    s.description = QStringLiteral("prefs %1 (%2 training and %3 held-out pair(s) through %4's "
                                   "tokenizer, context %5)")
                        .arg(QFileInfo(opts->file).fileName())
                        .arg(s.train.count())
                        .arg(s.test.count())
                        .arg(QFileInfo(dir).fileName())
                        .arg(*context);
    s.finish();
    return s;
}

} // namespace tandem
