// A Hugging Face folder as a model a run trains (model/model.h): its archive rebuilds the same
// transformer with and without its weights, a replica's copy shares the frozen base and owns
// what trains, a run checkpoint of it loads back, a damaged or hostile archive is an error,
// never a crash, and one model serves an evaluation and a generation from two threads at once.
#include "engine/generation.h"
#include "engine/record/runcheckpoint.h"
#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "engine/step/objective.h"
#include "engine/step/optimizer.h"
#include "hffolder.h"
#include "model/generation.h"
#include "model/hf/hfmodel.h"
#include "model/hf/transformer.h"
#include "model/model.h"
#include "model/openmodel.h"

#include <QJsonArray>

#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cstring>
#include <limits>
#include <thread>

#include <torch/torch.h>

using namespace tandem;

namespace {

at::Tensor someIds() {
    return at::arange(24, at::kLong).remainder(64).reshape({2, 12});
}

// Gives the adapters values of their own, as training would.
void perturbAdapters(const Model& m) {
    at::NoGradGuard noGrad;
    for (const auto& [name, t] : m.parameters())
        if (name.find(".lora_B.") != std::string::npos)
            t.normal_(0, 0.1);
}

// "ab" to a model folder's generation, on the CPU.
GenerateOptions fromPrompt(const QString& dir, int tokens, double temperature) {
    GenerateOptions o;
    o.model = QStringLiteral("hf:") + dir;
    o.prompt = "ab";
    o.tokens = tokens;
    o.temperature = temperature;
    o.device = QStringLiteral("cpu");
    return o;
}

} // namespace

class TestHfModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void archivesRebuildTheSameModel();
    void copiesShareOnlyTheFrozenBase();
    void runCheckpointsLoadBack();
    void damagedArchivesAreErrors();
    void fullFineTuningTrainsFp32();
    void memoryIsPlannedPerDevice();
    void aShardedRunFitsWhereOneMachineCannot();
    void kvCacheGivesTheSameLogits_data();
    void kvCacheGivesTheSameLogits();
    void generationStopsAtTheModelsPositions();
    void divergedWeightsAreAnErrorNotACrash();
    void oneModelServesTwoThreadsAtOnce();
    void aCpuSlowAtBf16ComputesTheFrozenBaseInFp32();
    void theBaseAloneIsTheReference();
    void pretrainingTpIsTheSameModel();
    void aLossOverSomePositionsComputesOnlyThose();

private:
    // A tiny GPT-2 folder with the 64-token tokenizer, under `name`; empty if not written.
    QString gpt2WithTokenizer(const QString& name, hffolder::Spec* spec) {
        spec->family = QStringLiteral("gpt2");
        const QString dir = m_tmp.filePath(name);
        return hffolder::write(dir, *spec) && hffolder::writeTokenizer(dir) ? dir : QString();
    }

    QTemporaryDir m_tmp;
    QString m_llama;
};

void TestHfModel::kvCacheGivesTheSameLogits_data() {
    QTest::addColumn<QString>("family");
    for (const char* f : {"gpt2", "llama", "qwen2", "mistral", "qwen3"})
        QTest::newRow(f) << QString::fromLatin1(f);
}

void TestHfModel::kvCacheGivesTheSameLogits() {
    // A prompt of 5 tokens, then 7 more one at a time (then 3 at once) through the cache, give
    // the logits the whole text gives at once, for each family (grouped queries, biases).
    QFETCH(QString, family);
    hffolder::Spec s;
    s.family = family;
    if (family == QLatin1String("qwen2"))
        s.kvHeads = 1;
    if (family == QLatin1String("qwen3"))
        s.headDim = 16; // wider than hidden / heads, as Qwen3's are
    const QString dir = m_tmp.filePath(QStringLiteral("kv-") + family);
    QVERIFY(hffolder::write(dir, s));
    auto m = openHfModel(dir, {QString(), false, 1});
    QVERIFY(m);
    at::NoGradGuard noGrad;
    m->eval();
    const HfTransformer* t = transformerOf(*m);
    const at::Tensor ids = at::arange(15, at::kLong).mul(7).remainder(64).reshape({1, 15});
    const at::Tensor whole = t->logits(ids);
    HfTransformer::KvCache cache;
    std::vector<at::Tensor> parts{t->logits(ids.narrow(1, 0, 5), {false, 0, &cache})};
    for (int64_t i = 5; i < 12; ++i)
        parts.push_back(t->logits(ids.narrow(1, i, 1), {false, 0, &cache}));
    parts.push_back(t->logits(ids.narrow(1, 12, 3), {false, 0, &cache}));
    QCOMPARE(cache.length, int64_t(15));
    const double diff = (at::cat(parts, 1) - whole).abs().max().item<double>();
    QVERIFY2(diff < 1e-5, qPrintable(QString::number(diff)));
}

void TestHfModel::generationStopsAtTheModelsPositions() {
    // GPT-2 reads 64 positions here, and a tokenizer with no EOS never ends an answer: asked
    // for 200 tokens, generation fills the positions and ends without an error.
    hffolder::Spec s;
    const QString dir = gpt2WithTokenizer(QStringLiteral("gen-gpt2"), &s);
    QVERIFY(!dir.isEmpty());
    QFile config(dir + QStringLiteral("/tokenizer_config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly) && config.write("{}") == 2);
    config.close();
    GenerateOptions o = fromPrompt(dir, 200, 0);
    QByteArray out;
    const Status st = generate(o, [&](const QByteArray& piece) {
        out += piece;
        return true;
    });
    QVERIFY2(st, qPrintable(st ? QString() : st.error().message));
    QVERIFY2(!out.isEmpty() && out.size() <= 63, out.constData());
}

void TestHfModel::divergedWeightsAreAnErrorNotACrash() {
    // A model whose final norm holds a NaN scores every token NaN: sampling among them is
    // refused with what it means, at any temperature.
    hffolder::Spec s;
    const QString dir = gpt2WithTokenizer(QStringLiteral("nan-gpt2"), &s);
    QVERIFY(!dir.isEmpty());
    QList<TensorRecord> weights = hffolder::weights(s);
    for (TensorRecord& r : weights)
        if (r.name == QLatin1String("transformer.ln_f.weight")) {
            const float nan = std::numeric_limits<float>::quiet_NaN();
            memcpy(r.data.data(), &nan, 4);
        }
    QVERIFY(writeSafetensors(dir + QStringLiteral("/model.safetensors"), weights, {}));
    for (double temperature : {0.0, 0.8}) {
        const GenerateOptions o = fromPrompt(dir, 5, temperature);
        const Status st = generate(o, [](const QByteArray&) { return true; });
        QVERIFY(!st);
        QVERIFY2(st.error().message.contains(QStringLiteral("not finite")),
                 qPrintable(st.error().message));
    }
}

void TestHfModel::oneModelServesTwoThreadsAtOnce() {
    // The model holds weights only: an evaluation's passes and a generation's (its KV cache in
    // its session) run on one model from two threads at once, and each gets what it gets
    // alone, every time.
    auto m = openHfModel(m_llama, {QString(), false, 1});
    QVERIFY(m);
    const Model model = *m;
    model.eval();
    at::NoGradGuard noGrad;
    const at::Tensor batch = at::arange(48, at::kLong).mul(5).remainder(64).reshape({4, 12});
    const at::Tensor expectedLogits = model.forward(batch);
    auto greedy = [&] {
        std::vector<int64_t> out;
        std::unique_ptr<GenerationSession> session = model.startGeneration();
        Sampler sampler(0, 1, 0);
        std::vector<int64_t> next{3, 1, 4, 1, 5};
        for (int i = 0; i < 20; ++i) {
            auto logits = session->next(next);
            if (!logits)
                return std::vector<int64_t>{};
            out.push_back(sampler.pick(*logits));
            next = {out.back()};
        }
        return out;
    };
    const std::vector<int64_t> expectedTokens = greedy();
    QCOMPARE(expectedTokens.size(), size_t(20));
    std::atomic<int> ready{0};
    std::atomic<bool> logitsDiffer{false}, tokensDiffer{false};
    auto startTogether = [&] {
        ready.fetch_add(1);
        while (ready.load() < 2)
            std::this_thread::yield();
    };
    std::thread evaluation([&] {
        at::NoGradGuard inThread;
        startTogether();
        for (int i = 0; i < 30; ++i)
            if (!at::equal(model.forward(batch), expectedLogits))
                logitsDiffer = true;
    });
    std::thread generation([&] {
        at::NoGradGuard inThread;
        startTogether();
        for (int i = 0; i < 10; ++i)
            if (greedy() != expectedTokens)
                tokensDiffer = true;
    });
    evaluation.join();
    generation.join();
    QVERIFY(!logitsDiffer);
    QVERIFY(!tokensDiffer);
}

void TestHfModel::initTestCase() {
    QVERIFY(m_tmp.isValid());
    hffolder::Spec s;
    s.bf16 = true;
    m_llama = m_tmp.filePath(QStringLiteral("llama"));
    QVERIFY(hffolder::write(m_llama, s));
}

void TestHfModel::archivesRebuildTheSameModel() {
    auto m = openHfModel(m_llama, {QStringLiteral("r=4,alpha=8,dropout=0.1"), true, 5});
    QVERIFY2(m, qPrintable(m ? QString() : m.error().message));
    perturbAdapters(*m);
    const ModelTensors t = modelTensors(*m);
    QCOMPARE(t.params.size(), size_t(2 * 4 * 2)); // A and B on q, k, v and o, two layers
    for (const at::Tensor& p : t.params)
        QCOMPARE(p.scalar_type(), at::kFloat);
    for (const at::Tensor& f : t.frozen)
        QCOMPARE(f.scalar_type(), at::kBFloat16);

    auto again = modelFromArchive(m->archive().value(), QStringLiteral("archive"));
    QVERIFY2(again, qPrintable(again ? QString() : again.error().message));
    QVERIFY(transformerOf(*again));
    QVERIFY(transformerOf(*again)->checkpointActivations());
    QCOMPARE(transformerOf(*again)->lora()->dropout, 0.1);
    const ModelTensors u = modelTensors(*again);
    QCOMPARE(schemaHash(u), schemaHash(t));
    for (size_t i = 0; i < t.params.size(); ++i)
        QVERIFY(at::equal(u.params[i], t.params[i]));
    for (size_t i = 0; i < t.frozen.size(); ++i)
        QVERIFY(at::equal(u.frozen[i], t.frozen[i]));
    m->eval();
    again->eval();
    QVERIFY(at::equal(m->forward(someIds()), again->forward(someIds())));

    // Without weights: the same structure, far fewer bytes.
    const QByteArray bare = m->archive(false).value();
    QVERIFY(bare.size() < m->archive().value().size() / 4);
    auto skeleton = modelFromArchive(bare, QStringLiteral("bare"));
    QVERIFY(skeleton);
    QCOMPARE(schemaHash(modelTensors(*skeleton)), schemaHash(t));
}

void TestHfModel::copiesShareOnlyTheFrozenBase() {
    auto m = openHfModel(m_llama, {QStringLiteral("r=2"), false, 1});
    QVERIFY(m);
    const Model c = m->copy();
    const ModelTensors a = modelTensors(*m), b = modelTensors(c);
    QCOMPARE(b.paramNames, a.paramNames);
    QCOMPARE(b.frozenNames, a.frozenNames);
    for (size_t i = 0; i < a.frozen.size(); ++i)
        QVERIFY(b.frozen[i].is_alias_of(a.frozen[i]));
    for (size_t i = 0; i < a.params.size(); ++i) {
        QVERIFY(!b.params[i].is_alias_of(a.params[i]));
        QVERIFY(b.params[i].is_leaf() && b.params[i].requires_grad());
    }
    // What the copy learns stays its own; its gradients reach its own adapters only.
    perturbAdapters(c);
    c.train();
    c.forward(someIds()).to(at::kFloat).logsumexp(-1).sum().backward();
    for (const at::Tensor& p : b.params)
        QVERIFY(p.grad().defined());
    for (const at::Tensor& p : a.params)
        QVERIFY(!p.grad().defined());
    QVERIFY(!at::equal(a.params[1], b.params[1]));
}

void TestHfModel::runCheckpointsLoadBack() {
    RunConfig cfg;
    cfg.model = QStringLiteral("hf:") + m_llama;
    cfg.lora = QStringLiteral("r=4");
    auto m =
        openModel(ModelSource::parse(cfg.model), {cfg.lora, cfg.checkpointActivations, cfg.seed});
    QVERIFY(m);
    perturbAdapters(*m);
    ModelTensors t = modelTensors(*m);
    OptimizerConfig oc;
    Optimizer opt(oc, t.params);
    RunState s;
    s.config = cfg;
    s.schemaHash = QString::fromLatin1(schemaHash(t));
    const QString path = m_tmp.filePath(QStringLiteral("run.tandem"));
    QVERIFY(writeRunCheckpoint(path, *m, opt, s));
    // The weights are stored once, as records: the file is about their size, not twice it.
    qint64 weightBytes = 0;
    for (const auto& [name, v] : m->parameters())
        weightBytes += v.numel() * v.element_size();
    QVERIFY(QFileInfo(path).size() < weightBytes * 3 / 2);
    auto c = loadRunCheckpoint(path);
    QVERIFY2(c, qPrintable(c ? QString() : c.error().message));
    QVERIFY(transformerOf(c->module));
    const ModelTensors u = modelTensors(c->module);
    for (size_t i = 0; i < t.params.size(); ++i)
        QVERIFY(at::equal(u.params[i], t.params[i]));
    for (size_t i = 0; i < t.frozen.size(); ++i)
        QVERIFY(at::equal(u.frozen[i], t.frozen[i]));
}

void TestHfModel::damagedArchivesAreErrors() {
    auto m = openHfModel(m_llama, {QStringLiteral("r=2"), false, 1});
    QVERIFY(m);
    const QByteArray good = m->archive().value();
    QByteArray flipped = good;
    flipped[flipped.size() / 2] = char(flipped[flipped.size() / 2] ^ 0x40);
    QVERIFY(!modelFromArchive(flipped, QStringLiteral("flipped")));
    QVERIFY(!modelFromArchive(good.left(good.size() - 9), QStringLiteral("cut")));

    // Well-formed containers with figures no model has.
    auto edited = [&](const std::function<void(TensorFile&)>& edit) {
        TensorFile f = *parseCheckpoint(m->archive(false).value(), QStringLiteral("x"));
        edit(f);
        return modelFromArchive(*serializeCheckpoint(f), QStringLiteral("peer"));
    };
    auto badRank = edited([](TensorFile& f) {
        QJsonObject lora = f.meta.value(QStringLiteral("lora")).toObject();
        lora.insert(QStringLiteral("r"), -3);
        f.meta.insert(QStringLiteral("lora"), lora);
    });
    QVERIFY(!badRank);
    QVERIFY2(badRank.error().message.contains(QLatin1String("adapters")),
             qPrintable(badRank.error().message));
    auto huge = edited([](TensorFile& f) {
        QJsonArray layout = f.meta.value(QStringLiteral("layout")).toArray();
        QJsonObject first = layout.first().toObject();
        first.insert(QStringLiteral("shape"), QJsonArray{qint64(1) << 40, qint64(1) << 40});
        layout.replace(0, first);
        f.meta.insert(QStringLiteral("layout"), layout);
    });
    QVERIFY(!huge);
    auto otherModel = edited([](TensorFile& f) {
        QJsonObject c = f.meta.value(QStringLiteral("config")).toObject();
        c.insert(QStringLiteral("model_type"), QStringLiteral("bert"));
        f.meta.insert(QStringLiteral("config"), c);
    });
    QVERIFY(!otherModel);
}

// A full fine-tune that one machine cannot hold fits one such machine that computes beside two
// that hold the state; a machine that computes keeps its worker and the step's exchange (its
// gradients on their way out), so three that compute are too few; one that cannot
// hold its own worker is named.
void TestHfModel::aShardedRunFitsWhereOneMachineCannot() {
    RunConfig cfg;
    cfg.model = QStringLiteral("hf:") + m_llama;
    cfg.mode = TrainMode::Sync;
    cfg.wire = WireDtype::Bf16;
    auto m = openModel(ModelSource::parse(cfg.model), {QString(), false, cfg.seed});
    QVERIFY(m);
    Dataset windows;
    windows.sampleShape = {32};
    const ModelTensors tensors = modelTensors(*m);
    const int64_t trainable = tensors.trainableCount();
    int64_t largest = 0;
    for (const at::Tensor& p : tensors.params)
        largest = std::max<int64_t>(largest, p.numel());
    const MemoryNeed alone = memoryNeed(*m, windows, cfg, MasterCopy::None);
    const int64_t stateBytes = trainable * shardBytesPerValue(cfg.optimizer);
    QCOMPARE(stateBytes, trainable * 12);
    // Sync streams each gradient into the bundle as the backward pass makes it, and the others'
    // weights wait in the part of it that has left: the bundle, in the wire's dtype, takes the
    // fp32 gradients' place, and beside it the largest tensor's fp32 gradient twice (a tied
    // embedding's two uses, or one gradient while the one before it is let go). A step that does
    // not stream keeps a bundle and the others' weights beside the gradients.
    QVERIFY(shardStepStreams(cfg));
    QCOMPARE(shardExchangeBytes(trainable, largest, cfg.wire, true), trainable * 2 + largest * 8);
    QCOMPARE(shardExchangeBytes(trainable, largest, WireDtype::Fp32, true),
             trainable * 4 + largest * 8);
    QCOMPARE(shardExchangeBytes(trainable, largest, WireDtype::Fp32, false), trainable * 8);
    // A streaming round's exchange is a fragment's: its delta in the wire's dtype, and in fp32
    // two fragments that land and the merge's copy of one.
    const int64_t fragment = std::min(trainable, (trainable + 3) / 4 + largest);
    QCOMPARE(shardRoundExchangeBytes(trainable, largest, WireDtype::Bf16, 4), fragment * 14);
    QCOMPARE(shardRoundExchangeBytes(trainable, largest, WireDtype::Fp32, 1000),
             std::min(trainable, (trainable + 999) / 1000 + largest) * 16);
    // The test model's embedding, its largest tensor, is tied to its output layer: trained, it
    // holds a second table while the backward pass adds its two uses, and every plan counts it
    // (a streamed step's as the exchange's second gradient of the largest tensor).
    const int64_t tied = transformerOf(*m)->config().vocab * transformerOf(*m)->config().hidden * 4;
    QCOMPARE(m->transientGradientBytes(), tied);
    QCOMPARE(largest * 4, tied);
    QCOMPARE(alone.trainingBytes, trainable * 4 + tied);
    const MemoryNeed worker = shardWorkerNeed(*m, windows, cfg);
    QCOMPARE(worker.trainingBytes, int64_t(0));
    QCOMPARE(worker.weightBytes, alone.weightBytes);
    // Over a bf16 wire the streamed gradients take half an fp32 step's; over an fp32 wire the
    // same as the replica's own gradients.
    QCOMPARE(worker.fixedBytes(), alone.fixedBytes() - tied - trainable * 2 + largest * 8);
    RunConfig fp32Wire = cfg;
    fp32Wire.wire = WireDtype::Fp32;
    QCOMPARE(shardWorkerNeed(*m, windows, fp32Wire).fixedBytes(),
             alone.fixedBytes() - tied + largest * 8);
    RunConfig fp16 = cfg;
    fp16.precision = Precision::Fp16;
    QVERIFY(!shardStepStreams(fp16));
    const MemoryNeed unstreamed = shardWorkerNeed(*m, windows, fp16);
    QCOMPARE(unstreamed.trainingBytes, trainable * 4 + tied);
    QCOMPARE(unstreamed.exchangeBytes, trainable * 4);
    const int64_t exchange = worker.exchangeBytes;
    // Off the CPU the tied lookup's gradient is dense: a third table, on a GPU's plan alone.
    DeviceInfo gpu;
    gpu.kind = DeviceKind::Cuda;
    gpu.name = QStringLiteral("Test GPU");
    DeviceInfo cpu;
    cpu.kind = DeviceKind::Cpu;
    QCOMPARE(worker.on(gpu).fixedBytes(), worker.fixedBytes() + tied);
    QCOMPARE(worker.on(cpu).fixedBytes(), worker.fixedBytes());
    QCOMPARE(alone.on(gpu).trainingBytes, trainable * 4 + 2 * tied);
    const int64_t own = worker.on(gpu).fixedBytes() + worker.perSampleBytes;
    // A budget (90 % of a GPU's memory) with room for the worker and a fifth of the state, and
    // for a segment's step beside it.
    const int64_t budget = own + stateBytes * 2 / 10 + shardOwnerStepBytes(trainable / 5, 3);
    gpu.memoryBytes = int64_t(double(budget) / 0.9) + 1;
    QVERIFY(!samplesThatFit(memoryNeed(*m, windows, cfg, MasterCopy::Shared), gpu,
                            QStringLiteral("alone")));
    const auto machine = [&](const char* name, bool computes) {
        return ShardMachine{QString::fromLatin1(name), gpu, computes, 0};
    };
    auto plan = planShardedRun(*m, windows, cfg,
                               {machine("a", true), machine("b", false), machine("c", false)});
    QVERIFY2(plan, qPrintable(plan ? QString() : plan.error().message));
    QCOMPARE(plan->values, trainable);
    // Each owner holds the one computing machine's bf16 gradients for its range while a step
    // adds them, beside the state.
    QCOMPARE(plan->bytesPerValue, shardBytesPerValue(cfg.optimizer) + 2);
    QCOMPARE(plan->shards.size(), size_t(3));
    for (int i = 0; i < 3; ++i) {
        const ShardPlan::Shard* s = plan->shardOf(i);
        QVERIFY(s);
        QVERIFY((i == 0 ? own : 0) + s->bytes <= memoryBudget(gpu));
        QVERIFY2(plan->describe(i).startsWith(QStringLiteral("shard %1 of 3, ").arg(i + 1)),
                 qPrintable(plan->describe(i)));
    }
    QVERIFY(plan->shardOf(1)->values() > plan->shardOf(0)->values());
    // The computing machine's range is sized beside the samples it computes at once, the batch's
    // (up to what its budget holds for them): where its budget holds four samples and a fifth of
    // the state, a batch of four leaves it a fifth, a batch of one its equal third.
    QVERIFY(worker.perSampleBytes > 0);
    DeviceInfo roomy = gpu;
    roomy.memoryBytes = int64_t(double(own + 3 * worker.perSampleBytes + stateBytes * 2 / 10 +
                                       shardOwnerStepBytes(trainable / 5, 3)) /
                                0.9) +
                        1;
    const std::vector<ShardMachine> three{{QStringLiteral("a"), roomy, true, 0},
                                          {QStringLiteral("b"), roomy, false, 0},
                                          {QStringLiteral("c"), roomy, false, 0}};
    RunConfig one = cfg, four = cfg;
    one.batch = 1;
    four.batch = 4;
    auto forOne = planShardedRun(*m, windows, one, three);
    auto forFour = planShardedRun(*m, windows, four, three);
    QVERIFY(forOne && forFour && forOne->shardOf(0) && forFour->shardOf(0));
    QVERIFY2(forFour->shardOf(0)->values() < forOne->shardOf(0)->values(),
             qPrintable(QStringLiteral("%1 values with a batch of 4, %2 with 1")
                            .arg(forFour->shardOf(0)->values())
                            .arg(forOne->shardOf(0)->values())));
    QVERIFY(own + 3 * worker.perSampleBytes + forFour->shardOf(0)->bytes <= memoryBudget(roomy));

    // Three that compute hold three fifths of the state at most: refused, saying what would fit.
    auto tooFew = planShardedRun(*m, windows, cfg,
                                 {machine("a", true), machine("b", true), machine("c", true)});
    QVERIFY(!tooFew);
    QCOMPARE(tooFew.error().code, ErrorCode::OutOfMemory);
    QVERIFY2(tooFew.error().message.contains(QStringLiteral("up to")) &&
                 tooFew.error().message.contains(
                     QStringLiteral("18 bytes each: the fp32 master and the optimizer's state, "
                                    "and 6 for the computing machines' gradients until a step sums "
                                    "them")),
             qPrintable(tooFew.error().message));

    ShardMachine small = machine("small", true);
    small.device.memoryBytes = int64_t(double(worker.fixedBytes()) / 0.9) / 2;
    auto refused =
        planShardedRun(*m, windows, cfg, {machine("a", true), small, machine("c", false)});
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.startsWith(QStringLiteral("small's Test GPU")) &&
                 refused.error().message.contains(QStringLiteral("left out of the computing")) &&
                 refused.error().message.contains(
                     QStringLiteral("%1 for the sharded step's exchange").arg(bytesText(exchange))),
             qPrintable(refused.error().message));
}

void TestHfModel::fullFineTuningTrainsFp32() {
    auto m = openHfModel(m_llama, {QString(), false, 1});
    QVERIFY(m);
    const ModelTensors t = modelTensors(*m);
    QVERIFY(t.frozen.empty());
    for (const at::Tensor& p : t.params)
        QCOMPARE(p.scalar_type(), at::kFloat);
    QCOMPARE(transformerOf(*m)->config().source.value(QStringLiteral("torch_dtype")).toString(),
             QStringLiteral("float32"));
}

void TestHfModel::memoryIsPlannedPerDevice() {
    RunConfig cfg;
    cfg.model = QStringLiteral("hf:") + m_llama;
    cfg.lora = QStringLiteral("r=4");
    auto lora =
        openModel(ModelSource::parse(cfg.model), {cfg.lora, cfg.checkpointActivations, cfg.seed});
    QVERIFY(lora);
    Dataset windows;
    windows.sampleShape = {32};
    const ModelTensors t = modelTensors(*lora);
    int64_t weights = 0;
    for (const at::Tensor& p : t.params)
        weights += p.numel() * 4;
    for (const at::Tensor& f : t.frozen)
        weights += f.numel() * 2; // bf16
    const MemoryNeed sync = memoryNeed(*lora, windows, cfg, MasterCopy::None);
    QCOMPARE(sync.weightBytes, weights);
    QCOMPARE(sync.trainingBytes, t.trainableCount() * 4); // gradients
    QCOMPARE(lora->transientGradientBytes(), int64_t(0)); // the tied embedding is frozen
    // Local-SGD: Adam's moments, and where the round's weights started; its delta in the host's
    // memory. The coordinator's masters keep the outer optimizer's momentum, not Adam's moments,
    // and its record of what each remote worker holds.
    const int64_t n = t.trainableCount();
    cfg.mode = TrainMode::LocalSgd;
    cfg.workers = 2;
    const MemoryNeed local = memoryNeed(*lora, windows, cfg, MasterCopy::None);
    QCOMPARE(local.trainingBytes, n * 16);
    QCOMPARE(local.hostBytes, n * 4);
    const MemoryNeed localMasters = memoryNeed(*lora, windows, cfg, MasterCopy::Separate);
    QCOMPARE(localMasters.trainingBytes, n * 24);
    QCOMPARE(localMasters.hostBytes, n * (4 + 2 * 4));
    QCOMPARE(memoryNeed(*lora, windows, cfg, MasterCopy::Shared).trainingBytes,
             n * 20); // the masters are the replica's own weights
    // Beyond the same run in sync: Adam's moments and the round's copy on a worker; against
    // masters that an fp32 replica in sync reads in place (Adam's state and the gradients).
    QCOMPARE(local.beyondSyncBytes, n * 12);
    QCOMPARE(local.beyondSyncHostBytes, n * 4);
    QCOMPARE(localMasters.beyondSyncBytes, n * 12);
    QCOMPARE(localMasters.beyondSyncHostBytes, n * 12);
    cfg.outerMomentum = 0;
    QCOMPARE(memoryNeed(*lora, windows, cfg, MasterCopy::Separate).trainingBytes, n * 20);
    cfg.outerMomentum = 0.9;
    // Streaming: one copy of the fragments, and one fragment's delta, both in the host's memory;
    // the coordinator copies the weights for a worker that starts whole.
    cfg.fragments = 4;
    const MemoryNeed streaming = memoryNeed(*lora, windows, cfg, MasterCopy::None);
    QCOMPARE(streaming.trainingBytes, n * 12);
    QCOMPARE(streaming.hostBytes, n * 4 + (n * 4 + 3) / 4);
    QCOMPARE(memoryNeed(*lora, windows, cfg, MasterCopy::Separate).trainingBytes, n * 24);
    // The host's part counts where the device is the CPU, not on an accelerator.
    DeviceInfo host;
    host.kind = DeviceKind::Cpu;
    DeviceInfo card;
    card.kind = DeviceKind::Cuda;
    QCOMPARE(streaming.on(host).trainingBytes, n * 12 + streaming.hostBytes);
    QCOMPARE(streaming.on(card).trainingBytes, n * 12);
    QCOMPARE(streaming.on(host).hostBytes, int64_t(0));
    QCOMPARE(outerWorkerSideBytes(*lora, true, OuterWire::Int8, 1), n * 8);
    QCOMPARE(outerWorkerSideBytes(*lora, false, OuterWire::Int8, 1), n * 4);
    // An fp32 outer wire keeps no residual; what it holds is the bytes it sends, one fragment's
    // where the run streams. A rounding wire's residuals cover every fragment.
    QCOMPARE(outerWorkerSideBytes(*lora, true, OuterWire::Fp32, 1), n * 8);
    QCOMPARE(outerWorkerSideBytes(*lora, true, OuterWire::Fp32, 4), n * 4 + (n * 4 + 3) / 4);
    QCOMPARE(outerWorkerSideBytes(*lora, true, OuterWire::Int4, 4), n * 8);
    QCOMPARE(outerWorkerSideBytes(*lora, false, OuterWire::Fp32, 4), n * 4);
    cfg.fragments = 1;
    cfg.workers = 0;
    QVERIFY(sync.perSampleBytes > 0);
    Dataset longer;
    longer.sampleShape = {64};
    QVERIFY(memoryNeed(*lora, longer, cfg, MasterCopy::None).perSampleBytes >
            2 * sync.perSampleBytes);
    transformerOf(*lora)->setCheckpointActivations(true);
    QVERIFY(memoryNeed(*lora, windows, cfg, MasterCopy::None).perSampleBytes < sync.perSampleBytes);

    // Where the coordinator's masters sit beside its own worker: read in place by an fp32 replica
    // in sync, a copy of their own for a bf16 replica or local-SGD's inner steps, nothing on an
    // accelerator while they live in the host's memory.
    DeviceInfo cpu;
    cpu.kind = DeviceKind::Cpu;
    DeviceInfo gpu;
    gpu.kind = DeviceKind::Cuda;
    RunConfig sgd;
    QCOMPARE(mastersBeside(cpu, false, sgd), MasterCopy::Shared);
    QCOMPARE(mastersBeside(gpu, true, sgd), MasterCopy::Shared);
    QCOMPARE(mastersBeside(gpu, false, sgd), MasterCopy::None);
    sgd.precision = Precision::Bf16;
    QCOMPARE(mastersBeside(cpu, false, sgd), MasterCopy::Separate);
    sgd.precision = Precision::Fp32;
    sgd.mode = TrainMode::LocalSgd;
    QCOMPARE(mastersBeside(cpu, false, sgd), MasterCopy::Separate);

    gpu.name = QStringLiteral("Test GPU");
    gpu.memoryBytes = 0;
    QCOMPARE(*samplesThatFit(sync, gpu, QStringLiteral("w1")), int64_t(0)); // not known
    gpu.memoryBytes = int64_t(double(sync.fixedBytes() + 5 * sync.perSampleBytes + 7) / 0.9) + 1;
    QCOMPARE(*samplesThatFit(sync, gpu, QStringLiteral("w1")), int64_t(5));
    gpu.memoryBytes = int64_t(double(sync.fixedBytes()) / 0.9);
    auto refused = samplesThatFit(sync, gpu, QStringLiteral("w1"));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::OutOfMemory);
    for (const char* says : {"w1's Test GPU", "for each sample", "--lora", "of weights"})
        QVERIFY2(refused.error().message.contains(QLatin1String(says)),
                 qPrintable(refused.error().message));
    QVERIFY2(!refused.error().message.contains(QLatin1String("--mode sync")),
             qPrintable(refused.error().message));
    // A local-SGD run says what it keeps beyond sync; on a GPU, without what it keeps on the
    // host.
    RunConfig rounds = cfg;
    rounds.mode = TrainMode::LocalSgd;
    rounds.lora.clear();
    const MemoryNeed local2 = memoryNeed(*lora, windows, rounds, MasterCopy::None);
    refused = samplesThatFit(local2, gpu, QStringLiteral("w1"));
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QStringLiteral("local SGD's rounds keep %1 of that "
                                                             "beyond what sync does: --mode sync "
                                                             "needs less")
                                                  .arg(bytesText(local2.beyondSyncBytes))),
             qPrintable(refused.error().message));
}

void TestHfModel::aCpuSlowAtBf16ComputesTheFrozenBaseInFp32() {
    // The same logits as the folder's weights widened to fp32, from one fp32 copy that copies
    // of the model share, counted by the plan; the parameters (and so exports, archives and
    // checkpoints) keep the bf16 base. Not on a CPU fast at bf16, nor where the copy does not fit.
    RunConfig cfg;
    cfg.lora = QStringLiteral("r=4");
    Dataset windows;
    windows.sampleShape = {16};
    DeviceInfo cpu;
    cpu.kind = DeviceKind::Cpu;
    cpu.memoryBytes = int64_t(64) << 30;
    auto open = [&] { return openHfModel(m_llama, {cfg.lora, false, 3}); };
    auto fast = open();
    QVERIFY(fast);
    qputenv("TANDEM_CPU_BF16", "fast");
    QVERIFY(widenSlowFrozenBase(*fast, windows, cfg, cpu, MasterCopy::Shared).isEmpty());
    QCOMPARE(fast->widenedBaseBytes(), int64_t(0));

    qputenv("TANDEM_CPU_BF16", "slow");
    auto lora = open();
    QVERIFY(lora);
    int64_t frozen = 0;
    for (const at::Tensor& f : modelTensors(*lora).frozen)
        frozen += f.numel();
    const MemoryNeed narrow = memoryNeed(*lora, windows, cfg, MasterCopy::Shared);
    const QString said = widenSlowFrozenBase(*lora, windows, cfg, cpu, MasterCopy::Shared);
    QVERIFY2(said.contains(QLatin1String("fp32 copy")), qPrintable(said));
    QCOMPARE(lora->widenedBaseBytes(), frozen * 4);
    const MemoryNeed wide = memoryNeed(*lora, windows, cfg, MasterCopy::Shared);
    QCOMPARE(wide.weightBytes, narrow.weightBytes + frozen * 4);
    QVERIFY(wide.perSampleBytes > narrow.perSampleBytes); // activations in fp32
    for (const at::Tensor& f : modelTensors(*lora).frozen)
        QCOMPARE(f.scalar_type(), at::kBFloat16);

    auto reference = openHfModel(m_llama, {QString(), false, 3}); // every weight widened
    QVERIFY(reference);
    at::NoGradGuard noGrad;
    lora->eval();
    reference->eval();
    const at::Tensor ids = at::arange(12, at::kLong).mul(5).remainder(64).reshape({1, 12});
    const at::Tensor got = lora->forward(ids), want = reference->forward(ids);
    QCOMPARE(got.scalar_type(), at::kFloat);
    const double diff = (got - want).abs().max().item<double>();
    QVERIFY2(diff < 1e-5, qPrintable(QString::number(diff))); // B starts at zero
    const Model copy = lora->copy();
    QCOMPARE(copy.widenedBaseBytes(), frozen * 4);
    QCOMPARE((copy.forward(ids) - got).abs().max().item<double>(), 0.0);

    // Room for the bf16 base and one window, not for the copy: left as it is, saying why.
    auto tight = open();
    QVERIFY(tight);
    const MemoryNeed need = memoryNeed(*tight, windows, cfg, MasterCopy::Shared);
    cpu.memoryBytes = int64_t(double(need.fixedBytes() + need.perSampleBytes) / 0.8) + 1024;
    const QString refused = widenSlowFrozenBase(*tight, windows, cfg, cpu, MasterCopy::Shared);
    QVERIFY2(refused.contains(QLatin1String("would not fit")), qPrintable(refused));
    QCOMPARE(tight->widenedBaseBytes(), int64_t(0));
    qunsetenv("TANDEM_CPU_BF16");
}

void TestHfModel::theBaseAloneIsTheReference() {
    // A LoRA model's pass without its adapters is its base: the same logits as the model with
    // every adapter's B set to zero, bit for bit, however far the adapters have moved, in
    // training (with the adapters' dropout) and with the blocks' activations recomputed alike.
    // Preference tuning takes it as the reference, for one more pass and no second model.
    const at::Tensor ids = someIds();
    for (const bool recompute : {false, true}) {
        auto lora = openHfModel(m_llama, {QStringLiteral("r=4,dropout=0.1"), recompute, 3});
        QVERIFY2(lora, qPrintable(lora ? QString() : lora.error().message));
        perturbAdapters(*lora);
        lora->train();
        const at::Tensor base = lora->forwardBase(ids);
        QVERIFY(!base.requires_grad()); // nothing of the base trains
        const at::Tensor with = lora->forward(ids);
        QVERIFY(with.requires_grad());
        const double moved = (with.detach() - base).abs().max().item<double>();
        QVERIFY2(moved > 1e-3, qPrintable(QString::number(moved)));
        {
            at::NoGradGuard noGrad;
            for (const auto& [name, t] : lora->parameters())
                if (name.find(".lora_B.") != std::string::npos)
                    t.zero_();
        }
        QCOMPARE((lora->forward(ids).detach() - base).abs().max().item<double>(), 0.0);
        QCOMPARE(lora->forwardBase(ids).sizes(), base.sizes());
    }
}

void TestHfModel::pretrainingTpIsTheSameModel() {
    // SmolLM3's published config says pretraining_tp: 2. transformers' Llama code either ignores
    // it or splits each product into that many slices and joins them again: the same model. The
    // folder is accepted, and its logits are those of the same weights without the key.
    const QString dir = m_tmp.filePath(QStringLiteral("tp"));
    hffolder::Spec spec;
    QVERIFY(hffolder::write(dir, spec));
    const at::Tensor ids = someIds();
    QString error;
    auto logitsOf = [&]() -> at::Tensor {
        auto m = openHfModel(dir, {QString(), false, 1});
        if (!m) {
            error = m.error().message;
            return {};
        }
        at::NoGradGuard noGrad;
        m->eval();
        return transformerOf(*m)->logits(ids);
    };
    const at::Tensor plain = logitsOf();
    QVERIFY2(plain.defined(), qPrintable(error));
    QJsonObject config = hffolder::config(spec);
    config.insert(QStringLiteral("pretraining_tp"), 2);
    QFile f(QDir(dir).filePath(QStringLiteral("config.json")));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QJsonDocument(config).toJson());
    f.close();
    const at::Tensor tp = logitsOf();
    QVERIFY2(tp.defined(), qPrintable(error));
    QVERIFY(at::equal(tp, plain));
}

void TestHfModel::aLossOverSomePositionsComputesOnlyThose() {
    // A chat's loss counts its answers' tokens only: the model is asked for the logits at
    // those positions alone ([K, vocab], not [B, T, vocab]), and the loss, its figures and every
    // gradient are those of the whole output with the other positions ignored. Full fine-tuning
    // and LoRA with the blocks recomputed, in training.
    const at::Tensor ids = someIds();
    at::Tensor target = ids.roll(-1, 1).clone();
    target.index_put_({0, at::indexing::Slice(0, 7)}, kIgnoredTarget); // a prompt
    target.index_put_({1, at::indexing::Slice(0, 3)}, kIgnoredTarget);
    target.index_put_({1, at::indexing::Slice(9, 12)}, kIgnoredTarget); // padding
    const Objective objective{LossKind::CrossEntropy, Task::Sequence};
    for (const QString& lora : {QString(), QStringLiteral("r=4,alpha=8")}) {
        auto m = openHfModel(m_llama, {lora, !lora.isEmpty(), 7});
        QVERIFY2(m, qPrintable(m ? QString() : m.error().message));
        if (!lora.isEmpty())
            perturbAdapters(*m);
        m->train();
        const at::Tensor rows = countedRows(objective, *m, target);
        QVERIFY(rows.defined());
        QCOMPARE(rows.numel(), int64_t(24 - 7 - 3 - 3));
        // Nothing to leave out, or a loss that is not over positions: the whole output.
        QVERIFY(!countedRows(objective, *m, ids.roll(-1, 1)).defined());
        QVERIFY(!countedRows(Objective{LossKind::Mse, Task::Sequence}, *m, target).defined());

        auto pass = [&](const at::Tensor& counted, std::vector<at::Tensor>* grads) {
            for (const auto& [name, p] : m->parameters())
                if (p.grad().defined())
                    p.mutable_grad().zero_();
            const ObjectiveOutput out = objectiveForward(objective, *m, ids, nullptr, counted);
            const BatchLoss b = batchLoss(objective, *m, out, target);
            b.loss.backward();
            grads->clear();
            for (const auto& [name, p] : m->parameters())
                if (p.requires_grad())
                    grads->push_back(p.grad().clone());
            return std::make_tuple(out.output.sizes().vec(), b.loss.item<double>(),
                                   b.correct.item<int64_t>(), b.counted.item<int64_t>());
        };
        std::vector<at::Tensor> whole, some;
        const auto [wholeShape, wholeLoss, wholeCorrect, wholeCounted] = pass({}, &whole);
        const auto [someShape, someLoss, someCorrect, someCounted] = pass(rows, &some);
        QCOMPARE(wholeShape.size(), size_t(3));
        QCOMPARE(someShape, (std::vector<int64_t>{rows.numel(), wholeShape[2]}));
        QVERIFY2(std::abs(someLoss - wholeLoss) <= 1e-6 * wholeLoss,
                 qPrintable(QStringLiteral("%1 against %2").arg(someLoss).arg(wholeLoss)));
        QCOMPARE(someCorrect, wholeCorrect);
        QCOMPARE(someCounted, wholeCounted);
        QCOMPARE(someCounted, rows.numel());
        QCOMPARE(some.size(), whole.size());
        QVERIFY(!some.empty());
        for (size_t i = 0; i < some.size(); ++i)
            QVERIFY2(at::allclose(some[i], whole[i], 1e-4, 1e-6),
                     qPrintable(QStringLiteral("gradient %1 differs by %2")
                                    .arg(i)
                                    .arg((some[i] - whole[i]).abs().max().item<double>())));
        // A batch that counts no position at all (a part of prompts only): no logits, a loss
        // of zero and no gradient, as the whole output gives.
        const at::Tensor none = at::full_like(target, kIgnoredTarget);
        const at::Tensor empty = countedRows(objective, *m, none);
        QVERIFY(empty.defined());
        QCOMPARE(empty.numel(), int64_t(0));
        const ObjectiveOutput out = objectiveForward(objective, *m, ids, nullptr, empty);
        QCOMPARE(out.output.size(0), int64_t(0));
        const BatchLoss b = batchLoss(objective, *m, out, none);
        QCOMPARE(b.loss.item<double>(), 0.0);
        QCOMPARE(b.counted.item<int64_t>(), int64_t(0));
        b.loss.backward();
    }
}

QTEST_GUILESS_MAIN(TestHfModel)
#include "test_hfmodel.moc"
