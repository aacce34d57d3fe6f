// Hugging Face model folders, built natively: config.json read and checked, weights found by
// their Hugging Face names (one file or shards), and the logits of GPT-2, Llama (grouped
// queries, llama3 rotary scaling, untied output, two shards), Qwen2 (q/k/v biases, tied
// embeddings, one key/value head), Mistral (a sliding window of 5), Qwen3, Gemma 3, Phi-3,
// SmolLM3, OLMo 2 and Granite against a reference written from the published equations
// (python/make_hf.py, float64, loops over heads and rotation pairs), which, given any one of a
// family's own features wrong, lands far from them.
#include "model/hf/config.h"
#include "model/hf/transformer.h"
#include "model/hf/weights.h"
#include "model/scriptmodel.h"
#include "testpaths.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <set>

#include <sys/resource.h>

using namespace tandem;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");

QJsonObject object(const char* text) {
    return QJsonDocument::fromJson(QByteArray(text)).object();
}

QJsonObject llamaConfig() {
    return object(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                      "vocab_size": 64, "hidden_size": 32, "intermediate_size": 48,
                      "num_hidden_layers": 2, "num_attention_heads": 4,
                      "num_key_value_heads": 2})");
}

QByteArray json(const QJsonObject& o) {
    return QJsonDocument(o).toJson();
}

const Family& family(const char* modelType) {
    return *familyOf(QLatin1String(modelType));
}

// The folder's weights as plain records, for tests that edit them.
Expected<QList<TensorRecord>> readHfWeights(const QString& dir) {
    auto mapped = mapHfWeights(dir);
    if (!mapped)
        return mapped.error();
    QList<TensorRecord> out;
    for (const auto& [name, t] : *mapped)
        out << toRecord(name, t);
    return out;
}

NamedTensors namedOf(const QList<TensorRecord>& records) {
    NamedTensors out;
    for (const TensorRecord& r : records)
        out.emplace_back(r.name.toStdString(), *fromRecord(r));
    return out;
}

int64_t parameterCount(const HfConfig& c) {
    return HfTransformer(c).parameterCount();
}

// How many autograd nodes the backward pass of `t` walks: what the forward pass kept.
size_t graphNodes(const at::Tensor& t) {
    std::set<torch::autograd::Node*> seen;
    std::vector<torch::autograd::Node*> todo{t.grad_fn().get()};
    while (!todo.empty()) {
        torch::autograd::Node* n = todo.back();
        todo.pop_back();
        if (!n || !seen.insert(n).second)
            continue;
        for (const auto& e : n->next_edges())
            todo.push_back(e.function.get());
    }
    return seen.size();
}

} // namespace

class TestHf : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void configReadsEachFamily();
    void configReadsTheNewFamilies();
    void configRefusesWhatIsNotBuilt_data();
    void configRefusesWhatIsNotBuilt();
    void aModelNoMachineHoldsIsRefusedAtOnce();
    void logitsMatchTheReference_data();
    void logitsMatchTheReference();
    void everyWeightIsTrainable();
    void weightsAreRefusedByName();
    void shardsMustMatchTheirIndex();
    void outOfVocabularyIdsAreRefused();
    void loraSpecs();
    void loraStartsAtTheBaseAndEqualsItsMerge_data();
    void loraStartsAtTheBaseAndEqualsItsMerge();
    void loraAdaptersSaveAsPeftNamesThem();
    void exportsAreHuggingFaceFolders();
    void checkpointedBlocksGiveTheSameGradients_data();
    void checkpointedBlocksGiveTheSameGradients();
    void aTiedTablesGradientSumsBothUses();

private:
    QTemporaryDir m_tmp;
    bool m_python = false;
    std::map<QString, at::Tensor> m_expected;
};

void TestHf::initTestCase() {
    QVERIFY(m_tmp.isValid());
    QProcess p;
    p.start(kPython, {testpaths::pythonDir() + QStringLiteral("/make_hf.py"), m_tmp.path()});
    if (!p.waitForStarted(60000))
        return; // no Python here: the tests that need the reference skip
    QVERIFY(p.waitForFinished(300000));
    if (p.exitCode() != 0) {
        // Only a missing torch is a reason to skip; any other failure of the script is a bug.
        QVERIFY2(p.readAllStandardError().contains("No module named 'torch'"),
                 qPrintable(QString::fromUtf8(p.readAllStandardError())));
        return;
    }
    m_python = true;
    QFile f(m_tmp.filePath(QStringLiteral("expected.safetensors")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    auto records = parseSafetensors(f.readAll(), f.fileName());
    QVERIFY2(records, qPrintable(records ? QString() : records.error().message));
    for (const TensorRecord& r : *records)
        m_expected[r.name] = *fromRecord(r);
}

void TestHf::configReadsEachFamily() {
    QJsonObject o = llamaConfig();
    const QJsonObject extra =
        object(R"({"rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 8192},
                   "torch_dtype": "bfloat16", "eos_token_id": [128001, 128009]})");
    for (auto it = extra.begin(); it != extra.end(); ++it)
        o[it.key()] = it.value();
    auto c = parseHfConfig(json(o), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->family, &family("llama"));
    QCOMPARE(c->headDim, 8);
    QCOMPARE(c->kvHeads, 2);
    QCOMPARE(c->rope.type, Rope::Type::Llama3);
    QCOMPARE(c->rope.factor, 32.0);
    QCOMPARE(c->dtype, DType::BF16);
    QCOMPARE(c->eosTokens, (QList<int64_t>{128001, 128009}));
    QVERIFY(!c->tieEmbeddings);
    QVERIFY(!c->qkvBias);
    // 64*32 embedding + 2 layers of (q 32*32, k and v 16*32 each, o 32*32, MLP 3*32*48, two
    // norms) + final norm + untied head 64*32.
    QCOMPARE(parameterCount(*c), 2048 + 2 * (1024 + 1024 + 1024 + 4608 + 64) + 32 + 2048);

    o[QStringLiteral("model_type")] = QStringLiteral("qwen2");
    o[QStringLiteral("architectures")] = QJsonArray{QStringLiteral("Qwen2ForCausalLM")};
    o.remove(QStringLiteral("rope_scaling"));
    c = parseHfConfig(json(o), QStringLiteral("config.json"));
    QVERIFY(c);
    QVERIFY(c->qkvBias);
    QVERIFY(!c->oBias);
    QVERIFY(c->tieEmbeddings); // Qwen2's default
    QCOMPARE(c->slidingWindow, 0);

    // Qwen3: heads of 128 unless the config says, no biases, untied unless it says.
    o[QStringLiteral("model_type")] = QStringLiteral("qwen3");
    o[QStringLiteral("architectures")] = QJsonArray{QStringLiteral("Qwen3ForCausalLM")};
    c = parseHfConfig(json(o), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->headDim, 128);
    QVERIFY(!c->qkvBias && !c->tieEmbeddings);
    QVERIFY(c->family->has(Role::QNorm) && c->family->has(Role::KNorm));

    const QJsonObject gpt2 = object(R"({"model_type": "gpt2", "vocab_size": 50257,
                                         "n_positions": 1024, "n_embd": 768, "n_layer": 12,
                                         "n_head": 12})");
    c = parseHfConfig(json(gpt2), QStringLiteral("config.json"));
    QVERIFY(c);
    QCOMPARE(c->family, &family("gpt2"));
    QCOMPARE(c->intermediate, 3072);
    // GPT-2 small: 124,439,808 parameters, as published.
    QCOMPARE(parameterCount(*c), 124439808);
}

// Gemma 3, Phi-3, SmolLM3 and Granite as their published configs give them, in transformers'
// 4.x form and in 5.x's (rope_parameters, layer_types).
void TestHf::configReadsTheNewFamilies() {
    // gemma-3-1b's config.json (4.x): five sliding layers to one full, the local layers on
    // their own base.
    QJsonObject gemma = object(R"({"model_type": "gemma3_text",
        "architectures": ["Gemma3ForCausalLM"], "vocab_size": 262144, "hidden_size": 1152,
        "intermediate_size": 6912, "num_hidden_layers": 26, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": 256, "rope_local_base_freq": 10000, "rope_scaling": null,
        "rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6,
        "attn_logit_softcapping": null, "final_logit_softcapping": null,
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "torch_dtype": "bfloat16",
        "bos_token_id": 2, "eos_token_id": [1, 106]})");
    auto c = parseHfConfig(json(gemma), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->family, &family("gemma3_text"));
    QVERIFY(c->tieEmbeddings);
    QCOMPARE(c->activation, Activation::GeluTanh);
    QCOMPARE(c->headDim, 256);
    QCOMPARE(c->attnScale, 1.0 / 16);
    QCOMPARE(c->embedScale, std::sqrt(1152.0));
    QCOMPARE(c->attnSoftcap, 0.0);
    for (int64_t i = 0; i < 26; ++i)
        QCOMPARE(c->isSliding(i), (i + 1) % 6 != 0);
    QCOMPARE(c->slidingWindow, 512);
    QCOMPARE(c->rope.theta, 1e6);
    QVERIFY(c->localRope && c->localRope->theta == 10000 &&
            c->localRope->type == Rope::Type::Default);
    QCOMPARE(&c->ropeOf(0), &*c->localRope);
    QCOMPARE(&c->ropeOf(5), &c->rope);
    // Four norms and q/k norms a layer: gemma-3-1b's 999,885,952 parameters.
    QCOMPARE(parameterCount(*c), 999885952);

    // The same in 5.x's form, the global layers' rotary scaled.
    QJsonArray types;
    for (int i = 0; i < 26; ++i)
        types.append((i + 1) % 6 ? QStringLiteral("sliding_attention")
                                 : QStringLiteral("full_attention"));
    gemma.remove(QStringLiteral("sliding_window_pattern"));
    gemma.remove(QStringLiteral("rope_theta"));
    gemma.remove(QStringLiteral("rope_local_base_freq"));
    gemma[QStringLiteral("layer_types")] = types;
    gemma[QStringLiteral("rope_parameters")] = object(R"({
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})");
    c = parseHfConfig(json(gemma), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->rope.type, Rope::Type::Linear);
    QCOMPARE(c->rope.factor, 8.0);
    QCOMPARE(c->localRope->theta, 10000.0);
    QVERIFY(c->isSliding(4) && !c->isSliding(11));

    // The multimodal checkpoints are refused by name, saying which ones train.
    gemma[QStringLiteral("model_type")] = QStringLiteral("gemma3");
    c = parseHfConfig(json(gemma), QStringLiteral("config.json"));
    QVERIFY(!c);
    QVERIFY2(c.error().message.contains(QStringLiteral("Gemma3ForConditionalGeneration")) &&
                 c.error().message.contains(QStringLiteral("gemma-3-1b")),
             qPrintable(c.error().message));

    // Phi-4-mini's (4.x): three quarters of each head rotate, LongRoPE over 48 pairs.
    QJsonArray shortF, longF;
    for (int i = 0; i < 48; ++i) {
        shortF.append(1.0 + i * 0.01);
        longF.append(1.0 + i);
    }
    QJsonObject phi = object(R"({"model_type": "phi3", "architectures": ["Phi3ForCausalLM"],
        "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 8192,
        "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
        "partial_rotary_factor": 0.75, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
        "sliding_window": 262144, "tie_word_embeddings": true, "resid_pdrop": 0.0,
        "embd_pdrop": 0.0})");
    phi[QStringLiteral("rope_scaling")] =
        QJsonObject{{QStringLiteral("type"), QStringLiteral("longrope")},
                    {QStringLiteral("short_factor"), shortF},
                    {QStringLiteral("long_factor"), longF}};
    c = parseHfConfig(json(phi), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->rotaryDims, 96);
    QCOMPARE(c->rope.type, Rope::Type::LongRope);
    QCOMPARE(c->rope.originalMaxPositions, 4096);
    QCOMPARE(c->rope.longFactors[47], 48.0);
    QCOMPARE(c->rope.attentionFactor, std::sqrt(1 + std::log(32.0) / std::log(4096.0)));
    QVERIFY(c->isSliding(0) && c->slidingWindow == 262144);
    QVERIFY(c->family->has(Role::Qkv) && !c->family->has(Role::Q));
    // 5.x keeps the fraction and the original context in rope_parameters.
    QJsonObject phi5 = phi;
    phi5.remove(QStringLiteral("rope_scaling"));
    phi5.remove(QStringLiteral("partial_rotary_factor"));
    phi5.remove(QStringLiteral("original_max_position_embeddings"));
    phi5[QStringLiteral("rope_parameters")] =
        QJsonObject{{QStringLiteral("rope_type"), QStringLiteral("longrope")},
                    {QStringLiteral("rope_theta"), 10000.0},
                    {QStringLiteral("partial_rotary_factor"), 0.75},
                    {QStringLiteral("original_max_position_embeddings"), 4096},
                    {QStringLiteral("short_factor"), shortF},
                    {QStringLiteral("long_factor"), longF}};
    auto c5 = parseHfConfig(json(phi5), QStringLiteral("config.json"));
    QVERIFY2(c5, qPrintable(c5 ? QString() : c5.error().message));
    QCOMPARE(c5->rotaryDims, 96);
    QCOMPARE(c5->rope.originalMaxPositions, 4096);
    QCOMPARE(c5->rope.attentionFactor, c->rope.attentionFactor);
    // Factors that do not fit the rotated dimensions are refused, naming both counts.
    longF.removeLast();
    QJsonObject scaling = phi.value(QStringLiteral("rope_scaling")).toObject();
    scaling[QStringLiteral("long_factor")] = longF;
    phi[QStringLiteral("rope_scaling")] = scaling;
    c = parseHfConfig(json(phi), QStringLiteral("config.json"));
    QVERIFY(!c);
    QVERIFY2(c.error().message.contains(QStringLiteral("47")) &&
                 c.error().message.contains(QStringLiteral("48")),
             qPrintable(c.error().message));

    // SmolLM3: without no_rope_layers, every fourth layer takes no rotary positions.
    const QJsonObject smol = object(R"({"model_type": "smollm3",
        "architectures": ["SmolLM3ForCausalLM"], "vocab_size": 128256, "hidden_size": 2048,
        "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
        "num_key_value_heads": 4, "rope_theta": 5000000.0})");
    c = parseHfConfig(json(smol), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QVERIFY(c->tieEmbeddings);
    for (int64_t i = 0; i < 36; ++i)
        QCOMPARE(c->hasRope(i), (i + 1) % 4 != 0);

    // Granite's multipliers; OLMo 2 has no norm before attention.
    QJsonObject granite = llamaConfig();
    granite[QStringLiteral("model_type")] = QStringLiteral("granite");
    granite[QStringLiteral("architectures")] = QJsonArray{QStringLiteral("GraniteForCausalLM")};
    granite[QStringLiteral("embedding_multiplier")] = 12.0;
    granite[QStringLiteral("attention_multiplier")] = 0.0078125;
    granite[QStringLiteral("residual_multiplier")] = 0.22;
    granite[QStringLiteral("logits_scaling")] = 8.0;
    c = parseHfConfig(json(granite), QStringLiteral("config.json"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->embedScale, 12.0);
    QCOMPARE(c->attnScale, 0.0078125);
    QCOMPARE(c->residualScale, 0.22);
    QCOMPARE(c->logitsDivisor, 8.0);
    QVERIFY(!family("olmo2").has(Role::AttnNorm) && family("olmo2").has(Role::PostMlpNorm));
}

void TestHf::configRefusesWhatIsNotBuilt_data() {
    // The key, its value as JSON, the error's code and what its message must name.
    QTest::addColumn<QString>("key");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("named");
    const int unsupported = int(ErrorCode::Unsupported), corrupt = int(ErrorCode::Corrupt);
    auto row = [](const char* tag, const char* key, const char* value, int code,
                  const char* named) {
        QTest::newRow(tag) << QString::fromLatin1(key) << QByteArray(value) << code
                           << QString::fromLatin1(named);
    };
    row("model type", "model_type", R"("bert")", unsupported, R"("bert")");
    row("architecture", "architectures", R"(["LlamaForSequenceClassification"])", unsupported,
        "LlamaForSequenceClassification");
    row("activation", "hidden_act", R"("gelu")", unsupported, "hidden_act");
    row("rope scaling", "rope_scaling", R"({"rope_type": "yarn", "factor": 4})", unsupported,
        R"("yarn")");
    row("dtype", "torch_dtype", R"("float8_e4m3fn")", unsupported, "float8");
    row("heads", "num_key_value_heads", "3", corrupt, "num_key_value_heads");
    row("missing size", "hidden_size", "null", corrupt, R"("hidden_size" is missing)");
    row("negative", "num_hidden_layers", "-2", corrupt, "num_hidden_layers");
    // Sizes no model has: refused by their key before anything is planned or allocated.
    row("no heads", "num_attention_heads", "0", corrupt, "num_attention_heads");
    row("10^12 hidden", "hidden_size", "1e12", unsupported, R"("hidden_size" is 1000000000000)");
    row("10^9 hidden", "hidden_size", "1000000000", unsupported, R"("hidden_size" is 1000000000)");
    row("2^40 tokens", "vocab_size", "1099511627776", unsupported,
        R"("vocab_size" is 1099511627776)");
    row("10^89 blocks", "num_hidden_layers", "7.77778e+89", unsupported, "num_hidden_layers");
    row("2.8 x 10^8 blocks", "num_hidden_layers", "277777772", unsupported,
        R"("num_hidden_layers" is 277777772)");
    row("10^6 blocks", "num_hidden_layers", "1000000", unsupported, "num_hidden_layers");
    row("2^22 + 1 tokens", "vocab_size", "4194305", unsupported, R"("vocab_size" is 4194305)");
}

void TestHf::configRefusesWhatIsNotBuilt() {
    QFETCH(QString, key);
    QFETCH(QByteArray, value);
    QFETCH(int, code);
    QFETCH(QString, named);
    QJsonObject o = llamaConfig();
    o[key] = QJsonDocument::fromJson("{\"v\": " + value + "}").object().value(QStringLiteral("v"));
    auto c = parseHfConfig(json(o), QStringLiteral("config.json"));
    QVERIFY(!c);
    QCOMPARE(int(c.error().code), code);
    QVERIFY2(c.error().message.contains(named), qPrintable(c.error().message));
    if (key == QLatin1String("model_type"))
        QVERIFY2(c.error().message.contains(QStringLiteral("GPT2LMHeadModel, LlamaForCausalLM")),
                 qPrintable(c.error().message));
}

// A config whose sizes each pass but describe more weights than any machine holds is refused
// with the count, at once, having allocated nothing for them.
void TestHf::aModelNoMachineHoldsIsRefusedAtOnce() {
    QJsonObject o = llamaConfig();
    o[QStringLiteral("hidden_size")] = 65536;
    o[QStringLiteral("intermediate_size")] = 1 << 20;
    o[QStringLiteral("num_hidden_layers")] = 1024;
    o[QStringLiteral("num_attention_heads")] = 512;
    o[QStringLiteral("num_key_value_heads")] = 512;
    o[QStringLiteral("vocab_size")] = 1 << 22;
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    QElapsedTimer timer;
    timer.start();
    auto c = parseHfConfig(json(o), QStringLiteral("config.json"));
    const qint64 ms = timer.elapsed();
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    QVERIFY(!c);
    QCOMPARE(c.error().code, ErrorCode::Unsupported);
    // About 229,000 billion: 1,024 blocks of 223 billion weights, and the embeddings.
    const auto m = QRegularExpression(QStringLiteral("model of (\\d+) billion parameters"))
                       .match(c.error().message);
    QVERIFY2(m.hasMatch() && m.captured(1).toLongLong() > 200000, qPrintable(c.error().message));
    QVERIFY2(ms < 1000, qPrintable(QString::number(ms)));
    // The peak resident size (kB) grew by less than 100 MB.
    QVERIFY2(after.ru_maxrss - before.ru_maxrss < 100 * 1024,
             qPrintable(QString::number(after.ru_maxrss - before.ru_maxrss)));
}

void TestHf::logitsMatchTheReference_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<int>("tokens"); // the first this many of input_ids
    QTest::addColumn<QString>("expected");
    for (const char* f : {"gpt2", "llama", "qwen2", "mistral", "qwen3", "gemma3", "phi3", "smollm3",
                          "olmo2", "granite"})
        QTest::newRow(f) << QString::fromLatin1(f) << 12 << QString::fromLatin1(f);
    // Phi-3 within its original context: LongRoPE's short factors.
    QTest::newRow("phi3, short") << QStringLiteral("phi3") << 6 << QStringLiteral("phi3/short");
}

void TestHf::logitsMatchTheReference() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    QFETCH(QString, family);
    QFETCH(int, tokens);
    QFETCH(QString, expected);
    const QString dir = m_tmp.filePath(family);
    auto config = readHfConfig(dir);
    QVERIFY2(config, qPrintable(config ? QString() : config.error().message));
    auto weights = readHfWeights(dir);
    QVERIFY2(weights, qPrintable(weights ? QString() : weights.error().message));
    HfTransformer model(*config);
    const Status loaded = model.load(namedOf(*weights));
    QVERIFY2(loaded, qPrintable(loaded ? QString() : loaded.error().message));
    at::NoGradGuard noGrad;
    auto logits = model.forward(m_expected.at(QStringLiteral("input_ids")).narrow(1, 0, tokens));
    QVERIFY2(logits, qPrintable(logits ? QString() : logits.error().message));
    const at::Tensor& reference = m_expected.at(expected);
    QCOMPARE(logits->sizes().vec(), reference.sizes().vec());
    const double diff = (*logits - reference).abs().max().item<double>();
    const double scale = reference.abs().max().item<double>();
    const double tolerance = 2e-4 * std::max(1.0, scale);
    qInfo("%s: largest logit %.3f, largest difference %.2e", QTest::currentDataTag(), scale, diff);
    QVERIFY(scale > 0.5); // the reference is not trivially zero
    QVERIFY2(diff < tolerance, qPrintable(QString::number(diff)));
    // What sets the family apart matters: the reference computed with any one of its features
    // wrong (a window, the layer pattern, a rotary base or fraction, a scale, the q/k norms)
    // is far outside the tolerance this model meets.
    if (tokens != 12)
        return;
    const QString prefix = family + QLatin1Char('/');
    for (const auto& [name, wrong] : m_expected) {
        if (!name.startsWith(prefix) || name == QLatin1String("phi3/short"))
            continue;
        const double off = (*logits - wrong).abs().max().item<double>();
        qInfo("  with %s wrong the reference is %.2e away", qPrintable(name.mid(prefix.size())),
              off);
        QVERIFY2(off > 20 * tolerance, qPrintable(name));
    }
}

void TestHf::everyWeightIsTrainable() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    for (const QString& family : {QStringLiteral("gpt2"), QStringLiteral("qwen2")}) {
        HfTransformer model(*readHfConfig(m_tmp.filePath(family)));
        QVERIFY(model.load(*mapHfWeights(m_tmp.filePath(family))));
        auto logits = model.forward(m_expected.at(QStringLiteral("input_ids")));
        QVERIFY(logits);
        logits->logsumexp(-1).sum().backward();
        for (const auto& [name, t] : model.parameters())
            QVERIFY2(t.grad().defined() && t.grad().abs().sum().item<double>() > 0, name.c_str());
    }
}

void TestHf::weightsAreRefusedByName() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const QString dir = m_tmp.filePath(QStringLiteral("gpt2"));
    const HfConfig config = *readHfConfig(dir);
    const QList<TensorRecord> weights = *readHfWeights(dir);
    auto attempt = [&](const std::function<void(QList<TensorRecord>&)>& edit) {
        QList<TensorRecord> w = weights;
        edit(w);
        HfTransformer model(config);
        const Status s = model.load(namedOf(w));
        return s ? QString() : s.error().message;
    };
    auto at = [](QList<TensorRecord>& w, const char* name) -> TensorRecord& {
        for (TensorRecord& r : w)
            if (r.name == QLatin1String(name))
                return r;
        qFatal("no tensor %s", name);
    };
    QString why = attempt([&](QList<TensorRecord>& w) {
        w.removeIf(
            [](const TensorRecord& r) { return r.name == QLatin1String("h.1.mlp.c_fc.bias"); });
    });
    QVERIFY2(why.contains(QStringLiteral("lack transformer.h.1.mlp.c_fc.bias [128]")),
             qPrintable(why));
    why = attempt([&](QList<TensorRecord>& w) {
        at(w, "h.0.ln_2.bias").name = QStringLiteral("h.0.ln_3.bias");
    });
    QVERIFY2(why.contains(QStringLiteral("hold h.0.ln_3.bias")), qPrintable(why));
    why = attempt([&](QList<TensorRecord>& w) {
        TensorRecord& r = at(w, "wpe.weight");
        r.shape = {32, 16};
    });
    QVERIFY2(why.contains(QStringLiteral("wpe.weight is [32, 16] in the weights; this config "
                                         "makes it [16, 32]")),
             qPrintable(why));
    // The causal-mask buffer GPT2Model saves is known and passed over.
    QVERIFY(attempt([](QList<TensorRecord>&) {}).isEmpty());
}

void TestHf::shardsMustMatchTheirIndex() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    QTemporaryDir copy;
    const QDir from(m_tmp.filePath(QStringLiteral("llama")));
    for (const QString& f : from.entryList(QDir::Files))
        QVERIFY(QFile::copy(from.filePath(f), copy.filePath(f)));
    QVERIFY(readHfWeights(copy.path()));
    QVERIFY(QFile::remove(copy.filePath(QStringLiteral("model-00002-of-00002.safetensors"))));
    auto w = readHfWeights(copy.path());
    QVERIFY(!w);
    QCOMPARE(w.error().code, ErrorCode::NotFound);
    QVERIFY2(w.error().message.contains(QStringLiteral("model-00002-of-00002.safetensors")),
             qPrintable(w.error().message));

    QTemporaryDir empty;
    QFile pickle(empty.filePath(QStringLiteral("pytorch_model.bin")));
    QVERIFY(pickle.open(QIODevice::WriteOnly));
    pickle.close();
    w = readHfWeights(empty.path());
    QVERIFY(!w);
    QVERIFY2(w.error().message.contains(QStringLiteral("safe_serialization")),
             qPrintable(w.error().message));
}

void TestHf::outOfVocabularyIdsAreRefused() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const QString dir = m_tmp.filePath(QStringLiteral("mistral"));
    const HfConfig config = *readHfConfig(dir);
    // Each block attends 5 tokens back (logitsMatchTheReference checks the window's logits).
    QCOMPARE(config.slidingWindow, 5);
    QVERIFY(config.isSliding(0) && config.isSliding(1));
    HfTransformer model(config);
    QVERIFY(model.load(*mapHfWeights(dir)));
    // Ids outside the vocabulary are refused, not looked up.
    auto logits = model.forward(at::full({1, 3}, config.vocab, at::kLong));
    QVERIFY(!logits);
    QCOMPARE(logits.error().code, ErrorCode::InvalidArgument);
}

void TestHf::loraSpecs() {
    auto c =
        parseLoraSpec(QStringLiteral("r=4,alpha=8,dropout=0.05,targets=q_proj,v_proj,down_proj"),
                      family("llama"));
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QCOMPARE(c->rank, 4);
    QCOMPARE(c->scale(), 2.0);
    QCOMPARE(c->dropout, 0.05);
    QCOMPARE(c->targets, (QStringList{QStringLiteral("q_proj"), QStringLiteral("v_proj"),
                                      QStringLiteral("down_proj")}));
    c = parseLoraSpec(QString(), family("llama")); // every key has a default
    QVERIFY(c);
    QCOMPARE(c->rank, 8);
    QCOMPARE(c->alpha, 16.0);
    QCOMPARE(c->targets.size(), 4);
    c = parseLoraSpec(QStringLiteral("r=2"), family("gpt2"));
    QVERIFY(c);
    QCOMPARE(c->targets, QStringList{QStringLiteral("c_attn")});
    const struct {
        const char* spec;
        const char* named;
    } bad[] = {{"r=0", "r must be"},
               {"alpha=-1", "alpha must be"},
               {"dropout=1", "dropout must be"},
               {"rank=4", "unknown key \"rank\""},
               {"targets=q_proj,c_attn", "\"c_attn\" is not a linear layer"},
               {"r=4,8", "\"8\" is not KEY=VALUE"}};
    for (const auto& b : bad) {
        c = parseLoraSpec(QString::fromLatin1(b.spec), family("llama"));
        QVERIFY2(!c, b.spec);
        QCOMPARE(c.error().code, ErrorCode::InvalidArgument);
        QVERIFY2(c.error().message.contains(QString::fromLatin1(b.named)),
                 qPrintable(c.error().message));
    }
}

void TestHf::loraStartsAtTheBaseAndEqualsItsMerge_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("spec");
    QTest::newRow("gpt2") << "gpt2"
                          << "r=4,alpha=12,targets=c_attn,c_proj,c_fc";
    QTest::newRow("qwen2") << "qwen2"
                           << "r=2,targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
    // Fused projections, adapted whole as PEFT adapts them.
    QTest::newRow("phi3") << "phi3"
                          << "r=2,targets=qkv_proj,o_proj,gate_up_proj,down_proj";
    QTest::newRow("gemma3")
        << "gemma3"
        << "r=2,targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
}

// An adapted layer is W + (alpha/r) B A: with B zero the model is the base model exactly, and
// with any B it equals the base model with that product merged into its weights.
void TestHf::loraStartsAtTheBaseAndEqualsItsMerge() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    QFETCH(QString, family);
    QFETCH(QString, spec);
    const QString dir = m_tmp.filePath(family);
    const HfConfig config = *readHfConfig(dir);
    const QList<TensorRecord> weights = *readHfWeights(dir);
    const at::Tensor& ids = m_expected.at(QStringLiteral("input_ids"));
    HfTransformer base(config), adapted(config);
    QVERIFY(base.load(namedOf(weights)));
    QVERIFY(adapted.load(namedOf(weights)));
    const auto lora = parseLoraSpec(spec, *config.family);
    QVERIFY(lora);
    QVERIFY(adapted.addLora(*lora, 11));
    QVERIFY(!adapted.addLora(*lora, 11)); // once
    const at::Tensor before = *base.forward(ids);
    QVERIFY(at::equal(*adapted.forward(ids), before));

    // Every targeted layer has its A and B; nothing else trains.
    int64_t trainable = 0, adapters = 0;
    for (const auto& [name, t] : adapted.parameters()) {
        const bool isAdapter = name.find(".lora_") != std::string::npos;
        QCOMPARE(t.requires_grad(), isAdapter);
        trainable += t.requires_grad() ? t.numel() : 0;
        adapters += isAdapter ? 1 : 0;
    }
    // One adapter a target a layer (GPT-2 names two layers c_proj).
    const int64_t perLayer = config.family->conv1d ? 4 : int64_t(lora->targets.size());
    QCOMPARE(adapters, 2 * perLayer * config.layers);
    QVERIFY(trainable > 0);

    at::manual_seed(3);
    std::map<std::string, at::Tensor> merged;
    {
        at::NoGradGuard noGrad;
        for (const auto& [name, t] : adapted.parameters())
            if (name.find(".lora_B.") != std::string::npos)
                t.normal_(0, 0.1);
        std::map<std::string, at::Tensor> byName(adapted.parameters().begin(),
                                                 adapted.parameters().end());
        for (const auto& [name, t] : base.parameters()) {
            const std::string module = name.substr(0, name.size() - 7); // less ".weight"
            auto a = byName.find(module + ".lora_A.weight");
            if (a == byName.end()) {
                merged[name] = t.clone();
                continue;
            }
            const at::Tensor delta =
                at::matmul(byName.at(module + ".lora_B.weight"), a->second) * lora->scale();
            merged[name] = t + (config.family->conv1d ? delta.t() : delta);
        }
    }
    QList<TensorRecord> mergedRecords;
    for (const auto& [name, t] : merged)
        mergedRecords.append(toRecord(name, t));
    HfTransformer reference(config);
    QVERIFY(reference.load(namedOf(mergedRecords)));
    const at::Tensor got = *adapted.forward(ids);
    const double diff = (got - *reference.forward(ids)).abs().max().item<double>();
    QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    QVERIFY((got - before).abs().max().item<double>() > 1e-2); // the adapters did something

    got.logsumexp(-1).sum().backward();
    for (const auto& [name, t] : adapted.parameters())
        QCOMPARE(t.grad().defined(), t.requires_grad());

    // Dropout on the adapters' inputs: only while training.
    LoraConfig dropping = *lora;
    dropping.dropout = 0.5;
    HfTransformer noisy(config);
    QVERIFY(noisy.load(namedOf(weights)));
    QVERIFY(noisy.addLora(dropping, 11));
    {
        at::NoGradGuard noGrad;
        for (const auto& [name, t] : noisy.parameters())
            if (name.find(".lora_B.") != std::string::npos)
                t.normal_(0, 0.1);
    }
    QVERIFY(at::equal(*noisy.forward(ids), *noisy.forward(ids)));
    // Training, a pass's masks follow from its seed: the same seed, the same masks.
    const HfTransformer::Pass first{true, 1, nullptr}, second{true, 2, nullptr};
    QVERIFY(at::equal(*noisy.forward(ids, first), *noisy.forward(ids, first)));
    QVERIFY(!at::equal(*noisy.forward(ids, first), *noisy.forward(ids, second)));
}

void TestHf::loraAdaptersSaveAsPeftNamesThem() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const QString dir = m_tmp.filePath(QStringLiteral("qwen2"));
    HfTransformer model(*readHfConfig(dir));
    QVERIFY(model.load(*mapHfWeights(dir)));
    QVERIFY(model.addLora(
        *parseLoraSpec(QStringLiteral("r=2,alpha=4,targets=q_proj,v_proj"), family("llama")), 5));
    QTemporaryDir out;
    const Status saved = model.saveLoraAdapter(out.path());
    QVERIFY2(saved, qPrintable(saved ? QString() : saved.error().message));
    QFile f(out.filePath(QStringLiteral("adapter_model.safetensors")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    auto records = parseSafetensors(f.readAll(), f.fileName());
    QVERIFY(records);
    QCOMPARE(records->size(), 2 * 2 * 2); // two layers, q and v, A and B
    std::map<QString, std::vector<int64_t>> shapes;
    for (const TensorRecord& r : *records) {
        QCOMPARE(r.dtype, DType::F32);
        shapes[r.name] = r.shape;
    }
    QCOMPARE(
        shapes[QStringLiteral("base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight")],
        (std::vector<int64_t>{2, 32}));
    QCOMPARE(
        shapes[QStringLiteral("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight")],
        (std::vector<int64_t>{8, 2})); // one key/value head of 8
    QFile cf(out.filePath(QStringLiteral("adapter_config.json")));
    QVERIFY(cf.open(QIODevice::ReadOnly));
    const QJsonObject config = QJsonDocument::fromJson(cf.readAll()).object();
    QCOMPARE(config.value(QStringLiteral("peft_type")).toString(), QStringLiteral("LORA"));
    QCOMPARE(config.value(QStringLiteral("r")).toInt(), 2);
    QCOMPARE(config.value(QStringLiteral("lora_alpha")).toDouble(), 4.0);
    QCOMPARE(config.value(QStringLiteral("target_modules")).toArray().size(), 2);
}

// A model saves as the folder it came from: the same config, every weight by its name; with
// adapters, merged into the weights, so that the saved folder alone gives the adapted logits.
void TestHf::exportsAreHuggingFaceFolders() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const at::Tensor& ids = m_expected.at(QStringLiteral("input_ids"));
    for (const QString& family : {QStringLiteral("gpt2"), QStringLiteral("qwen2")}) {
        const QString dir = m_tmp.filePath(family);
        const HfConfig config = *readHfConfig(dir);
        HfTransformer model(config);
        QVERIFY(model.load(*mapHfWeights(dir)));
        QTemporaryDir plain, merged;
        QVERIFY(model.saveHfModel(plain.path()));
        auto again = readHfConfig(plain.path());
        QVERIFY(again);
        QCOMPARE(again->source, config.source);
        HfTransformer reloaded(*again);
        const auto weights = readHfWeights(plain.path());
        QVERIFY(weights);
        QVERIFY(reloaded.load(namedOf(*weights)));
        for (const TensorRecord& r : *weights) {
            QVERIFY2(r.name != QLatin1String("lm_head.weight"), "a tied output layer is left out");
            QCOMPARE(r.dtype, DType::F32);
        }
        QCOMPARE(qsizetype(weights->size()), qsizetype(model.expectedTensors().size()));
        QVERIFY(at::equal(*reloaded.forward(ids), *model.forward(ids)));

        QVERIFY(model.addLora(*parseLoraSpec(QStringLiteral("r=2"), *config.family), 3));
        {
            at::NoGradGuard noGrad;
            for (const auto& [name, t] : model.parameters())
                if (name.find(".lora_B.") != std::string::npos)
                    t.normal_(0, 0.1);
        }
        QVERIFY(model.saveHfModel(merged.path()));
        HfTransformer folded(*readHfConfig(merged.path()));
        QVERIFY(folded.load(*mapHfWeights(merged.path())));
        const at::Tensor want = *model.forward(ids);
        QVERIFY((want - *reloaded.forward(ids)).abs().max().item<double>() > 1e-2);
        const double diff = (*folded.forward(ids) - want).abs().max().item<double>();
        QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    }
}

void TestHf::checkpointedBlocksGiveTheSameGradients_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("lora"); // empty: every weight trains
    QTest::newRow("llama, full") << "llama" << QString();
    QTest::newRow("gpt2, full") << "gpt2" << QString();
    QTest::newRow("qwen2, lora with dropout") << "qwen2"
                                              << "r=2,dropout=0.3,targets=q_proj,v_proj,up_proj";
    QTest::newRow("gpt2, lora with dropout") << "gpt2"
                                             << "r=2,dropout=0.3,targets=c_attn,c_fc";
    // Four norms a layer, soft caps, local and global layers; fused projections and partial
    // rotary; layers without rotary positions; norms after attention; Granite's multipliers.
    QTest::newRow("gemma3, full") << "gemma3" << QString();
    QTest::newRow("phi3, lora with dropout") << "phi3"
                                             << "r=2,dropout=0.3,targets=qkv_proj,gate_up_proj";
    QTest::newRow("smollm3, full") << "smollm3" << QString();
    QTest::newRow("olmo2, full") << "olmo2" << QString();
    QTest::newRow("granite, full") << "granite" << QString();
}

// Recomputing each block in the backward pass changes nothing a step sees: the loss and every
// gradient are those of the pass that kept its activations, dropout masks included.
void TestHf::checkpointedBlocksGiveTheSameGradients() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    QFETCH(QString, family);
    QFETCH(QString, lora);
    const QString dir = m_tmp.filePath(family);
    const HfConfig config = *readHfConfig(dir);
    const QList<TensorRecord> weights = *readHfWeights(dir);
    const at::Tensor& ids = m_expected.at(QStringLiteral("input_ids"));
    std::vector<std::map<std::string, at::Tensor>> grads;
    std::vector<double> losses;
    std::vector<size_t> nodes;
    for (bool checkpoint : {false, true}) {
        HfTransformer model(config);
        QVERIFY(model.load(namedOf(weights)));
        if (!lora.isEmpty()) {
            QVERIFY(model.addLora(*parseLoraSpec(lora, *config.family), 5));
            at::NoGradGuard noGrad;
            at::manual_seed(9);
            for (const auto& [name, t] : model.parameters())
                if (name.find(".lora_B.") != std::string::npos)
                    t.normal_(0, 0.1);
        }
        model.setCheckpointActivations(checkpoint);
        const auto out = model.forward(ids, {true, 17, nullptr});
        QVERIFY2(out, qPrintable(out ? QString() : out.error().message));
        const at::Tensor logits = *out;
        const at::Tensor loss = at::cross_entropy_loss(
            logits.reshape({-1, logits.size(-1)}).narrow(0, 0, ids.numel() - 1),
            ids.reshape({-1}).narrow(0, 1, ids.numel() - 1));
        nodes.push_back(graphNodes(loss));
        loss.backward();
        losses.push_back(loss.item<double>());
        std::map<std::string, at::Tensor> g;
        for (const auto& [name, t] : model.parameters())
            if (t.requires_grad()) {
                QVERIFY2(t.grad().defined(), name.c_str());
                g[name] = t.grad().clone();
            }
        grads.push_back(std::move(g));
    }
    qInfo("autograd nodes kept: %zu without checkpointing, %zu with", nodes[0], nodes[1]);
    QVERIFY(nodes[1] * 2 < nodes[0]); // the blocks' insides were not kept
    QCOMPARE(losses[1], losses[0]);
    QCOMPARE(grads[1].size(), grads[0].size());
    for (const auto& [name, g] : grads[0]) {
        const double diff = (grads[1].at(name) - g).abs().max().item<double>();
        QVERIFY2(diff <= 1e-6 * std::max(1.0, g.abs().max().item<double>()),
                 qPrintable(QStringLiteral("%1: %2").arg(QString::fromStdString(name)).arg(diff)));
    }
}

void TestHf::aTiedTablesGradientSumsBothUses() {
    // A tied table's lookup adds its rows into the output layer's gradient (sparse, where it
    // lies): the same gradient as an untied model's two tables, the same weights in each, added.
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const QString dir = m_tmp.filePath(QStringLiteral("qwen2"));
    const HfConfig tied = *readHfConfig(dir);
    QVERIFY(tied.tieEmbeddings);
    HfConfig untied = tied;
    untied.tieEmbeddings = false;
    const QList<TensorRecord> weights = *readHfWeights(dir);
    const std::string table = "model.embed_tokens.weight", head = "lm_head.weight";
    NamedTensors twoTables = namedOf(weights);
    for (const auto& [name, t] : namedOf(weights))
        if (name == table)
            twoTables.emplace_back(head, t.clone());
    const at::Tensor& ids = m_expected.at(QStringLiteral("input_ids"));
    const auto gradients = [&](const HfConfig& config, const NamedTensors& named) {
        std::map<std::string, at::Tensor> g;
        HfTransformer model(config);
        if (!model.load(named))
            return g;
        const at::Tensor logits = *model.forward(ids, {true, 17, nullptr});
        at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}).narrow(0, 0, ids.numel() - 1),
                               ids.reshape({-1}).narrow(0, 1, ids.numel() - 1))
            .backward();
        for (const auto& [name, t] : model.parameters())
            g[name] = t.grad();
        return g;
    };
    const auto one = gradients(tied, namedOf(weights));
    const auto two = gradients(untied, twoTables);
    QVERIFY(one.count(table) && two.count(table) && two.count(head));
    QVERIFY(!one.count(head));
    QVERIFY(!one.at(table).is_sparse());
    for (const auto& [name, g] : one) {
        const at::Tensor expected = name == table ? two.at(table) + two.at(head) : two.at(name);
        const double diff = (g - expected).abs().max().item<double>();
        QVERIFY2(diff <= 1e-6 * std::max(1.0, expected.abs().max().item<double>()),
                 qPrintable(QStringLiteral("%1: %2").arg(QString::fromStdString(name)).arg(diff)));
    }
}

QTEST_GUILESS_MAIN(TestHf)
#include "test_hf.moc"
