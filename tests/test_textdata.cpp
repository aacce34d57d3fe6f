// text:, jsonl: and chat: through a model folder's tokenizer: documents get the tokenizer's
// template and are joined with its EOS; chat turns are written with the chat template and only
// the assistant's tokens (with its end of turn) are targets; tokens are cached by content; and
// bad input is refused naming the file and line.

#include "formats/chattemplate.h"
#include "formats/dataset.h"
#include "formats/prefdata.h"
#include "formats/tokenizer.h"
#include "formats/tokenstream.h"
#include "testpaths.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;

namespace {

QJsonArray messages(const QList<QPair<QString, QString>>& list) {
    QJsonArray a;
    for (const auto& [role, content] : list)
        a.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), content}});
    return a;
}

QByteArray line(const QJsonObject& o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}

// Row `row` (0: chosen, 1: rejected) of pair `pair`: its inputs and its targets that count.
std::pair<std::vector<int32_t>, std::vector<int32_t>> pairRow(const Dataset& d, int64_t pair,
                                                              int row) {
    const int64_t context = d.sampleShape[1];
    std::vector<int32_t> in, kept;
    for (int64_t k = 0; k < context; ++k) {
        const size_t at = size_t((pair * 2 + row) * context + k);
        in.push_back(int32_t(d.i64[at]));
        if (d.labels[at] != kIgnoredTarget)
            kept.push_back(int32_t(d.labels[at]));
    }
    return {in, kept};
}

QByteArray chatLine(const QList<QPair<QString, QString>>& messages) {
    QJsonArray a;
    for (const auto& [role, content] : messages)
        a.append(QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), content}});
    return QJsonDocument(QJsonObject{{QStringLiteral("messages"), a}})
               .toJson(QJsonDocument::Compact) +
           '\n';
}

} // namespace

class TestTextData : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void jsonlDocumentsAreJoinedWithEos();
    void longTextIsCutWhereTheTokensAgree();
    void onlyAssistantTokensAreTargets();
    void badInputNamesFileAndLine();
    void addedTokensPastTheModelCountOnlyWhenUsed();
    void preferencePairsAreWrittenAsTheModelSeesThem();
    void badPreferenceLinesNameFileAndLine();

private:
    QString file(const QString& name, const QByteArray& bytes) {
        const QString path = m_tmp.filePath(name);
        if (!testutil::writeFile(path, bytes))
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    QTemporaryDir m_tmp;
    QString m_qwen, m_gpt2;
};

void TestTextData::initTestCase() {
    QVERIFY(m_tmp.isValid());
    qputenv("TANDEM_TOKEN_CACHE", m_tmp.filePath(QStringLiteral("cache")).toUtf8());
    QProcess p;
    p.start(QStringLiteral("/usr/bin/python3"),
            {testpaths::pythonDir() + QStringLiteral("/make_tokenizers.py"), m_tmp.path()});
    QVERIFY2(p.waitForFinished(120000) && p.exitCode() == 0, p.readAllStandardError().constData());
    m_qwen = m_tmp.filePath(QStringLiteral("qwen2"));
    m_gpt2 = m_tmp.filePath(QStringLiteral("gpt2"));
    // Qwen2's ChatML template
    QFile c(m_qwen + QStringLiteral("/tokenizer_config.json"));
    QVERIFY(c.open(QIODevice::ReadOnly));
    QJsonObject config = QJsonDocument::fromJson(c.readAll()).object();
    c.close();
    config.insert(
        QStringLiteral("chat_template"),
        QStringLiteral("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' "
                       "+ message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if "
                       "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"));
    QVERIFY(testutil::writeFile(c.fileName(), QJsonDocument(config).toJson()));
}

void TestTextData::jsonlDocumentsAreJoinedWithEos() {
    const QStringList docs{QStringLiteral("The first document."),
                           QStringLiteral("Zweites Dokument: Grüße!"),
                           QStringLiteral("第三个文件。"), QStringLiteral("four"),
                           QStringLiteral("five and more words here")};
    QByteArray lines;
    for (const QString& d : docs)
        lines +=
            QJsonDocument(QJsonObject{{QStringLiteral("body"), d}}).toJson(QJsonDocument::Compact) +
            '\n';
    const QString path = file(QStringLiteral("docs.jsonl"), lines);
    auto tok = Tokenizer::fromFolder(m_gpt2);
    QVERIFY(tok);
    std::vector<int32_t> expected;
    for (const QString& d : docs) {
        const auto ids = (*tok)->encode(d, true);
        expected.insert(expected.end(), ids.begin(), ids.end());
        expected.push_back((*tok)->eos());
    }
    const QString spec = QStringLiteral("jsonl:%1,field=body,context=4").arg(path);
    auto data = loadDataset(spec, m_gpt2);
    QVERIFY2(data, qPrintable(data ? QString() : data.error().message));
    QCOMPARE(data->numClasses, (*tok)->vocabSize());
    QCOMPARE(data->train.storage, Dataset::Storage::Windows);
    // the last document is held out; train windows are the tokens before it, in order
    const int64_t held = int64_t((*tok)->encode(docs.last(), true).size()) + 1;
    std::vector<int64_t> got(size_t(data->train.windows * 4 + 1));
    data->train.stream->copy(0, int64_t(got.size()), got.data());
    for (size_t i = 0; i < got.size(); ++i)
        QCOMPARE(got[i], int64_t(expected[i]));
    QCOMPARE(data->train.stream->size(), int64_t(expected.size()) - held);
    // cached: the files exist and a second read gives the same dataset without the tokenizer
    // being asked again (the same hash)
    QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("cache"))).entryList(QDir::Files).size(), 3);
    auto again = loadDataset(spec, m_gpt2);
    QVERIFY(again);
    QCOMPARE(again->contentHash, data->contentHash);
}

void TestTextData::longTextIsCutWhereTheTokensAgree() {
    // Over 2 M characters are tokenized in pieces cut at line starts: the tokens are those of
    // the whole text at once, with Llama 3's BOS before and its EOS after.
    QString text;
    const QStringList words{QStringLiteral("alpha"),  QStringLiteral("Beta,"),
                            QStringLiteral("gamma."), QStringLiteral("  delta"),
                            QStringLiteral("ε"),      QStringLiteral("42")};
    for (int i = 0; text.size() < 2'600'000; ++i)
        text += words[i % 6] + QLatin1Char(' ') + words[(i * 7) % 6] +
                (i % 5 == 0 ? QStringLiteral(" \n") : QStringLiteral("\n"));
    const QString path = file(QStringLiteral("long.txt"), text.toUtf8());
    const QString llama3 = m_tmp.filePath(QStringLiteral("llama3"));
    auto tok = Tokenizer::fromFolder(llama3);
    QVERIFY(tok);
    std::vector<int32_t> expected = (*tok)->encode(text, true);
    expected.push_back((*tok)->eos());
    auto data = loadDataset(QStringLiteral("text:%1,context=64").arg(path), llama3);
    QVERIFY2(data, qPrintable(data ? QString() : data.error().message));
    const int64_t n = data->train.stream->size();
    QCOMPARE(n + data->test.stream->size(), int64_t(expected.size()));
    std::vector<int64_t> got(static_cast<size_t>(n));
    data->train.stream->copy(0, n, got.data());
    QCOMPARE(got.front(), int64_t((*tok)->bos()));
    for (int64_t i = 0; i < n; ++i)
        QVERIFY2(got[size_t(i)] == expected[size_t(i)], qPrintable(QString::number(i)));
}

void TestTextData::onlyAssistantTokensAreTargets() {
    QByteArray lines;
    for (int i = 0; i < 40; ++i)
        lines += chatLine({{QStringLiteral("system"), QStringLiteral("Be brief.")},
                           {QStringLiteral("user"), QStringLiteral("Colour of a plum?")},
                           {QStringLiteral("assistant"), QStringLiteral("Purple.")},
                           {QStringLiteral("user"), QStringLiteral("And a lime?")},
                           {QStringLiteral("assistant"), QStringLiteral("Green, mostly.")}});
    const QString path = file(QStringLiteral("chat.jsonl"), lines);
    auto data = loadDataset(QStringLiteral("chat:%1,context=128,tokenizer=%2").arg(path, m_qwen));
    QVERIFY2(data, qPrintable(data ? QString() : data.error().message));
    auto tok = Tokenizer::fromFolder(m_qwen);
    QVERIFY(tok);
    QCOMPARE(data->train.storage, Dataset::Storage::I64);
    QVERIFY(data->train.count() >= 1);
    // The targets kept, in order, are exactly the assistant's turns with their end of turn.
    std::vector<int32_t> kept;
    for (int64_t i = 0; i < 128; ++i)
        if (data->train.labels[size_t(i)] != kIgnoredTarget)
            kept.push_back(int32_t(data->train.labels[size_t(i)]));
    const QString once = QStringLiteral("Purple.<|im_end|>\nGreen, mostly.<|im_end|>\n");
    const QString text = QString::fromUtf8((*tok)->decode(kept));
    QVERIFY2(text.startsWith(once), qPrintable(text));
    QVERIFY(kept.size() < 128 / 2);
    QVERIFY(data->test.count() >= 1);
}

void TestTextData::addedTokensPastTheModelCountOnlyWhenUsed() {
    // As Gemma 3's tokenizer: the model's vocabulary (here 27 characters), then an added token
    // past its end (<image_soft_token> is 262144 beside a model that scores 262144 ids). Text
    // that never holds it needs a model of the vocabulary's size; text that does, one more.
    QJsonObject vocab;
    const QString chars = QStringLiteral(" abcdefghijklmnopqrstuvwxyz");
    for (qsizetype i = 0; i < chars.size(); ++i)
        vocab.insert(QString(chars[i]), int(i));
    const QJsonObject tokenizer{
        {QStringLiteral("added_tokens"),
         QJsonArray{QJsonObject{{QStringLiteral("id"), 27},
                                {QStringLiteral("content"), QStringLiteral("<img>")},
                                {QStringLiteral("special"), true}}}},
        {QStringLiteral("decoder"), QJsonObject{{QStringLiteral("type"), QStringLiteral("Fuse")}}},
        {QStringLiteral("model"), QJsonObject{{QStringLiteral("type"), QStringLiteral("BPE")},
                                              {QStringLiteral("vocab"), vocab},
                                              {QStringLiteral("merges"), QJsonArray{}}}}};
    QVERIFY(QDir().mkpath(m_tmp.filePath(QStringLiteral("img"))));
    file(QStringLiteral("img/tokenizer.json"), QJsonDocument(tokenizer).toJson());
    const QString dir = m_tmp.filePath(QStringLiteral("img"));
    auto tok = Tokenizer::fromFolder(dir);
    QVERIFY(tok);
    QCOMPARE((*tok)->vocabSize(), 28);
    QCOMPARE((*tok)->modelVocabSize(), 27);
    const QByteArray text =
        QByteArray("a cat sat on a mat and the dog ran far away\n").repeated(20);
    auto plain = loadDataset(
        QStringLiteral("text:%1,context=8").arg(file(QStringLiteral("plain.txt"), text)), dir);
    QVERIFY2(plain, qPrintable(plain ? QString() : plain.error().message));
    QCOMPARE(plain->numClasses, 27);
    auto pictured = loadDataset(QStringLiteral("text:%1,context=8")
                                    .arg(file(QStringLiteral("img.txt"), text + "a <img> here\n")),
                                dir);
    QVERIFY2(pictured, qPrintable(pictured ? QString() : pictured.error().message));
    QCOMPARE(pictured->numClasses, 28);
}

void TestTextData::badInputNamesFileAndLine() {
    const QString ok =
        QString::fromUtf8(chatLine({{QStringLiteral("user"), QStringLiteral("hi")},
                                    {QStringLiteral("assistant"), QStringLiteral("hello")}}));
    const QList<std::tuple<QString, QByteArray, QString, QString>> cases{
        {QStringLiteral("text"), QByteArray("fine\nbad \xff\xfe byte\n"), QString(),
         QStringLiteral("line 2: is not valid UTF-8")},
        {QStringLiteral("jsonl"), QByteArray("{\"text\": \"a\"}\n[1, 2]\n"), QString(),
         QStringLiteral("line 2: is not a JSON object")},
        {QStringLiteral("jsonl"), QByteArray("{\"text\": \"a\"}\n\n{\"body\": \"b\"}\n"), QString(),
         QStringLiteral("line 3: has no \"text\" string")},
        {QStringLiteral("chat"),
         ok.toUtf8() + chatLine({{QStringLiteral("robot"), QStringLiteral("x")}}), QString(),
         QStringLiteral("line 2: a message's role is \"robot\"")},
        {QStringLiteral("chat"),
         ok.toUtf8() + ok.toUtf8() + chatLine({{QStringLiteral("assistant"), QStringLiteral("x")}}),
         QStringLiteral(",template=") +
             file(QStringLiteral("strict.jinja"),
                  "{% for m in messages %}{% if loop.first and m.role != 'user' %}{{ "
                  "raise_exception('a conversation opens with the user') }}{% endif %}{{ m.content "
                  "}}{% endfor %}"),
         QStringLiteral("strict.jinja, chat template line 1: the template refuses the "
                        "conversation: a conversation opens with the user")},
        {QStringLiteral("jsonl"),
         QByteArray(
             "{\"text\": \"short\"}\n{\"text\": \"a much longer document than four tokens\"}\n"),
         QStringLiteral(",context=8,long=refuse"), QStringLiteral("line 2: holds")},
        {QStringLiteral("text"), QByteArray(" \n"), QString(), QStringLiteral("is empty")},
    };
    int n = 0;
    for (const auto& [kind, bytes, options, expected] : cases) {
        const QString path = file(QStringLiteral("bad%1.txt").arg(n++), bytes);
        auto data = loadDataset(QStringLiteral("%1:%2%3").arg(kind, path, options), m_qwen);
        QVERIFY2(!data, qPrintable(path));
        QVERIFY2(data.error().message.contains(path) && data.error().message.contains(expected),
                 qPrintable(data.error().message));
    }
    auto none = loadDataset(QStringLiteral("chat:") + m_tmp.filePath(QStringLiteral("x")));
    QVERIFY(!none);
    QVERIFY2(none.error().message.contains(QStringLiteral("needs a tokenizer")),
             qPrintable(none.error().message));
}

void TestTextData::preferencePairsAreWrittenAsTheModelSeesThem() {
    // Text as TRL tokenizes it for a decoder-only model: the prompt as it is, then the answer
    // and the EOS, the answer's tokens (with the EOS) the only targets; padding holds the EOS
    // and counts for nothing. Messages through the chat template, each answer what writing the
    // conversation adds after the generation prompt, its end of turn included; and the same
    // conversations given whole (TRL's implicit prompt) give the same pair.
    auto tok = Tokenizer::fromFolder(m_qwen);
    QVERIFY(tok);
    const Tokenizer& t = **tok;
    auto tmpl = ChatTemplate::parse(t.chatTemplate(), QStringLiteral("qwen2"));
    QVERIFY(tmpl);
    const QString prompt = QStringLiteral("Colour of a plum?");
    const QByteArray text = line({{QStringLiteral("prompt"), prompt},
                                  {QStringLiteral("chosen"), QStringLiteral(" Purple.")},
                                  {QStringLiteral("rejected"), QStringLiteral(" Green, mostly.")}});
    auto d = readPreferencePairs(text, QStringLiteral("p.jsonl"), t, nullptr, 48);
    QVERIFY2(d, qPrintable(d ? QString() : d.error().message));
    QCOMPARE(d->count(), int64_t(1));
    QCOMPARE(d->sampleShape, (std::vector<int64_t>{2, 48}));
    const std::vector<int32_t> asked = t.encode(prompt, false);
    for (int row = 0; row < 2; ++row) {
        std::vector<int32_t> answer = t.encode(
            row == 0 ? QStringLiteral(" Purple.") : QStringLiteral(" Green, mostly."), false);
        answer.push_back(t.eos());
        const auto [in, kept] = pairRow(*d, 0, row);
        QCOMPARE(kept, answer);
        QVERIFY(std::equal(asked.begin(), asked.end(), in.begin()));
        QCOMPARE(in.back(), t.eos()); // padding
    }

    const QJsonArray question = messages({{QStringLiteral("user"), prompt}});
    const QJsonArray purple = messages({{QStringLiteral("assistant"), QStringLiteral("Purple.")}});
    const QJsonArray green = messages({{QStringLiteral("assistant"), QStringLiteral("Green.")}});
    auto chat = readPreferencePairs(line({{QStringLiteral("prompt"), question},
                                          {QStringLiteral("chosen"), purple},
                                          {QStringLiteral("rejected"), green}}),
                                    QStringLiteral("c.jsonl"), t, &*tmpl, 64);
    QVERIFY2(chat, qPrintable(chat ? QString() : chat.error().message));
    const auto [in, kept] = pairRow(*chat, 0, 0);
    QCOMPARE(QString::fromUtf8(t.decode(kept)), QStringLiteral("Purple.<|im_end|>\n"));
    QVERIFY2(
        QString::fromUtf8(t.decode(in))
            .startsWith(QStringLiteral("<|im_start|>user\nColour of a plum?<|im_end|>\n<|im_start|>"
                                       "assistant\nPurple.<|im_end|>")), // its last token: a target
        t.decode(in).constData());
    QCOMPARE(QString::fromUtf8(t.decode(pairRow(*chat, 0, 1).second)),
             QStringLiteral("Green.<|im_end|>\n"));
    QJsonArray wholeChosen = question, wholeRejected = question;
    wholeChosen.append(purple[0]);
    wholeRejected.append(green[0]);
    auto implicit = readPreferencePairs(line({{QStringLiteral("chosen"), wholeChosen},
                                              {QStringLiteral("rejected"), wholeRejected}}),
                                        QStringLiteral("i.jsonl"), t, &*tmpl, 64);
    QVERIFY2(implicit, qPrintable(implicit ? QString() : implicit.error().message));
    QCOMPARE(implicit->i64, chat->i64);
    QCOMPARE(implicit->labels, chat->labels);
}

void TestTextData::badPreferenceLinesNameFileAndLine() {
    auto tok = Tokenizer::fromFolder(m_qwen);
    QVERIFY(tok);
    auto tmpl = ChatTemplate::parse((*tok)->chatTemplate(), QStringLiteral("qwen2"));
    QVERIFY(tmpl);
    const QByteArray good = line({{QStringLiteral("prompt"), QStringLiteral("Q?")},
                                  {QStringLiteral("chosen"), QStringLiteral(" yes")},
                                  {QStringLiteral("rejected"), QStringLiteral(" no")}});
    const QJsonArray user = messages({{QStringLiteral("user"), QStringLiteral("Q?")}});
    const QJsonArray yes = messages({{QStringLiteral("assistant"), QStringLiteral("yes")}});
    const struct {
        QByteArray bad;
        const char* says;
        bool withTemplate = true;
    } cases[] = {
        {"{\"prompt\": \"Q?\", \"chosen\": \" yes\",\n", "is not a JSON object"},
        {line({{QStringLiteral("prompt"), QStringLiteral("Q?")},
               {QStringLiteral("chosen"), QStringLiteral(" yes")}}),
         "has no \"rejected\""},
        {line({{QStringLiteral("prompt"), QStringLiteral("Q?")},
               {QStringLiteral("chosen"), QStringLiteral(" yes")},
               {QStringLiteral("rejected"), QStringLiteral("  ")}}),
         "the rejected answer is empty"},
        {line({{QStringLiteral("chosen"), QStringLiteral(" yes")},
               {QStringLiteral("rejected"), QStringLiteral(" no")}}),
         "has no \"prompt\""},
        {line({{QStringLiteral("prompt"), user},
               {QStringLiteral("chosen"), QStringLiteral("yes")},
               {QStringLiteral("rejected"), yes}}),
         "must both be text or both lists of messages"},
        {line({{QStringLiteral("prompt"), user},
               {QStringLiteral("chosen"), user},
               {QStringLiteral("rejected"), yes}}),
         "\"chosen\" must hold the assistant's answer"},
        {line({{QStringLiteral("prompt"), user},
               {QStringLiteral("chosen"), yes},
               {QStringLiteral("rejected"),
                QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("bot")},
                                       {QStringLiteral("content"), QStringLiteral("x")}}}}}),
         "\"rejected\": a message's role is \"bot\""},
        {line({{QStringLiteral("prompt"), user},
               {QStringLiteral("chosen"), yes},
               {QStringLiteral("rejected"), yes}}),
         "no chat template", false},
        {line({{QStringLiteral("prompt"), QStringLiteral("Q?")},
               {QStringLiteral("chosen"), QStringLiteral(" yes")},
               {QStringLiteral("rejected"),
                QStringLiteral(" no, and a great deal more than the context holds")}}),
         "more than the context of 6 holds"},
    };
    for (const auto& c : cases) {
        // Two good lines, then the bad one: line 3.
        auto d = readPreferencePairs(good + good + c.bad, QStringLiteral("prefs.jsonl"), **tok,
                                     c.withTemplate ? &*tmpl : nullptr, 6);
        QVERIFY2(!d, c.says);
        QVERIFY2(d.error().message.startsWith(QStringLiteral("prefs.jsonl, line 3: ")) &&
                     d.error().message.contains(QLatin1String(c.says)),
                 qPrintable(d.error().message));
    }
    auto none = readPreferencePairs("\n\n", QStringLiteral("empty.jsonl"), **tok, nullptr, 6);
    QVERIFY(!none);
    QCOMPARE(none.error().message, QStringLiteral("empty.jsonl holds no pairs"));
}

QTEST_GUILESS_MAIN(TestTextData)
#include "test_textdata.moc"
