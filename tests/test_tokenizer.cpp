// Tokenizers read from tokenizer.json: each kind the supported families ship (byte-level BPE
// with GPT-2's, Llama 3's and Qwen2's expressions; SentencePiece-style BPE with byte fallback,
// legacy and Metaspace; normalizers) is trained in Python (python/make_tokenizers.py) and
// checked against python/tokref.py, a plain implementation written from Hugging Face's
// description, on text in many scripts with spaces and newlines everywhere. Every string
// comes back exactly from its ids. Files Tandem cannot follow are refused by the component.

#include "formats/tokenizer.h"
#include "testpaths.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace tandem;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

QStringList testStrings() {
    return {
        QStringLiteral("Hello world"),
        QStringLiteral(" leading space"),
        QStringLiteral("trailing space "),
        QStringLiteral("  double  spaces  everywhere  "),
        QStringLiteral("\nnewline first"),
        QStringLiteral("last newline\n"),
        QStringLiteral("mid\n\nnewlines\r\nand \n spaces \n\n "),
        QStringLiteral("\ttab\tseparated\t"),
        QStringLiteral("Les élèves étudient à l'école; où est-elle?"),
        QStringLiteral("de\u0301compose\u0301e"),
        QStringLiteral("机器学习是人工智能的一个分支。我们在家里训练模型。"),
        QStringLiteral("Emoji 🙂🚀👩‍💻 mixed with text🙂"),
        QStringLiteral("मशीन लर्निंग कृत्रिम बुद्धिमत्ता का हिस्सा है।"),
        QStringLiteral("التعلم الآلي فرع من الذكاء الاصطناعي."),
        QStringLiteral("Rare: ǅ ꙮ 𓀀 ⟁ ᚠᛇᚻ"),
        QStringLiteral("It's they'LL we'VE I'M 12345678 3.14159"),
        QStringLiteral("ﬁnance ＡＢＣ １２３"),
        QStringLiteral("def f(x):\n    return x  # two\n\n\n"),
        QStringLiteral(
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
        QStringLiteral("     "),
        QStringLiteral(""),
        QStringLiteral("x"),
    };
}

// Strings with added tokens in them: ids checked against the reference, not round-tripped
// (a legacy SentencePiece file puts "▁" after a special token, as Hugging Face's does).
QStringList addedTokenStrings() {
    return {
        QStringLiteral("<|endoftext|>Hi<|endoftext|> there"),
        QStringLiteral("<s>x</s> <s> y"),
        QStringLiteral("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
        QStringLiteral("a <tool>  b<tool>c"),
        QStringLiteral("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhey"),
        QStringLiteral("</s>trailing"),
    };
}

// Runs a Python script of tests/python with `args`, the strings as a JSON array on its stdin;
// returns the JSON array it prints (empty, with a failure recorded, if it fails).
QJsonArray runPython(const QStringList& args, const QStringList& strings) {
    QProcess p;
    p.setWorkingDirectory(testpaths::pythonDir());
    p.start(kPython, args);
    if (!p.waitForStarted())
        return {};
    p.write(QJsonDocument(QJsonArray::fromStringList(strings)).toJson());
    p.closeWriteChannel();
    if (!p.waitForFinished(120000) || p.exitCode() != 0) {
        qWarning("%s", p.readAllStandardError().constData());
        return {};
    }
    return QJsonDocument::fromJson(p.readAllStandardOutput()).array();
}

std::vector<int32_t> idsOf(const QJsonValue& v) {
    std::vector<int32_t> out;
    for (const auto& x : v.toArray())
        out.push_back(int32_t(x.toInt()));
    return out;
}

QByteArray tokenizerJson(const QJsonObject& over) {
    QJsonObject vocab{{QStringLiteral("a"), 0},
                      {QStringLiteral("b"), 1},
                      {QStringLiteral("ab"), 2},
                      {QStringLiteral("c"), 3}};
    QJsonObject t{{QStringLiteral("model"),
                   QJsonObject{{QStringLiteral("type"), QStringLiteral("BPE")},
                               {QStringLiteral("vocab"), vocab},
                               {QStringLiteral("merges"), QJsonArray{QStringLiteral("a b")}}}},
                  {QStringLiteral("added_tokens"), QJsonArray{}}};
    for (auto it = over.begin(); it != over.end(); ++it)
        t.insert(it.key(), it.value());
    return QJsonDocument(t).toJson();
}

} // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void matchesTheReference_data();
    void matchesTheReference();
    void mergesByRank();
    void addBosAndEosTokensOverTheirPostProcessor();
    void unsupportedPartsAreRefusedByName();
    void folderErrorsNameTheFile();
    void whatNoTokenizerHoldsIsRefusedByName();
    void sentencePieceModelMatchesSentencePiece();
    void sentencePieceModelsTandemCannotFollowAreRefused();

private:
    QTemporaryDir m_tmp;
};

void TestTokenizer::initTestCase() {
    QVERIFY(m_tmp.isValid());
    QProcess p;
    p.start(kPython,
            {testpaths::pythonDir() + QStringLiteral("/make_tokenizers.py"), m_tmp.path()});
    QVERIFY2(p.waitForFinished(120000) && p.exitCode() == 0,
             qPrintable(QStringLiteral("make_tokenizers.py (needs Debian's python3-regex): ") +
                        QString::fromUtf8(p.readAllStandardError())));
}

void TestTokenizer::matchesTheReference_data() {
    QTest::addColumn<QString>("kind");
    for (const char* k : {"gpt2", "llama3", "qwen2", "llama2", "mistral", "nfkc"})
        QTest::newRow(k) << QString::fromLatin1(k);
}

void TestTokenizer::matchesTheReference() {
    QFETCH(QString, kind);
    const QString dir = m_tmp.filePath(kind);
    QJsonObject json; // tokenizer.json as parsed, for a reader that needs more of it
    auto tok = Tokenizer::fromFolder(dir, &json);
    QVERIFY2(tok, qPrintable(tok ? QString() : tok.error().message));
    const QJsonObject vocab =
        json.value(QStringLiteral("model")).toObject().value(QStringLiteral("vocab")).toObject();
    QVERIFY(!vocab.isEmpty());
    QCOMPARE((*tok)->idOf(vocab.begin().key()), vocab.begin().value().toInt());
    const QStringList plain = testStrings();
    const QStringList strings = plain + addedTokenStrings();

    const QJsonArray ref =
        runPython({testpaths::pythonDir() + QStringLiteral("/tokref.py"), dir}, strings);
    QCOMPARE(ref.size(), strings.size());

    int tokens = 0;
    for (qsizetype i = 0; i < strings.size(); ++i) {
        const QString& s = strings[i];
        const QJsonObject r = ref[i].toObject();
        const std::vector<int32_t> ids = (*tok)->encode(s, true);
        const std::vector<int32_t> bare = (*tok)->encode(s, false);
        tokens += int(bare.size());
        QVERIFY2(
            ids == idsOf(r.value(QStringLiteral("ids"))),
            qPrintable(
                QStringLiteral("%1: the ids of \"%2\" differ from the reference").arg(kind, s)));
        QVERIFY2(bare == idsOf(r.value(QStringLiteral("plain"))),
                 qPrintable(QStringLiteral("%1: \"%2\" without the template").arg(kind, s)));
        const QString back = QString::fromUtf8((*tok)->decode(bare));
        QCOMPARE(back, r.value(QStringLiteral("text")).toString());
        if (i < plain.size()) {
            // Exact, but for what the file changes on purpose: its normalizers, and the one
            // leading space that Metaspace's "first" scheme takes for its own "▁".
            QString expected = s;
            if (kind == QLatin1String("nfkc"))
                expected = s.normalized(QString::NormalizationForm_KC).toLower();
            else if (kind == QLatin1String("qwen2"))
                expected = s.normalized(QString::NormalizationForm_C);
            else if (kind == QLatin1String("mistral") && s.startsWith(QLatin1Char(' ')))
                expected = s.mid(1);
            QCOMPARE(back, expected);
        }
    }
    QVERIFY(tokens > 300);
    // Special tokens are single ids, never split, and skipped on request.
    const int32_t eos = (*tok)->eos();
    QVERIFY(eos >= 0);
    const std::vector<int32_t> e = (*tok)->encode((*tok)->eosToken(), false);
    QCOMPARE(e, std::vector<int32_t>{eos});
    QVERIFY((*tok)->decode(e, true).isEmpty());
}

void TestTokenizer::addBosAndEosTokensOverTheirPostProcessor() {
    // A post-processor that puts "a" (0) before and "c" (3) after a sequence, and a config
    // naming "a" the BOS and "c" the EOS. As transformers 5: with neither add_bos_token nor
    // add_eos_token in the config the post-processor stands; with either, those two decide,
    // the one not named being false.
    const QJsonObject specials{
        {QStringLiteral("a"),
         QJsonObject{{QStringLiteral("id"), QStringLiteral("a")},
                     {QStringLiteral("ids"), QJsonArray{0}},
                     {QStringLiteral("tokens"), QJsonArray{QStringLiteral("a")}}}},
        {QStringLiteral("c"),
         QJsonObject{{QStringLiteral("id"), QStringLiteral("c")},
                     {QStringLiteral("ids"), QJsonArray{3}},
                     {QStringLiteral("tokens"), QJsonArray{QStringLiteral("c")}}}}};
    const auto special = [](const char* id) {
        return QJsonObject{
            {QStringLiteral("SpecialToken"), QJsonObject{{QStringLiteral("id"), QLatin1String(id)},
                                                         {QStringLiteral("type_id"), 0}}}};
    };
    const QJsonObject post{
        {QStringLiteral("type"), QStringLiteral("TemplateProcessing")},
        {QStringLiteral("single"),
         QJsonArray{special("a"),
                    QJsonObject{{QStringLiteral("Sequence"),
                                 QJsonObject{{QStringLiteral("id"), QStringLiteral("A")},
                                             {QStringLiteral("type_id"), 0}}}},
                    special("c")}},
        {QStringLiteral("special_tokens"), specials}};
    const QByteArray json = tokenizerJson({{QStringLiteral("post_processor"), post}});
    const auto ids = [&json](const QJsonObject& config) {
        QJsonObject c = config;
        c.insert(QStringLiteral("bos_token"), QStringLiteral("a"));
        c.insert(QStringLiteral("eos_token"), QStringLiteral("c"));
        auto tok = Tokenizer::fromJson(json, QJsonDocument(c).toJson(), QStringLiteral("t.json"));
        return tok ? (*tok)->encode(QStringLiteral("b"), true) : std::vector<int32_t>{-1};
    };
    using Ids = std::vector<int32_t>;
    QCOMPARE(ids({}), (Ids{0, 1, 3}));
    QCOMPARE(ids({{QStringLiteral("add_bos_token"), false}}), (Ids{1}));
    QCOMPARE(ids({{QStringLiteral("add_bos_token"), true}}), (Ids{0, 1}));
    QCOMPARE(ids({{QStringLiteral("add_eos_token"), true}}), (Ids{1, 3}));
    QCOMPARE(
        ids({{QStringLiteral("add_bos_token"), true}, {QStringLiteral("add_eos_token"), true}}),
        (Ids{0, 1, 3}));
    QCOMPARE(ids({{QStringLiteral("add_bos_token"), QJsonValue::Null}}), (Ids{1}));
}

void TestTokenizer::mergesByRank() {
    // "c a b a b": the merge a+b applies wherever it can, and only it.
    auto tok = Tokenizer::fromJson(tokenizerJson({}), {}, QStringLiteral("t.json"));
    QVERIFY(tok);
    QCOMPARE((*tok)->encode(QStringLiteral("cabab")), (std::vector<int32_t>{3, 2, 2}));
    QCOMPARE((*tok)->encode(QStringLiteral("ba")), (std::vector<int32_t>{1, 0}));
    // no unknown token: characters outside the vocabulary are dropped, as Hugging Face does,
    // and their neighbours merge
    QCOMPARE((*tok)->encode(QStringLiteral("azb")), (std::vector<int32_t>{2}));
    QCOMPARE((*tok)->vocabSize(), 4);
    QCOMPARE((*tok)->decode({2, 3}), QByteArray("ab c")); // no decoder: joined with spaces
}

void TestTokenizer::unsupportedPartsAreRefusedByName() {
    const QList<QPair<QJsonObject, QString>> cases{
        {{{QStringLiteral("normalizer"),
           QJsonObject{{QStringLiteral("type"), QStringLiteral("BertNormalizer")}}}},
         QStringLiteral("normalizer \"BertNormalizer\"")},
        {{{QStringLiteral("pre_tokenizer"),
           QJsonObject{{QStringLiteral("type"), QStringLiteral("Sequence")},
                       {QStringLiteral("pretokenizers"),
                        QJsonArray{QJsonObject{
                            {QStringLiteral("type"), QStringLiteral("UnicodeScripts")}}}}}}},
         QStringLiteral("pre-tokenizer \"UnicodeScripts\"")},
        {{{QStringLiteral("model"),
           QJsonObject{{QStringLiteral("type"), QStringLiteral("Unigram")}}}},
         QStringLiteral("model \"Unigram\"")},
        {{{QStringLiteral("decoder"),
           QJsonObject{{QStringLiteral("type"), QStringLiteral("WordPiece")}}}},
         QStringLiteral("decoder \"WordPiece\"")},
        {{{QStringLiteral("post_processor"),
           QJsonObject{{QStringLiteral("type"), QStringLiteral("Mystery")}}}},
         QStringLiteral("post-processor \"Mystery\"")},
        {{{QStringLiteral("pre_tokenizer"),
           QJsonObject{{QStringLiteral("type"), QStringLiteral("Split")},
                       {QStringLiteral("pattern"),
                        QJsonObject{{QStringLiteral("Regex"), QStringLiteral("(unclosed")}}},
                       {QStringLiteral("behavior"), QStringLiteral("Isolated")}}}},
         QStringLiteral("(unclosed")},
    };
    for (const auto& [over, expected] : cases) {
        auto tok = Tokenizer::fromJson(tokenizerJson(over), {}, QStringLiteral("bad.json"));
        QVERIFY(!tok);
        QVERIFY2(tok.error().message.contains(expected) &&
                     tok.error().message.startsWith(QStringLiteral("bad.json")),
                 qPrintable(tok.error().message));
    }
    auto broken = Tokenizer::fromJson("{\"model\": ", {}, QStringLiteral("cut.json"));
    QVERIFY(!broken);
    QVERIFY(broken.error().message.contains(QStringLiteral("cut.json")));
}

void TestTokenizer::folderErrorsNameTheFile() {
    QTemporaryDir empty;
    auto none = Tokenizer::fromFolder(empty.path());
    QVERIFY(!none);
    QVERIFY(none.error().message.contains(QStringLiteral("tokenizer.json")));
    QFile sp(empty.filePath(QStringLiteral("tokenizer.model")));
    QVERIFY(sp.open(QIODevice::WriteOnly));
    sp.close();
    auto only = Tokenizer::fromFolder(empty.path());
    QVERIFY(!only);
    QVERIFY2(only.error().message.contains(QStringLiteral("SentencePiece")),
             qPrintable(only.error().message));
}

// A downloaded tokenizer.json may ask for anything: counts past any published tokenizer's, a
// document nested past any reader's depth, or a file past any tokenizer's size are each refused
// by name, before anything is built from them; merges whose results loop back to their own
// parts still end.
void TestTokenizer::whatNoTokenizerHoldsIsRefusedByName() {
    // 2^18 + 1 added tokens (a million are refused the same way), and 2^22 + 1 merges.
    QByteArray added = "[";
    for (int i = 0; i <= (1 << 18); ++i)
        added += (i ? ",{\"id\":" : "{\"id\":") + QByteArray::number(4 + i) + ",\"content\":\"t" +
                 QByteArray::number(i) + "\"}";
    added += "]";
    QByteArray json = tokenizerJson({});
    auto refusal = [](const QByteArray& bytes) {
        auto t = Tokenizer::fromJson(bytes, {}, QStringLiteral("big.json"));
        return t ? QString() : t.error().message;
    };
    QByteArray many = json;
    many.replace("\"added_tokens\": [\n    ]", "\"added_tokens\": " + added);
    QVERIFY(many.size() > json.size());
    QString why = refusal(many);
    QVERIFY2(why.startsWith(QStringLiteral("big.json")) &&
                 why.contains(QStringLiteral("added_tokens list holds 262145 entries")),
             qPrintable(why));
    QByteArray merges = "\"a b\"";
    merges.reserve(6 << 22);
    for (int i = 0; i < (1 << 22); ++i)
        merges += ",\"a b\"";
    QByteArray cycle = json;
    cycle.replace(QByteArray("\"a b\"\n"), merges + "\n");
    why = refusal(cycle);
    QVERIFY2(why.contains(QStringLiteral("merges list holds 4194305 entries")), qPrintable(why));
    // Qt's reader stops at a depth of 1,024.
    QByteArray deep = "{\"decoder\":" + QByteArray(2000, '[') + QByteArray(2000, ']') + "}";
    why = refusal(deep);
    QVERIFY2(why.startsWith(QStringLiteral("big.json is not a JSON object")), qPrintable(why));
    // "aa" has the id of "a": each merge still takes one part away, so encoding ends.
    QByteArray loop =
        QJsonDocument(
            QJsonObject{
                {QStringLiteral("model"),
                 QJsonObject{{QStringLiteral("type"), QStringLiteral("BPE")},
                             {QStringLiteral("vocab"),
                              QJsonObject{{QStringLiteral("a"), 0}, {QStringLiteral("aa"), 0}}},
                             {QStringLiteral("merges"), QJsonArray{QStringLiteral("a a")}}}}})
            .toJson();
    auto looped = Tokenizer::fromJson(loop, {}, QStringLiteral("loop.json"));
    QVERIFY(looped);
    QCOMPARE((*looped)->encode(QString(4096, QLatin1Char('a'))), std::vector<int32_t>{0});
    // A tokenizer.json past 256 MB (a sparse file: nothing is written) is refused by its size.
    QTemporaryDir dir;
    QFile huge(dir.filePath(QStringLiteral("tokenizer.json")));
    QVERIFY(huge.open(QIODevice::WriteOnly) && huge.resize(qint64(257) << 20));
    huge.close();
    auto t = Tokenizer::fromFolder(dir.path());
    QVERIFY(!t);
    QVERIFY2(t.error().message.contains(QStringLiteral("tokenizer.json: larger than")),
             qPrintable(t.error().message));
}

// A folder with only tokenizer.model (SentencePiece's file): a BPE model with byte fallback
// trained by SentencePiece itself (python/make_spm.py, Debian's python3-sentencepiece), which
// also gives the reference ids. Strings with added tokens are left out: there Tandem follows
// Hugging Face's reading ("▁" after a user-defined token, as for every tokenizer.json).
void TestTokenizer::sentencePieceModelMatchesSentencePiece() {
    QProcess probe;
    probe.start(kPython, {QStringLiteral("-c"), QStringLiteral("import sentencepiece")});
    if (!probe.waitForFinished(60000) || probe.exitCode() != 0)
        QSKIP("no SentencePiece for Python (Debian's python3-sentencepiece)");
    const QString dir = m_tmp.filePath(QStringLiteral("spm"));
    const QStringList strings = testStrings();
    const QJsonArray ref =
        runPython({testpaths::pythonDir() + QStringLiteral("/make_spm.py"), dir}, strings);
    QCOMPARE(ref.size(), strings.size());

    QJsonObject json{{QStringLiteral("stale"), true}};
    auto tok = Tokenizer::fromFolder(dir + QStringLiteral("/bpe"), &json);
    QVERIFY2(tok, qPrintable(tok ? QString() : tok.error().message));
    QVERIFY2(json.isEmpty(), "no tokenizer.json to hand back"); // (GGUF export refuses then)
    QCOMPARE((*tok)->bos(), 1);
    QCOMPARE((*tok)->eos(), 2);
    QCOMPARE((*tok)->bosToken(), QStringLiteral("<s>"));
    int tokens = 0, bytes = 0;
    for (qsizetype i = 0; i < strings.size(); ++i) {
        const QString& s = strings[i];
        const std::vector<int32_t> want = idsOf(ref[i].toObject().value(QStringLiteral("ids")));
        const std::vector<int32_t> ids = (*tok)->encode(s, false);
        QVERIFY2(
            ids == want,
            qPrintable(QStringLiteral("the ids of \"%1\" differ from SentencePiece's").arg(s)));
        tokens += int(ids.size());
        bytes += int(
            std::count_if(ids.begin(), ids.end(), [](int32_t id) { return id >= 3 && id < 259; }));
        const QString back = QString::fromUtf8((*tok)->decode(ids));
        QCOMPARE(back, ref[i].toObject().value(QStringLiteral("text")).toString());
        QCOMPARE(back, s);
        // With the template, the model's BOS first.
        const std::vector<int32_t> withBos = (*tok)->encode(s, true);
        QCOMPARE(withBos.front(), 1);
        QCOMPARE(std::vector<int32_t>(withBos.begin() + 1, withBos.end()), ids);
    }
    QVERIFY(tokens > 300);
    QVERIFY2(bytes > 20, "some characters fall back to bytes"); // ids 3..258: <0x00>..<0xFF>
    QCOMPARE((*tok)->encode(QStringLiteral("</s>"), false), std::vector<int32_t>{2});
}

void TestTokenizer::sentencePieceModelsTandemCannotFollowAreRefused() {
    const QString dir = m_tmp.filePath(QStringLiteral("spm"));
    if (!QFileInfo::exists(dir + QStringLiteral("/unigram/tokenizer.model")))
        QSKIP("no SentencePiece for Python (Debian's python3-sentencepiece)");
    const QList<QPair<QString, QString>> cases{
        {QStringLiteral("unigram"), QStringLiteral("it is a unigram model")},
        {QStringLiteral("nfkc"), QStringLiteral("normalization rule \"nmt_nfkc\"")}};
    for (const auto& [name, expected] : cases) {
        auto tok = Tokenizer::fromFolder(dir + QLatin1Char('/') + name);
        QVERIFY(!tok);
        QCOMPARE(tok.error().code, ErrorCode::Unsupported);
        QVERIFY2(tok.error().message.contains(expected) &&
                     tok.error().message.contains(name + QStringLiteral("/tokenizer.model")),
                 qPrintable(tok.error().message));
    }
    // Bytes that are not a ModelProto, and a model cut short, are refused as corrupt.
    QTemporaryDir bad;
    QFile junk(bad.filePath(QStringLiteral("tokenizer.model")));
    QFile whole(dir + QStringLiteral("/bpe/tokenizer.model"));
    QVERIFY(whole.open(QIODevice::ReadOnly));
    const QByteArray model = whole.readAll();
    for (const QByteArray& bytes :
         {QByteArray("\x0a\xff\xff\xff\xff\x0f junk", 11), model.chopped(1)}) {
        QVERIFY(junk.open(QIODevice::WriteOnly | QIODevice::Truncate));
        junk.write(bytes);
        junk.close();
        auto tok = Tokenizer::fromFolder(bad.path());
        QVERIFY(!tok);
        QCOMPARE(tok.error().code, ErrorCode::Corrupt);
        QVERIFY2(tok.error().message.contains(QStringLiteral("not a SentencePiece model")),
                 qPrintable(tok.error().message));
    }
}

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
