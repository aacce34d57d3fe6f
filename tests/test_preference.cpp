// Preference tuning end to end with real tandem processes: a tiny Llama-style folder with a
// trained tokenizer (python/make_tokenizers.py) learns from prefs: pairs that the chosen answer
// names a fruit's colour and the rejected one another colour, a rule its random base does not
// follow. DPO on LoRA adapters (the reference is the base with them off), on an nf4 base too,
// and on every weight (the reference's log-probabilities computed before training), and ORPO
// on every weight raise the held-out pairs' reward accuracy above 0.9 (ORPO's
// cross-entropy term teaches the whole answer, which adapters on this random base learn far
// more slowly than the one word the pairs differ in);
// and a sync run on the coordinator and two workers follows the one-process run step for step.

#include "chatdata.h"
#include "engine/training.h"
#include "hffolder.h"
#include "proc.h"
#include "testpaths.h"
#include "testutil.h"

#include <QJsonArray>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>

#include <cmath>

using namespace tandem;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

const char* const kColours[] = {"red", "yellow", "green", "purple", "orange"};

// "What colour is a plum?" with " A plum is purple." chosen and " A plum is green." (another
// colour) rejected; every third line in the conversational form.
QByteArray pairLines(int count, quint32 seed) {
    QRandomGenerator rng(seed);
    QByteArray out;
    for (int i = 0; i < count; ++i) {
        const auto& f = chatdata::kFruits[rng.bounded(8)];
        const char* wrong = f[1];
        while (qstrcmp(wrong, f[1]) == 0)
            wrong = kColours[rng.bounded(5)];
        const QString q = QStringLiteral("What colour is a %1?").arg(QLatin1String(f[0]));
        const QString good =
            QStringLiteral("A %1 is %2.").arg(QLatin1String(f[0]), QLatin1String(f[1]));
        const QString bad =
            QStringLiteral("A %1 is %2.").arg(QLatin1String(f[0]), QLatin1String(wrong));
        QJsonObject o;
        if (i % 3 == 0) {
            const auto msg = [](const char* role, const QString& text) {
                return QJsonArray{QJsonObject{{QStringLiteral("role"), QLatin1String(role)},
                                              {QStringLiteral("content"), text}}};
            };
            o = {{QStringLiteral("prompt"), msg("user", q)},
                 {QStringLiteral("chosen"), msg("assistant", good)},
                 {QStringLiteral("rejected"), msg("assistant", bad)}};
        } else {
            o = {{QStringLiteral("prompt"), q},
                 {QStringLiteral("chosen"), QLatin1Char(' ') + good},
                 {QStringLiteral("rejected"), QLatin1Char(' ') + bad}};
        }
        out += QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
    }
    return out;
}

// A figure of every step in a run's metrics.jsonl.
QList<double> stepFigure(const QString& metrics, const QString& key) {
    QList<double> out;
    QFile f(metrics);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray& l : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(l).object();
        if (o.value(QStringLiteral("type")).toString() == QLatin1String("step"))
            out << o.value(key).toDouble(NAN);
    }
    return out;
}

QList<double> stepLosses(const QString& metrics) {
    return stepFigure(metrics, QStringLiteral("loss"));
}

} // namespace

class TestPreference : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aRunLearnsWhichAnswerIsPreferred_data();
    void aRunLearnsWhichAnswerIsPreferred();
    void twoWorkersInSyncFollowOneProcess_data();
    void twoWorkersInSyncFollowOneProcess();
    void aFullDpoRunResumesAgainstTheSameReference();
    void mistakesAreRefusedBeforeTraining();
    void theCheckShowsAPairAsTheModelReadsIt();

private:
    QString home(const char* name) const { return m_tmp.filePath(QLatin1String(name)); }
    QStringList common() const {
        return {QStringLiteral("train"), QStringLiteral("--threads=1"),
                QStringLiteral("--no-history"), QStringLiteral("--model=hf:") + home("llama"),
                QStringLiteral("--data=prefs:%1,context=64,test=%2").arg(m_pairs, m_heldOut)};
    }

    QTemporaryDir m_tmp;
    QString m_pairs, m_heldOut;
};

void TestPreference::initTestCase() {
    QVERIFY(m_tmp.isValid());
    QProcess p;
    p.start(kPython,
            {testpaths::pythonDir() + QStringLiteral("/make_tokenizers.py"), home("tokenizers")});
    QVERIFY2(p.waitForFinished(120000) && p.exitCode() == 0,
             qPrintable(QStringLiteral("make_tokenizers.py (needs Debian's python3-regex): ") +
                        QString::fromUtf8(p.readAllStandardError())));
    hffolder::Spec spec;
    spec.vocab = 704; // the trained tokenizers give about 660 ids
    const QString dir = home("llama");
    QVERIFY(hffolder::write(dir, spec));
    QFile::remove(dir + QStringLiteral("/tokenizer.json"));
    QVERIFY(QFile::copy(home("tokenizers") + QStringLiteral("/llama2/tokenizer.json"),
                        dir + QStringLiteral("/tokenizer.json")));
    QFile c(home("tokenizers") + QStringLiteral("/llama2/tokenizer_config.json"));
    QVERIFY(c.open(QIODevice::ReadOnly));
    QJsonObject config = QJsonDocument::fromJson(c.readAll()).object();
    QFile templates(testpaths::dataDir() + QStringLiteral("/chat_templates.json"));
    QVERIFY(templates.open(QIODevice::ReadOnly));
    config.insert(
        QStringLiteral("chat_template"),
        QJsonDocument::fromJson(templates.readAll()).object().value(QStringLiteral("llama2")));
    QVERIFY(testutil::writeFile(dir + QStringLiteral("/tokenizer_config.json"),
                                QJsonDocument(config).toJson()));
    m_pairs = home("pairs.jsonl");
    m_heldOut = home("held-out.jsonl");
    QVERIFY(testutil::writeFile(m_pairs, pairLines(240, 3)));
    QVERIFY(testutil::writeFile(m_heldOut, pairLines(40, 11)));
    const QString coordId = identityAt(home("coord"));
    for (const char* w : {"w1", "w2"})
        QVERIFY(!trustEachOther(home("coord"), coordId, home(w)).isEmpty());
}

void TestPreference::aRunLearnsWhichAnswerIsPreferred_data() {
    QTest::addColumn<QStringList>("args");
    const QString lora = QStringLiteral("--lora=r=8,alpha=16,targets=q_proj,k_proj,v_proj,o_proj,"
                                        "gate_proj,up_proj,down_proj");
    const QString nf4 = QStringLiteral("--lora=base=nf4,r=8,alpha=16,targets=q_proj,k_proj,v_proj,"
                                       "o_proj,gate_proj,up_proj,down_proj");
    QTest::newRow("dpo-lora") << QStringList{QStringLiteral("--loss=dpo"), lora,
                                             QStringLiteral("--lr=0.01")};
    QTest::newRow("dpo-nf4") << QStringList{QStringLiteral("--loss=dpo"), nf4,
                                            QStringLiteral("--lr=0.01")};
    QTest::newRow("dpo-full") << QStringList{QStringLiteral("--loss=dpo"),
                                             QStringLiteral("--lr=0.003")};
    QTest::newRow("orpo-full") << QStringList{
        QStringLiteral("--loss=orpo"), QStringLiteral("--lr=0.01"), QStringLiteral("--beta=1"),
        QStringLiteral("--epochs=12")};
}

void TestPreference::aRunLearnsWhichAnswerIsPreferred() {
    QFETCH(QStringList, args);
    const QString out = home("run-") + QLatin1String(QTest::currentDataTag());
    TandemProcess c(common() +
                    QStringList{QStringLiteral("--batch=16"), QStringLiteral("--epochs=4"),
                                QStringLiteral("--out=") + out} +
                    args);
    QVERIFY2(c.finish(600000) && c.exitCode() == 0, qPrintable(c.err()));
    const QJsonObject s = c.summary();
    const double accuracy = s.value(QStringLiteral("test_accuracy")).toDouble(-1);
    const QList<double> losses = stepLosses(out + QStringLiteral("/metrics.jsonl"));
    QVERIFY(losses.size() >= 40);
    qInfo("%s: first step's loss %.4f, last %.4f, held-out reward accuracy %.3f",
          QTest::currentDataTag(), losses.first(), losses.last(), accuracy);
    QCOMPARE(s.value(QStringLiteral("loss")).toString(), args.first().mid(7));
    QVERIFY2(accuracy > 0.9, qPrintable(c.err().right(2000)));
    QVERIFY(losses.last() < losses.first());
    // TRL's figures, under its names: the held-out margin is the chosen reward less the
    // rejected one, and positive once the pairs are told apart.
    const double chosen = s.value(QStringLiteral("test_rewards/chosen")).toDouble(NAN),
                 rejected = s.value(QStringLiteral("test_rewards/rejected")).toDouble(NAN),
                 margin = s.value(QStringLiteral("test_rewards/margins")).toDouble(NAN);
    QVERIFY2(std::abs(margin - (chosen - rejected)) < 1e-6 * std::max(1.0, std::abs(margin)) &&
                 margin > 0,
             qPrintable(QStringLiteral("%1 %2 %3").arg(chosen).arg(rejected).arg(margin)));
    QVERIFY(s.value(QStringLiteral("test_logps/chosen")).toDouble(0) < 0);
    QVERIFY(s.value(QStringLiteral("test_logps/rejected")).toDouble(0) < 0);
    const QList<double> margins =
        stepFigure(out + QStringLiteral("/metrics.jsonl"), QStringLiteral("rewards/margins"));
    QCOMPARE(margins.size(), losses.size());
    // DPO's first step: the policy is the reference, so every reward is 0, to the rounding of
    // two passes over the same weights (LibTorch 2.6 sums some of them in another order on some
    // processors: 9.5e-8 on a 2-core AMD EPYC; a logp's fp32 rounding times beta is about 1e-7).
    if (args.first() == QLatin1String("--loss=dpo"))
        QVERIFY2(std::abs(margins.first()) < 1e-5, qPrintable(QString::number(margins.first())));
    QVERIFY(margins.last() > margins.first());
}

void TestPreference::twoWorkersInSyncFollowOneProcess_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("dpo-lora") << QStringList{
        QStringLiteral("--loss=dpo"), QStringLiteral("--beta=0.2"),
        QStringLiteral("--lora=r=4,alpha=8,targets=q_proj,v_proj,down_proj")};
    // Every weight: the reference's figures go to each worker with its samples.
    QTest::newRow("dpo-full") << QStringList{QStringLiteral("--loss=dpo"),
                                             QStringLiteral("--beta=0.2")};
    QTest::newRow("orpo-full") << QStringList{QStringLiteral("--loss=orpo"),
                                              QStringLiteral("--beta=0.5")};
}

void TestPreference::twoWorkersInSyncFollowOneProcess() {
    // A pair is one sample: the coordinator's worker and two others each take whole pairs, and
    // the step's loss is the mean over pairs as one process computes it.
    QFETCH(QStringList, args);
    const QStringList run = common() + args +
                            QStringList{QStringLiteral("--lr=0.01"), QStringLiteral("--batch=12"),
                                        QStringLiteral("--max-steps=8"),
                                        QStringLiteral("--mode=sync"), QStringLiteral("--seed=4")};
    const QString tag = QLatin1String(QTest::currentDataTag());
    const QString one = home("sync-one-") + tag, three = home("sync-three-") + tag;
    TandemProcess a(run + QStringList{QStringLiteral("--out=") + one});
    QVERIFY2(a.finish(600000) && a.exitCode() == 0, qPrintable(a.err()));
    TandemProcess b(run + QStringList{QStringLiteral("--out=") + three,
                                      QStringLiteral("--listen=127.0.0.1:0"),
                                      QStringLiteral("--workers=2"), QStringLiteral("--home"),
                                      home("coord"), QStringLiteral("--worker-timeout=60")});
    const QString port = b.waitForErr(QStringLiteral("listening on 127\\.0\\.0\\.1:(\\d+)"));
    QVERIFY2(!port.isEmpty(), qPrintable(b.err()));
    const auto workers = startWorkers(port, {home("w1"), home("w2")});
    QVERIFY2(b.finish(600000) && b.exitCode() == 0, qPrintable(b.err()));
    for (auto& w : workers)
        w->finish(60000);
    int took = 0;
    for (const QJsonValue& w : b.summary().value(QStringLiteral("workers")).toArray())
        took += w.toObject().value(QStringLiteral("samples")).toInteger() > 0 ? 1 : 0;
    QVERIFY2(took >= 2, QJsonDocument(b.summary()).toJson().constData());
    const QList<double> la = stepLosses(one + QStringLiteral("/metrics.jsonl"));
    const QList<double> lb = stepLosses(three + QStringLiteral("/metrics.jsonl"));
    QCOMPARE(la.size(), 8);
    QCOMPARE(lb.size(), 8);
    for (int i = 0; i < la.size(); ++i)
        QVERIFY2(std::abs(la[i] - lb[i]) <= 1e-4 * std::max(1.0, std::abs(la[i])),
                 qPrintable(QStringLiteral("step %1: %2 vs %3").arg(i + 1).arg(la[i]).arg(lb[i])));
    // The figures of each step, gathered from every worker, are one process's too.
    const QList<double> ma =
        stepFigure(one + QStringLiteral("/metrics.jsonl"), QStringLiteral("rewards/margins"));
    const QList<double> mb =
        stepFigure(three + QStringLiteral("/metrics.jsonl"), QStringLiteral("rewards/margins"));
    QCOMPARE(mb.size(), ma.size());
    for (int i = 0; i < ma.size(); ++i)
        QVERIFY2(std::abs(ma[i] - mb[i]) <= 1e-4 * std::max(1.0, std::abs(ma[i])),
                 qPrintable(QStringLiteral("step %1: %2 vs %3").arg(i + 1).arg(ma[i]).arg(mb[i])));
    // DPO's first step's policy is the reference: every pair's margin is 0, the loss log 2.
    if (tag.startsWith(QLatin1String("dpo")))
        QVERIFY2(std::abs(la.first() - std::log(2.0)) < 1e-5,
                 qPrintable(QString::number(la.first())));
}

void TestPreference::aFullDpoRunResumesAgainstTheSameReference() {
    // The reference is the model the run started from, not the checkpoint's weights: a run
    // stopped after 4 steps and resumed goes on as the run that never stopped.
    const QStringList run =
        common() + QStringList{QStringLiteral("--loss=dpo"), QStringLiteral("--lr=0.003"),
                               QStringLiteral("--batch=12"), QStringLiteral("--seed=4")};
    const QString whole = home("resume-whole"), parts = home("resume-parts");
    TandemProcess a(run +
                    QStringList{QStringLiteral("--max-steps=8"), QStringLiteral("--out=") + whole});
    QVERIFY2(a.finish(300000) && a.exitCode() == 0, qPrintable(a.err()));
    TandemProcess b(run +
                    QStringList{QStringLiteral("--max-steps=4"), QStringLiteral("--out=") + parts});
    QVERIFY2(b.finish(300000) && b.exitCode() == 0, qPrintable(b.err()));
    TandemProcess c({QStringLiteral("train"), QStringLiteral("--resume"),
                     parts + QStringLiteral("/checkpoint.tandem"), QStringLiteral("--max-steps=8"),
                     QStringLiteral("--threads=1"), QStringLiteral("--no-history")});
    QVERIFY2(c.finish(300000) && c.exitCode() == 0, qPrintable(c.err()));
    const QList<double> la = stepLosses(whole + QStringLiteral("/metrics.jsonl"));
    const QList<double> lb = stepLosses(parts + QStringLiteral("/metrics.jsonl"));
    QCOMPARE(la.size(), 8);
    QVERIFY(lb.size() >= 8);
    for (int i = 1; i <= 4; ++i)
        QVERIFY2(std::abs(la[la.size() - i] - lb[lb.size() - i]) < 1e-4,
                 qPrintable(QStringLiteral("step %1 from the end: %2 vs %3")
                                .arg(i)
                                .arg(la[la.size() - i])
                                .arg(lb[lb.size() - i])));
}

void TestPreference::mistakesAreRefusedBeforeTraining() {
    const auto refused = [this](const QStringList& args, const QString& words) {
        TandemProcess c(common() + args +
                        QStringList{QStringLiteral("--max-steps=1"),
                                    QStringLiteral("--out=") + home("refused")});
        if (!c.finish(120000) || c.exitCode() == 0 || !c.err().contains(words)) {
            qWarning().noquote() << c.err();
            return false;
        }
        return true;
    };
    // Pairs are not text to predict.
    QVERIFY(refused({QStringLiteral("--loss=cross-entropy")},
                    QStringLiteral("use --loss dpo or orpo")));
    QVERIFY(refused({QStringLiteral("--loss=orpo"), QStringLiteral("--beta=0")},
                    QStringLiteral("--beta must be above 0")));
}

void TestPreference::theCheckShowsAPairAsTheModelReadsIt() {
    // The New run form's check: the first pair, its prompt written with the chat template where
    // the line is conversational, and each answer's tokens, the ones its loss counts.
    RunConfig c;
    c.model = QStringLiteral("hf:") + home("llama");
    c.lora = QStringLiteral("r=4");
    c.data = QStringLiteral("prefs:%1,context=64").arg(m_pairs);
    auto check = checkRunInputs(c);
    QVERIFY2(check, qPrintable(check ? QString() : check.error().message));
    qInfo("%s", qPrintable(check->preview));
    // pairLines(…, 3)'s first line is conversational: the Llama 2 template's [INST] markup.
    QVERIFY2(check->summary.contains(QStringLiteral("loss dpo (preference)")),
             qPrintable(check->summary));
    QVERIFY2(check->preview.contains(QStringLiteral("[INST]")) &&
                 check->preview.contains(QStringLiteral("[/INST]»")) &&
                 check->preview.contains(QStringLiteral("What colour is a")),
             qPrintable(check->preview));
    const QRegularExpression answer(QStringLiteral("chosen «\\s*A (\\w+) is (\\w+)\\.[^»]*»; "
                                                   "rejected «\\s*A (\\w+) is (\\w+)\\.[^»]*»"));
    const QRegularExpressionMatch m = answer.match(check->preview);
    QVERIFY2(m.hasMatch(), qPrintable(check->preview));
    QCOMPARE(m.captured(1), m.captured(3));  // the same fruit
    QVERIFY(m.captured(2) != m.captured(4)); // another colour
}

QTEST_GUILESS_MAIN(TestPreference)
#include "test_preference.moc"
