// Text in, text out with real tandem processes on loopback: a tiny GPT-2-style and a tiny
// Llama-style Hugging Face folder, each with its own tokenizer (trained by
// python/make_tokenizers.py: byte-level BPE, and SentencePiece-style BPE with byte fallback)
// and chat template, fine-tuned with LoRA from a chat: file by a coordinator and two workers.
// The loss on held-out assistant tokens falls, and `tandem generate --chat` answers from the
// run's exported folder with the trained adapters merged in.

#include "chatdata.h"
#include "hffolder.h"
#include "proc.h"
#include "testpaths.h"
#include "testutil.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <memory>

using namespace tandem;
using chatdata::chatLines;
using chatdata::knownWords;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

// A family's tiny folder with one of the trained tokenizers and a chat template.
bool writeFolder(const QString& dir, const QString& family, const QString& tokenizers,
                 const QString& kind, const QString& chatTemplate) {
    hffolder::Spec spec;
    spec.family = family;
    spec.vocab = 704; // the trained tokenizers give about 660 ids
    spec.layers = 2;
    // GPT-2's learned positions as Hugging Face initialises them. Frozen at the token
    // embeddings' width they drown which token stands where: the adapters then reached
    // held-out losses of 2.30 to 2.46 and now and then answered in no word of the answers
    // ("Ad.", and "ple." even at rank 16); with these, 1.80 to 1.94 in eight runs, answers
    // such as "A plum is red." and "A plum is plum is purple".
    spec.positionStd = 0.02;
    if (!hffolder::write(dir, spec))
        return false;
    QFile::remove(dir + QStringLiteral("/tokenizer.json"));
    if (!QFile::copy(tokenizers + QLatin1Char('/') + kind + QStringLiteral("/tokenizer.json"),
                     dir + QStringLiteral("/tokenizer.json")))
        return false;
    QFile c(tokenizers + QLatin1Char('/') + kind + QStringLiteral("/tokenizer_config.json"));
    if (!c.open(QIODevice::ReadOnly))
        return false;
    QJsonObject config = QJsonDocument::fromJson(c.readAll()).object();
    config.insert(QStringLiteral("chat_template"), chatTemplate);
    return testutil::writeFile(dir + QStringLiteral("/tokenizer_config.json"),
                               QJsonDocument(config).toJson());
}

} // namespace

class TestHfChat : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void chatLoraWithTwoWorkersThenGenerate_data();
    void chatLoraWithTwoWorkersThenGenerate();

private:
    QString home(const char* name) const { return m_tmp.filePath(QLatin1String(name)); }

    QTemporaryDir m_tmp;
    QString m_chat;
};

void TestHfChat::initTestCase() {
    QVERIFY(m_tmp.isValid());
    QProcess p;
    p.start(kPython, {testpaths::pythonDir() + QStringLiteral("/make_tokenizers.py"),
                      m_tmp.filePath(QStringLiteral("tokenizers"))});
    QVERIFY2(p.waitForFinished(120000) && p.exitCode() == 0,
             qPrintable(QStringLiteral("make_tokenizers.py (needs Debian's python3-regex): ") +
                        QString::fromUtf8(p.readAllStandardError())));
    QFile templates(testpaths::dataDir() + QStringLiteral("/chat_templates.json"));
    QVERIFY(templates.open(QIODevice::ReadOnly));
    const QJsonObject t = QJsonDocument::fromJson(templates.readAll()).object();
    // GPT-2 ships no template: a plain one that ends each answer with the EOS.
    const QString plain = QStringLiteral(
        "{% for m in messages %}{% if m.role == 'assistant' %}Assistant: {{ m.content }}{{ "
        "eos_token }}\n{% else %}{{ m.role|capitalize }}: {{ m.content }}\n{% endif %}{% endfor "
        "%}{% if add_generation_prompt %}Assistant:{% endif %}");
    QVERIFY(writeFolder(home("gpt2"), QStringLiteral("gpt2"), home("tokenizers"),
                        QStringLiteral("gpt2"), plain));
    QVERIFY(writeFolder(home("llama"), QStringLiteral("llama"), home("tokenizers"),
                        QStringLiteral("llama2"), t.value(QStringLiteral("llama2")).toString()));
    m_chat = home("chat.jsonl");
    QVERIFY(testutil::writeFile(m_chat, chatLines(400, 5)));
    const QString coordId = identityAt(home("coord"));
    for (const char* w : {"w1", "w2"})
        QVERIFY(!trustEachOther(home("coord"), coordId, home(w)).isEmpty());
}

void TestHfChat::chatLoraWithTwoWorkersThenGenerate_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("targets");
    QTest::addColumn<QString>("lr");
    QTest::newRow("gpt2") << QStringLiteral("gpt2") << QStringLiteral("c_attn,c_proj,c_fc")
                          << QStringLiteral("0.005");
    QTest::newRow("llama") << QStringLiteral("llama")
                           << QStringLiteral(
                                  "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
                           << QStringLiteral("0.004");
}

void TestHfChat::chatLoraWithTwoWorkersThenGenerate() {
    QFETCH(QString, family);
    QFETCH(QString, targets);
    QFETCH(QString, lr);
    const QString out = home("run-") + family;
    TandemProcess c(
        {QStringLiteral("train"), QStringLiteral("--threads=1"),
         QStringLiteral("--listen=127.0.0.1:0"), QStringLiteral("--workers=2"),
         QStringLiteral("--home"), home("coord"), QStringLiteral("--worker-timeout=60"),
         QStringLiteral("--no-history"), QStringLiteral("--model=hf:") + home(qPrintable(family)),
         QStringLiteral("--data=chat:%1,context=48").arg(m_chat),
         QStringLiteral("--lora=r=8,alpha=16,targets=") + targets, QStringLiteral("--lr=") + lr,
         QStringLiteral("--batch=16"), QStringLiteral("--epochs=60"), QStringLiteral("--mode=sync"),
         QStringLiteral("--out=") + out});
    const QString port = c.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(c.err()));
    const auto workers = startWorkers(port, {home("w1"), home("w2")});
    QVERIFY2(c.finish(600000) && c.exitCode() == 0, qPrintable(c.err()));
    for (auto& w : workers)
        w->finish(60000);
    const QJsonObject s = c.summary();
    for (const QJsonValue& w : s.value(QStringLiteral("workers")).toArray())
        QVERIFY(w.toObject().value(QStringLiteral("samples")).toInteger() > 0);
    QVERIFY2(c.err().contains(QStringLiteral("through %1's tokenizer").arg(family)),
             qPrintable(c.err()));
    const double first = firstLoss(out + QStringLiteral("/metrics.jsonl"));
    const double test = s.value(QStringLiteral("test_loss")).toDouble();
    qInfo("%s: first step's loss %.3f on assistant tokens, held-out loss %.3f", qPrintable(family),
          first, test);
    QVERIFY2(test < first - 1.0,
             qPrintable(QStringLiteral("first %1, test %2").arg(first).arg(test)));

    // The run's Hugging Face export answers, with the tokenizer and template copied beside it,
    // in words of the answers it learnt from ("A <fruit> is <colour>."); the untrained base
    // folder answers in none. How much comes out whole varies with the order the workers' parts
    // arrive in, so the words are held to, not the sentence; the held-out loss above is the
    // measure of the training itself.
    const auto generate = [](const QString& model, const QString& question) {
        TandemProcess g({QStringLiteral("generate"), QStringLiteral("--model=") + model,
                         QStringLiteral("--chat"), QStringLiteral("--prompt=") + question,
                         QStringLiteral("--tokens=24"), QStringLiteral("--temperature=0")});
        if (!g.finish(120000) || g.exitCode() != 0) {
            qWarning("generate failed: %s", qPrintable(g.err()));
            return QString(); // an error's own words must not count as an answer's
        }
        return g.out().trimmed();
    };
    const QString plum = QStringLiteral("What colour is a plum?");
    const QString untrained = generate(QStringLiteral("hf:") + home(qPrintable(family)), plum);
    const QString answer =
        generate(QStringLiteral("hf:") + out + QStringLiteral("/hf-model"), plum);
    qInfo("%s answers: %s (untrained: %s)", qPrintable(family), qPrintable(answer),
          qPrintable(untrained));
    QVERIFY(!answer.isEmpty() && !untrained.isEmpty());
    QVERIFY2(knownWords(answer) > 0, qPrintable(answer));
    QVERIFY2(knownWords(untrained) == 0, qPrintable(untrained));
    // The run's checkpoint answers too, through the base folder's tokenizer with the adapters
    // unmerged: greedy, as the export with them merged in.
    QCOMPARE(generate(out + QStringLiteral("/checkpoint.tandem"), plum), answer);
    const QString lime = generate(out + QStringLiteral("/checkpoint.tandem"),
                                  QStringLiteral("What colour is a lime?"));
    QVERIFY2(knownWords(lime) > 0, qPrintable(lime));
}

QTEST_GUILESS_MAIN(TestHfChat)
#include "test_hfchat.moc"
