// The parts of tokenizer.json that hold data rather than steps: the BPE model's vocabulary and
// merges, the added tokens, the post-processor's template, and tokenizer_config.json's BOS, EOS
// and chat template.

#include "formats/tokenizerparts.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>

namespace tandem {

namespace detail {

namespace {

// Past the largest published tokenizers (Gemma 3: 262,144 tokens, 6,000 added; Qwen: 151,387
// merges), so that a file asking for more is refused by name before it is built.
constexpr qsizetype kMaxVocabulary = qsizetype(1) << 22;
constexpr qsizetype kMaxMerges = qsizetype(1) << 22;
constexpr qsizetype kMaxAddedTokens = qsizetype(1) << 18;

void refuseCount(const char* what, qsizetype count, qsizetype cap) {
    if (count > cap)
        refuse(QStringLiteral("its %1 holds %2 entries, more than the %3 Tandem reads")
                   .arg(QLatin1String(what))
                   .arg(count)
                   .arg(cap));
}

void setToken(TokenizerParts& p, int32_t id, const QString& token) {
    if (id < 0 || id > (1 << 24))
        refuse(QStringLiteral("token \"%1\" has the id %2, outside 0 to 2^24").arg(token).arg(id));
    if (size_t(id) >= p.idToToken.size())
        p.idToToken.resize(size_t(id) + 1);
    p.idToToken[size_t(id)] = token;
}

int32_t idIn(const TokenizerParts& p, const QString& token) {
    for (const AddedToken& a : p.added)
        if (a.content == token)
            return a.id;
    return p.bpe.vocab.value(token, -1);
}

void readMerges(const QJsonArray& merges, BpeModel& bpe) {
    refuseCount("merges list", merges.size(), kMaxMerges);
    bpe.merges.reserve(merges.size());
    for (qsizetype rank = 0; rank < merges.size(); ++rank) {
        const QJsonValue m = merges.at(rank);
        QString a, b;
        if (m.isArray() && m.toArray().size() == 2) {
            a = m.toArray().at(0).toString();
            b = m.toArray().at(1).toString();
        } else {
            const QString s = m.toString();
            const qsizetype space = s.indexOf(QLatin1Char(' '));
            if (space <= 0 || s.indexOf(QLatin1Char(' '), space + 1) >= 0)
                refuse(QStringLiteral("merge %1 (\"%2\") is not two tokens").arg(rank).arg(s));
            a = s.left(space);
            b = s.mid(space + 1);
        }
        const int32_t ia = bpe.vocab.value(a, -1), ib = bpe.vocab.value(b, -1);
        const int32_t merged = bpe.vocab.value(a + b, -1);
        if (ia < 0 || ib < 0 || merged < 0)
            refuse(QStringLiteral("merge %1 (\"%2\" \"%3\") names a token that is not in the "
                                  "vocabulary")
                       .arg(rank)
                       .arg(a, b));
        const quint64 key = (quint64(uint32_t(ia)) << 32) | uint32_t(ib);
        if (!bpe.merges.contains(key))
            bpe.merges.insert(key, {int32_t(rank), merged});
    }
}

} // namespace

void readModel(const QJsonObject& model, TokenizerParts& p) {
    const QString type = model.value(QStringLiteral("type")).toString();
    if (type != QLatin1String("BPE") &&
        !(type.isEmpty() && model.contains(QStringLiteral("merges"))))
        refuse(QStringLiteral("its model \"%1\" is not one Tandem implements (BPE is)")
                   .arg(type.isEmpty() ? QStringLiteral("(none)") : type));
    if (model.value(QStringLiteral("dropout")).toDouble(0) > 0)
        refuse(QStringLiteral("its BPE model has dropout, which Tandem does not implement"));
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (!model.value(QLatin1String(key)).toString().isEmpty())
            refuse(QStringLiteral("its BPE model's %1 is not one Tandem implements")
                       .arg(QLatin1String(key)));
    BpeModel& bpe = p.bpe;
    const QJsonObject vocab = model.value(QStringLiteral("vocab")).toObject();
    if (vocab.isEmpty())
        refuse(QStringLiteral("its BPE model has no vocabulary"));
    refuseCount("vocabulary", vocab.size(), kMaxVocabulary);
    bpe.vocab.reserve(vocab.size());
    for (auto it = vocab.constBegin(); it != vocab.constEnd(); ++it) {
        const int32_t id = it.value().toInt(-1);
        setToken(p, id, it.key());
        bpe.vocab.insert(it.key(), id);
        const auto ucs = it.key().toUcs4();
        if (ucs.size() == 1)
            bpe.chars.insert(ucs.at(0), id);
    }
    readMerges(model.value(QStringLiteral("merges")).toArray(), bpe);
    const QString unk = model.value(QStringLiteral("unk_token")).toString();
    if (!unk.isEmpty()) {
        bpe.unk = bpe.vocab.value(unk, -1);
        if (bpe.unk < 0)
            refuse(QStringLiteral("its unk_token \"%1\" is not in the vocabulary").arg(unk));
    }
    bpe.fuseUnk = model.value(QStringLiteral("fuse_unk")).toBool(false);
    bpe.byteFallback = model.value(QStringLiteral("byte_fallback")).toBool(false);
    bpe.ignoreMerges = model.value(QStringLiteral("ignore_merges")).toBool(false);
    for (int b = 0; b < 256; ++b)
        bpe.byteIds[b] = bpe.vocab.value(QStringLiteral("<0x%1>")
                                             .arg(b, 2, 16, QLatin1Char('0'))
                                             .toUpper()
                                             .replace(QLatin1String("<0X"), QLatin1String("<0x")),
                                         -1);
}

void readAddedTokens(const QJsonArray& added, TokenizerParts& p) {
    refuseCount("added_tokens list", added.size(), kMaxAddedTokens);
    for (const auto& v : added) {
        const QJsonObject o = v.toObject();
        AddedToken a;
        a.content = o.value(QStringLiteral("content")).toString();
        a.id = o.value(QStringLiteral("id")).toInt(-1);
        a.special = o.value(QStringLiteral("special")).toBool(false);
        a.lstrip = o.value(QStringLiteral("lstrip")).toBool(false);
        a.rstrip = o.value(QStringLiteral("rstrip")).toBool(false);
        a.singleWord = o.value(QStringLiteral("single_word")).toBool(false);
        // tokenizers' default for a token the file does not say of: normalized unless special.
        a.normalized = o.value(QStringLiteral("normalized")).toBool(!a.special);
        if (a.content.isEmpty())
            refuse(QStringLiteral("an added token (id %1) is empty").arg(a.id));
        setToken(p, a.id, a.content);
        p.added.push_back(a);
    }
    for (size_t i = 0; i < p.added.size(); ++i) {
        const AddedToken& a = p.added[i];
        p.addedById.insert(a.id, int(i));
        (a.normalized ? p.normalizedTrie : p.addedTrie).insert(a.content, int(i));
    }
}

void readPostProcessor(const QJsonObject& o, TokenizerParts& p) {
    const QString t = o.value(QStringLiteral("type")).toString();
    if (t == QLatin1String("Sequence")) {
        for (const auto& v : o.value(QStringLiteral("processors")).toArray())
            readPostProcessor(v.toObject(), p);
    } else if (t == QLatin1String("ByteLevel")) {
        // offsets only
    } else if (t == QLatin1String("TemplateProcessing")) {
        const QJsonObject specials = o.value(QStringLiteral("special_tokens")).toObject();
        bool afterSequence = false;
        for (const auto& v : o.value(QStringLiteral("single")).toArray()) {
            const QJsonObject item = v.toObject();
            if (item.contains(QStringLiteral("Sequence"))) {
                afterSequence = true;
                continue;
            }
            const QString name = item.value(QStringLiteral("SpecialToken"))
                                     .toObject()
                                     .value(QStringLiteral("id"))
                                     .toString();
            const QJsonArray ids =
                specials.value(name).toObject().value(QStringLiteral("ids")).toArray();
            if (ids.isEmpty())
                refuse(QStringLiteral("its post-processor names the special token \"%1\" "
                                      "without its ids")
                           .arg(name));
            for (const auto& id : ids)
                (afterSequence ? p.suffix : p.prefix).push_back(int32_t(id.toInt()));
        }
    } else if (t == QLatin1String("RobertaProcessing") || t == QLatin1String("BertProcessing")) {
        p.prefix.push_back(int32_t(o.value(QStringLiteral("cls")).toArray().at(1).toInt()));
        p.suffix.push_back(int32_t(o.value(QStringLiteral("sep")).toArray().at(1).toInt()));
    } else {
        refuse(QStringLiteral("its post-processor \"%1\" is not one Tandem implements").arg(t));
    }
}

void readConfig(const QJsonObject& config, TokenizerParts& p) {
    auto content = [](const QJsonValue& v) {
        return v.isObject() ? v.toObject().value(QStringLiteral("content")).toString()
                            : v.toString();
    };
    p.bosToken = content(config.value(QStringLiteral("bos_token")));
    p.eosToken = content(config.value(QStringLiteral("eos_token")));
    if (!p.bosToken.isEmpty())
        p.bos = idIn(p, p.bosToken);
    if (!p.eosToken.isEmpty())
        p.eos = idIn(p, p.eosToken);
    // As transformers 5 reads a folder: where tokenizer_config.json names add_bos_token or
    // add_eos_token, those two decide what goes around a sequence (one not named is false) and
    // tokenizer.json's post-processor is set aside; where it names neither, the post-processor
    // stands.
    if (config.contains(QStringLiteral("add_bos_token")) ||
        config.contains(QStringLiteral("add_eos_token"))) {
        p.prefix.clear();
        p.suffix.clear();
        if (config.value(QStringLiteral("add_bos_token")).toBool() && p.bos >= 0)
            p.prefix.push_back(p.bos);
        if (config.value(QStringLiteral("add_eos_token")).toBool() && p.eos >= 0)
            p.suffix.push_back(p.eos);
    }
    const QJsonValue tmpl = config.value(QStringLiteral("chat_template"));
    if (tmpl.isArray()) {
        for (const auto& v : tmpl.toArray())
            if (p.chatTemplate.isEmpty() ||
                v.toObject().value(QStringLiteral("name")).toString() == QLatin1String("default"))
                p.chatTemplate = v.toObject().value(QStringLiteral("template")).toString();
    } else {
        p.chatTemplate = tmpl.toString();
    }
}

} // namespace detail

} // namespace tandem
