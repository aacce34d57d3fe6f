// Chat templates: the families' own templates (data/chat_templates.json: Llama 3, Qwen2,
// Mistral, Zephyr/TinyLlama, Llama 2, Phi-4-mini; and the published Qwen3, Qwen2.5, Gemma 3 and
// Llama 3 files of tests/npm where installed) and one that uses every construct the interpreter
// offers are rendered over several conversations, with and without the generation prompt, and
// compared with Jinja2 set up as Hugging Face sets it up (python/render_chat.py). A template
// that raises is an error with its message; constructs outside the subset are refused when
// the template is read, by name and line.

#include "formats/chattemplate.h"
#include "testpaths.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

using namespace tandem;

namespace {

using Conversation = std::vector<ChatMessage>;

QList<Conversation> conversations() {
    return {
        {{QStringLiteral("system"), QStringLiteral("You answer in one line.")},
         {QStringLiteral("user"), QStringLiteral("What is 2+2?")},
         {QStringLiteral("assistant"), QStringLiteral("4.")},
         {QStringLiteral("user"), QStringLiteral("  And 3+3?\n")},
         {QStringLiteral("assistant"), QStringLiteral("6, of course.\nNext?")}},
        {{QStringLiteral("user"), QStringLiteral("Grüße 🙂 — 机器学习?")},
         {QStringLiteral("assistant"), QStringLiteral("  नमस्ते  ")}},
        {{QStringLiteral("user"), QStringLiteral("one")}},
        {{QStringLiteral("user"), QStringLiteral("a")},
         {QStringLiteral("user"), QStringLiteral("b")}}, // not alternating
        // A reasoning model's answer, as Qwen3's template takes it apart.
        {{QStringLiteral("user"), QStringLiteral("Think first: 3*7?")},
         {QStringLiteral("assistant"), QStringLiteral("<think>\nSeven threes.\n</think>\n\n21.")},
         {QStringLiteral("user"), QStringLiteral("And 4*7?")}},
    };
}

QJsonArray json(const Conversation& c) {
    QJsonArray a;
    for (const ChatMessage& m : c)
        a.append(
            QJsonObject{{QStringLiteral("role"), m.role}, {QStringLiteral("content"), m.content}});
    return a;
}

} // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void matchesJinja2();
    void unsupportedConstructsAreRefusedByLine();
    void raisedExceptionsAreErrors();
    void hostileTemplatesAreStoppedByName_data();
    void hostileTemplatesAreStoppedByName();
};

void TestChatTemplate::matchesJinja2() {
    QFile f(testpaths::dataDir() + QStringLiteral("/chat_templates.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject templates = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(templates.size() >= 6);
    // The published models' own templates, where the README's test command installed their
    // tokenizer files (tests/npm): Qwen3 (reasoning, tools), Qwen2.5, Gemma 3, Llama 3.
    for (const char* name : {"qwen3", "qwen2_5", "gemma3", "llama3"}) {
        QFile c(testpaths::npmDir() + QStringLiteral("/tokenizers/") + QLatin1String(name) +
                QStringLiteral("/tokenizer_config.json"));
        if (!c.open(QIODevice::ReadOnly))
            continue;
        const QString t = QJsonDocument::fromJson(c.readAll())
                              .object()
                              .value(QStringLiteral("chat_template"))
                              .toString();
        if (!t.isEmpty())
            templates.insert(QStringLiteral("published ") + QLatin1String(name), t);
    }
    qInfo("%lld templates", qint64(templates.size()));
    QJsonArray cases;
    QList<Expected<QString>> ours;
    for (auto it = templates.begin(); it != templates.end(); ++it) {
        auto t = ChatTemplate::parse(it.value().toString(), it.key());
        QVERIFY2(t, qPrintable(t ? QString() : t.error().message));
        for (const Conversation& c : conversations())
            for (bool gen : {false, true}) {
                cases.append(QJsonObject{{QStringLiteral("template"), it.value()},
                                         {QStringLiteral("messages"), json(c)},
                                         {QStringLiteral("add_generation_prompt"), gen},
                                         {QStringLiteral("bos_token"), QStringLiteral("<s>")},
                                         {QStringLiteral("eos_token"), QStringLiteral("</s>")}});
                ours.append(t->render(c, gen, QStringLiteral("<s>"), QStringLiteral("</s>")));
            }
    }
    QProcess p;
    p.start(QStringLiteral("/usr/bin/python3"),
            {testpaths::pythonDir() + QStringLiteral("/render_chat.py")});
    QVERIFY(p.waitForStarted());
    p.write(QJsonDocument(cases).toJson());
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, qPrintable(QStringLiteral("render_chat.py (needs Debian's "
                                                          "python3-jinja2): ") +
                                           QString::fromUtf8(p.readAllStandardError())));
    const QJsonArray ref = QJsonDocument::fromJson(p.readAllStandardOutput()).array();
    QCOMPARE(ref.size(), cases.size());
    int errors = 0;
    for (qsizetype i = 0; i < ref.size(); ++i) {
        const QJsonObject r = ref[i].toObject();
        const QString what =
            QStringLiteral("case %1 (%2)")
                .arg(i)
                .arg(QString::fromUtf8(
                    QJsonDocument(cases[i].toObject().value(QStringLiteral("messages")).toArray())
                        .toJson(QJsonDocument::Compact)));
        if (r.contains(QStringLiteral("error"))) {
            ++errors;
            QVERIFY2(!ours[i], qPrintable(what + QStringLiteral(": Jinja2 raised ") +
                                          r.value(QStringLiteral("error")).toString()));
            QVERIFY2(ours[i].error().message.contains(r.value(QStringLiteral("error")).toString()),
                     qPrintable(ours[i].error().message));
            continue;
        }
        QVERIFY2(ours[i], qPrintable(what + QStringLiteral(": ") +
                                     (ours[i] ? QString() : ours[i].error().message)));
        QCOMPARE(*ours[i], r.value(QStringLiteral("text")).toString());
    }
    QVERIFY(errors >= 4); // Mistral's and Llama 2's alternation checks
}

void TestChatTemplate::unsupportedConstructsAreRefusedByLine() {
    const QList<QPair<QString, QString>> cases{
        {QStringLiteral("a\n{% macro m() %}x{% endmacro %}"),
         QStringLiteral("line 2: {% macro %}")},
        {QStringLiteral("{{ messages|wordcount }}"), QStringLiteral("|wordcount")},
        {QStringLiteral("{% for a, b in x %}{% endfor %}"), QStringLiteral("unpacking")},
        {QStringLiteral("{% if x %}open"), QStringLiteral("{% endif %}")},
        {QStringLiteral("{{ 'open }}"), QStringLiteral("not closed")},
        {QStringLiteral("{{ x y }}"), QStringLiteral("unexpected \"y\"")},
    };
    for (const auto& [source, expected] : cases) {
        auto t = ChatTemplate::parse(source, QStringLiteral("tokenizer_config.json"));
        if (t) {
            // Filters and methods are looked up when they run.
            auto r = t->render({{QStringLiteral("user"), QStringLiteral("x")}}, false, {}, {});
            QVERIFY2(!r, qPrintable(source));
            QVERIFY2(r.error().message.contains(expected), qPrintable(r.error().message));
            continue;
        }
        QVERIFY2(t.error().message.contains(expected) &&
                     t.error().message.startsWith(QStringLiteral("tokenizer_config.json")),
                 qPrintable(t.error().message));
    }
}

void TestChatTemplate::raisedExceptionsAreErrors() {
    auto t = ChatTemplate::parse(
        QStringLiteral("{% for m in messages %}\n{% if m.role not in ['user', 'assistant'] "
                       "%}\n{{ raise_exception('role ' + m.role + ' is not allowed') }}\n{% "
                       "endif %}{{ m.content }}{% endfor %}"),
        QStringLiteral("t"));
    QVERIFY(t);
    QCOMPARE(*t->render({{QStringLiteral("user"), QStringLiteral("hi")}}, false, {}, {}),
             QStringLiteral("hi"));
    auto r = t->render({{QStringLiteral("tool"), QStringLiteral("x")}}, false, {}, {});
    QVERIFY(!r);
    QVERIFY2(r.error().message.contains(QStringLiteral("line 3")) &&
                 r.error().message.contains(QStringLiteral("role tool is not allowed")),
             qPrintable(r.error().message));
}

// A template comes with a downloaded model. One that nests without end, loops without end,
// builds texts or lists of gigabytes, or counts past the integers is stopped, with the reason,
// in well under a second.
void TestChatTemplate::hostileTemplatesAreStoppedByName_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("reason");
    QTest::newRow("brackets") << QStringLiteral("{{ ") + QString(5000, QLatin1Char('(')) +
                                     QStringLiteral("1") + QString(5000, QLatin1Char(')')) +
                                     QStringLiteral(" }}")
                              << QStringLiteral("nests more than");
    QTest::newRow("not") << QStringLiteral("{{ ") + QStringLiteral("not ").repeated(100000) +
                                QStringLiteral("x }}")
                         << QStringLiteral("nests more than");
    QTest::newRow("else if") << QStringLiteral("{{ 1") +
                                    QStringLiteral(" if x else 1").repeated(20000) +
                                    QStringLiteral(" }}")
                             << QStringLiteral("nests more than");
    QTest::newRow("statements") << QStringLiteral("{% if true %}").repeated(5000) +
                                       QStringLiteral("{% endif %}").repeated(5000)
                                << QStringLiteral("nests more than");
    QTest::newRow("loops") << QStringLiteral("{% for a in range(100000) %}{% for b in "
                                             "range(100000) %}{% endfor %}{% endfor %}")
                           << QStringLiteral("loops more than");
    QTest::newRow("doubling text")
        << QStringLiteral("{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
                          "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}")
        << QStringLiteral("builds a text of more than");
    QTest::newRow("doubling list")
        << QStringLiteral("{% set ns = namespace(l=[1]) %}{% for i in range(64) %}"
                          "{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | length }}")
        << QStringLiteral("builds a list of more than");
    QTest::newRow("one text many times")
        << QStringLiteral("{% set ns = namespace(s='abcdefgh', l=[]) %}{% for i in range(20) %}"
                          "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{% for i in range(100) %}"
                          "{% set ns.l = ns.l + [ns.s] %}{% endfor %}{{ ns.l }}")
        << QStringLiteral("builds a text of more than");
    QTest::newRow("replace") << QStringLiteral("{% set ns = namespace(s='aaaaaaaa') %}"
                                               "{% for i in range(12) %}{% set ns.s = "
                                               "ns.s.replace('a', 'aaaaaaaa') %}{% endfor %}")
                             << QStringLiteral("builds a text of more than");
    QTest::newRow("output") << QStringLiteral("{% for i in range(1000000) %}") +
                                   QString(1000, QLatin1Char('x')) + QStringLiteral("{% endfor %}")
                            << QStringLiteral("builds a text of more than");
    QTest::newRow("integers") << QStringLiteral("{{ 9223372036854775807 + 1 }}")
                              << QStringLiteral("goes past the integers");
    QTest::newRow("negation") << QStringLiteral("{{ -(-9223372036854775807 - 1) }}")
                              << QStringLiteral("goes past the integers");
    QTest::newRow("source") << QStringLiteral("{{ 1 }}").repeated(200000)
                            << QStringLiteral("more than the");
}

void TestChatTemplate::hostileTemplatesAreStoppedByName() {
    QFETCH(QString, source);
    QFETCH(QString, reason);
    QElapsedTimer timer;
    timer.start();
    auto t = ChatTemplate::parse(source, QStringLiteral("tokenizer_config.json"));
    QString message = t ? QString() : t.error().message;
    if (t) {
        auto out = t->render({{QStringLiteral("user"), QStringLiteral("Hi")}}, true,
                             QStringLiteral("<s>"), QStringLiteral("</s>"));
        QVERIFY(!out);
        message = out.error().message;
    }
    qInfo("%s: %lld ms: %s", QTest::currentDataTag(), qint64(timer.elapsed()), qPrintable(message));
    QVERIFY2(message.contains(reason), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("tokenizer_config.json")), qPrintable(message));
    // Stopped by its limits, not left to run: unstopped, the slowest of these would take many
    // minutes. The bound is far from what a stopped one takes (a few hundred milliseconds), so
    // that a loaded machine does not fail it.
    QVERIFY2(timer.elapsed() < 30000, qPrintable(QString::number(timer.elapsed())));
}

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chattemplate.moc"
