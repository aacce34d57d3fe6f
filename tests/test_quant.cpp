// A quantized base, against a reference written from the published algorithms in PyTorch
// (python/quant_reference.py, no code of Tandem's): NF4's codes, block absmax and double
// quantization and int8's rows bit for bit on random tensors, zeros, blocks of one value and
// partial blocks; a weight with an infinity refused; a bitsandbytes-layout folder read as it is
// published, giving the logits of the weights the reference says it holds; quantizing at load
// the same as that folder; LoRA on a quantized base learning, with gradients that reach the
// adapters through the dequantized weights; and the merged export written dequantized.

#include "common/deviceinfo.h"
#include "engine/step/memoryplan.h"
#include "hffolder.h"
#include "model/hf/hfmodel.h"
#include "model/hf/quant.h"
#include "model/hf/transformer.h"
#include "model/model.h"
#include "model/openmodel.h"
#include "model/trafficledger.h"
#include "testpaths.h"
#include "torchpython.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace tandem;

namespace {

at::Tensor tensorOf(const TensorRecord& r) {
    auto t = fromRecord(r);
    return t ? *t : at::Tensor();
}

QByteArray bytesOf(const at::Tensor& t) {
    const at::Tensor c = t.contiguous().cpu();
    return QByteArray(static_cast<const char*>(c.data_ptr()),
                      int(c.numel() * int64_t(c.element_size())));
}

// Random tensors of the shapes the cases need: a normal matrix, a partial last block with an
// odd count, a zero block and a block of one value, more than 256 blocks (several nested ones),
// bf16, and one larger than the part a weight is quantized in.
NamedTensors cases() {
    at::manual_seed(11);
    NamedTensors c;
    c.emplace_back("normal", at::randn({16, 96}) * 0.02);
    c.emplace_back("odd", at::randn({7, 9}));
    at::Tensor special = at::randn({6, 64});
    special[1].zero_();
    special[2].fill_(0.5);
    special[3].fill_(-3.0);
    special[4].zero_();
    special[4][17] = 1e-3;
    c.emplace_back("special", special);
    c.emplace_back("large", at::randn({300, 256}) * 0.05);
    c.emplace_back("bf16", (at::randn({40, 72}) * 0.1).to(at::kBFloat16));
    // Quantized a part of 4 Mi values at a time: two parts, the last block partial, odd.
    c.emplace_back("parts", (at::randn({1025, 4097}) * 0.02).to(at::kBFloat16));
    return c;
}

QList<TensorRecord> recordsOf(const NamedTensors& ts) {
    QList<TensorRecord> out;
    for (const auto& [name, t] : ts)
        out << toRecord(name, t);
    return out;
}

// The dequantization as it was written first, one generic operator after another in fp32,
// converted to `dtype` at the end: what dequantize() must equal, bit for bit.
at::Tensor dequantizeStepwise(const QuantizedWeight& q, at::ScalarType dtype) {
    if (q.kind == BaseQuant::Int8)
        return (q.packed.to(at::kFloat) * q.absmax.view({-1, 1}) * 7.874015718698502e-3f).to(dtype);
    at::Tensor absmax = q.absmax;
    if (q.nested()) {
        const int64_t blocks = q.absmax.numel(), nb = q.nestedBlocksize;
        const int64_t padded = q.nestedAbsmax.numel() * nb;
        at::Tensor v = q.nestedCode.index_select(0, q.absmax.to(at::kInt));
        if (padded > blocks)
            v = at::cat({v, at::zeros({padded - blocks}, v.options())});
        absmax =
            (v.view({-1, nb}) * q.nestedAbsmax.view({-1, 1})).reshape({-1}).narrow(0, 0, blocks) +
            q.offset;
    }
    const at::Tensor bytes = at::arange(256, q.code.options().dtype(at::kInt));
    const at::Tensor pairs = at::stack({q.code.index_select(0, bytes.floor_divide(16)),
                                        q.code.index_select(0, bytes.remainder(16))},
                                       1);
    const int64_t n = q.numel(), bs = q.blocksize, blocks = absmax.numel();
    at::Tensor values = pairs.index_select(0, q.packed.reshape({-1}).to(at::kInt)).reshape({-1});
    if (values.numel() < blocks * bs)
        values = at::cat({values, at::zeros({blocks * bs - values.numel()}, values.options())});
    values = values.narrow(0, 0, blocks * bs).view({blocks, bs});
    values.mul_(absmax.view({-1, 1}));
    return values.reshape({-1}).narrow(0, 0, n).view(q.shape).to(dtype);
}

} // namespace

class TestQuant : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void nf4AndInt8MatchTheReferenceBitForBit();
    void dequantizationIsTheStepwiseOneInFewerBytes();
    void infinitiesAndNaNsAreRefused();
    void aBitsandbytesFolderGivesTheReferencesLogits();
    void loraOnAQuantizedBaseLearns();
    void theMergedExportIsDequantized();
    void aCheckpointsArchiveRebuildsTheQuantizedModel();
    void aDamagedQuantizedFolderIsRefusedByName();
    void theMemoryPlanCountsTheQuantizedBase();

private:
    bool runPython(const QStringList& args);
    at::Tensor logitsOf(const QString& dir, const QString& lora);

    QTemporaryDir m_tmp;
    bool m_python = false;
    QString m_folder;
    hffolder::Spec m_spec;
};

void TestQuant::initTestCase() {
    QVERIFY(m_tmp.isValid());
    m_python = testutil::pythonHasTorch();
    m_folder = m_tmp.filePath(QStringLiteral("llama"));
    m_spec.bf16 = true;
    m_spec.hidden = 64;
    m_spec.intermediate = 96;
    QVERIFY(hffolder::write(m_folder, m_spec));
}

bool TestQuant::runPython(const QStringList& args) {
    QString out, error;
    if (!testutil::runReference(
            QStringList{testpaths::pythonDir() + QStringLiteral("/quant_reference.py")} + args,
            &out, &error, QByteArray(), 300000)) {
        qWarning().noquote() << error;
        return false;
    }
    return true;
}

at::Tensor TestQuant::logitsOf(const QString& dir, const QString& lora) {
    auto m = openModel(ModelSource::hfFolder(dir), {lora, false, 1});
    if (!m) {
        qWarning().noquote() << m.error().message;
        return {};
    }
    at::NoGradGuard noGrad;
    const at::Tensor ids = at::arange(0, 24, at::kLong).remainder(m_spec.vocab).view({2, 12});
    return m->forward(ids).to(at::kFloat);
}

void TestQuant::nf4AndInt8MatchTheReferenceBitForBit() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const NamedTensors in = cases();
    const QString inPath = m_tmp.filePath(QStringLiteral("in.safetensors"));
    const QString outPath = m_tmp.filePath(QStringLiteral("out.safetensors"));
    QVERIFY(writeSafetensors(inPath, recordsOf(in)));
    QVERIFY(runPython({QStringLiteral("quantize"), inPath, outPath}));
    QList<TensorRecord> ref = hffolder::readSafetensors(outPath);
    auto get = [&](const QString& name) {
        for (const TensorRecord& r : ref)
            if (r.name == name)
                return tensorOf(r);
        qWarning("the reference wrote no %s", qPrintable(name));
        return at::Tensor();
    };
    QCOMPARE(bytesOf(nf4Code()), bytesOf(get(QStringLiteral("nf4_code"))));
    QCOMPARE(bytesOf(dynamicCode()), bytesOf(get(QStringLiteral("dynamic_code"))));
    for (const auto& [name, w] : in) {
        const QString n = QString::fromStdString(name);
        auto single = quantizeNf4(w, false);
        auto dq = quantizeNf4(w, true);
        auto i8 = quantizeInt8(w);
        QVERIFY(single && dq && i8);
        QCOMPARE(bytesOf(single->packed), bytesOf(get(n + QStringLiteral(".packed"))));
        QCOMPARE(bytesOf(single->absmax), bytesOf(get(n + QStringLiteral(".absmax"))));
        QCOMPARE(bytesOf(dq->packed), bytesOf(single->packed));
        QCOMPARE(bytesOf(dq->absmax), bytesOf(get(n + QStringLiteral(".dq.absmax"))));
        QCOMPARE(bytesOf(dq->nestedAbsmax), bytesOf(get(n + QStringLiteral(".dq.nested_absmax"))));
        QCOMPARE(bytesOf(at::tensor({dq->offset})), bytesOf(get(n + QStringLiteral(".dq.offset"))));
        const at::Tensor refInt8 = get(n + QStringLiteral(".int8"));
        QVERIFY2(at::equal(i8->packed, refInt8),
                 qPrintable(QStringLiteral("%1: %2 of %3 values differ")
                                .arg(n)
                                .arg(i8->packed.ne(refInt8).sum().item<int64_t>())
                                .arg(refInt8.numel())));
        QCOMPARE(bytesOf(i8->absmax), bytesOf(get(n + QStringLiteral(".scb"))));
        // Dequantized in fp32, the weights are the reference's own.
        QVERIFY2(at::equal(dequantize(*single, at::kFloat), get(n + QStringLiteral(".dequant"))),
                 qPrintable(n));
        QVERIFY2(at::equal(dequantize(*dq, at::kFloat), get(n + QStringLiteral(".dq.dequant"))),
                 qPrintable(n));
        QVERIFY2(at::allclose(dequantize(*i8, at::kFloat), get(n + QStringLiteral(".int8.dequant")),
                              1e-6, 0),
                 qPrintable(n));
        // NF4's error is at most half the widest gap between codes, of each block's absmax.
        const at::Tensor err = (dequantize(*dq, at::kFloat) - w.to(at::kFloat)).abs().max();
        QVERIFY2(err.item<float>() <= 0.16f * w.to(at::kFloat).abs().max().item<float>() + 1e-6f,
                 qPrintable(n));
    }
    // A block of zeros stays zero, and a block of one value is that value exactly.
    const at::Tensor special = dequantize(*quantizeNf4(in[2].second, false), at::kFloat);
    QVERIFY(at::equal(special[1], at::zeros({64})));
    QVERIFY(at::equal(special[2], at::full({64}, 0.5f)));
    QVERIFY(at::equal(special[3], at::full({64}, -3.0f)));
}

// dequantize() writes each product once, in the compute dtype, and reuses the code's table of
// pairs: the same values as the generic operators' path, with fewer bytes through memory.
void TestQuant::dequantizationIsTheStepwiseOneInFewerBytes() {
    at::manual_seed(7);
    // A layer's shape, and one whose size is no whole number of blocks.
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{256, 512}, {37, 29}}) {
        const at::Tensor w = at::randn(shape).to(at::kBFloat16);
        auto single = quantizeNf4(w, false);
        auto nested = quantizeNf4(w, true);
        auto i8 = quantizeInt8(w);
        QVERIFY(single && nested && i8);
        QVERIFY(single->pairsCurrent());
        QuantizedWeight withoutTable = *single;
        withoutTable.pairs = at::Tensor();
        // Values written into the code after its table was made (a checkpoint's, copied into a
        // model rebuilt from its archive): the table is stale, and not used.
        QuantizedWeight rewritten = *single;
        rewritten.code = single->code.clone();
        rewritten.makePairs();
        rewritten.code.mul_(2);
        QVERIFY(!rewritten.pairsCurrent());
        for (const at::ScalarType dtype : {at::kBFloat16, at::kHalf, at::kFloat}) {
            for (const QuantizedWeight* q : {&*single, &*nested, &*i8, &withoutTable, &rewritten}) {
                const at::Tensor now = dequantize(*q, dtype),
                                 before = dequantizeStepwise(*q, dtype);
                QCOMPARE(now.scalar_type(), dtype);
                QCOMPARE(now.sizes(), before.sizes());
                QVERIFY(at::equal(now, before));
            }
        }
        if (shape[0] != 256)
            continue;
        // What each way moves for a bf16 layer, per weight.
        const double n = double(w.numel());
        for (const QuantizedWeight* q : {&*single, &*nested, &*i8}) {
            const double now = double(bytesMovedBy([&] { dequantize(*q, at::kBFloat16); })) / n;
            const double before =
                double(bytesMovedBy([&] { dequantizeStepwise(*q, at::kBFloat16); })) / n;
            qInfo("%s: %.2f bytes a weight moved, %.2f before",
                  q == &*i8     ? "int8"
                  : q->nested() ? "nf4, double quantization"
                                : "nf4",
                  now, before);
            QVERIFY(before > 0);
            QVERIFY2(now <= 0.7 * before,
                     qPrintable(QStringLiteral("%1 against %2").arg(now).arg(before)));
        }
    }
}

void TestQuant::infinitiesAndNaNsAreRefused() {
    for (float bad :
         {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::quiet_NaN()}) {
        at::Tensor w = at::randn({4, 64});
        w[2][5] = bad;
        const auto nf4 = quantizeNf4(w, true, QStringLiteral("model.layers.0.mlp.up_proj.weight"));
        QVERIFY(!nf4);
        QVERIFY2(nf4.error().message.contains(QLatin1String("up_proj")) &&
                     nf4.error().message.contains(QLatin1String("infinity or a NaN")),
                 qPrintable(nf4.error().message));
        QVERIFY(!quantizeInt8(w));
    }
    // A folder with an infinity in one weight: refused at load, naming it.
    QList<TensorRecord> tensors = hffolder::weights(m_spec);
    for (TensorRecord& r : tensors)
        if (r.name == QLatin1String("model.layers.1.mlp.down_proj.weight"))
            r.data[6] = char(0x80), r.data[7] = char(0x7f); // bf16 +inf, 0x7f80
    const QString dir = m_tmp.filePath(QStringLiteral("infinite"));
    QVERIFY(QDir().mkpath(dir));
    QVERIFY(QFile::copy(m_folder + QStringLiteral("/config.json"),
                        dir + QStringLiteral("/config.json")));
    QVERIFY(writeSafetensors(dir + QStringLiteral("/model.safetensors"), tensors));
    auto m = openModel(ModelSource::hfFolder(dir), {QStringLiteral("r=4,base=nf4"), false, 1});
    QVERIFY(!m);
    QVERIFY2(m.error().message.contains(QLatin1String("model.layers.1.mlp.down_proj.weight")) &&
                 m.error().message.contains(QLatin1String("infinity")),
             qPrintable(m.error().message));
}

void TestQuant::aBitsandbytesFolderGivesTheReferencesLogits() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const QString bnb = m_tmp.filePath(QStringLiteral("llama-bnb-4bit"));
    const QString deq = m_tmp.filePath(QStringLiteral("llama-dequantized"));
    QVERIFY(runPython({QStringLiteral("bnb"), m_folder, bnb, deq}));
    // A quantized base trains only through adapters.
    auto plain = openModel(ModelSource::hfFolder(bnb), {});
    QVERIFY(!plain);
    QVERIFY2(plain.error().message.contains(QLatin1String("--lora")),
             qPrintable(plain.error().message));
    const at::Tensor fromBnb = logitsOf(bnb, QStringLiteral("r=4"));
    const at::Tensor fromReference = logitsOf(deq, QStringLiteral("r=4"));
    const at::Tensor original = logitsOf(m_folder, QStringLiteral("r=4"));
    const at::Tensor atLoad = logitsOf(m_folder, QStringLiteral("r=4,base=nf4"));
    QVERIFY(fromBnb.defined() && fromReference.defined() && original.defined() && atLoad.defined());
    // The folder's weights are those the reference dequantizes; quantizing at load makes the
    // same bytes; and the quantization moves the logits, though not far.
    QVERIFY(at::equal(fromBnb, fromReference));
    QVERIFY(at::equal(atLoad, fromBnb));
    const double moved = (fromBnb - original).abs().max().item<double>();
    const double scale = original.abs().max().item<double>();
    qInfo("nf4 moves the logits by at most %.4f of %.4f", moved, scale);
    QVERIFY(moved > 0 && moved < 0.1 * scale);
    // int8 moves them less.
    const at::Tensor int8 = logitsOf(m_folder, QStringLiteral("r=4,base=int8"));
    QVERIFY(int8.defined());
    QVERIFY((int8 - original).abs().max().item<double>() < moved);
}

void TestQuant::loraOnAQuantizedBaseLearns() {
    auto m = openModel(ModelSource::hfFolder(m_folder), {QStringLiteral("r=4,base=nf4"), true, 3});
    QVERIFY2(m, m ? "" : qPrintable(m.error().message));
    int64_t quantizedBytes = 0, trainable = 0;
    for (const auto& [name, t] : m->parameters()) {
        if (t.requires_grad())
            trainable += t.numel();
        else
            quantizedBytes += t.numel() * int64_t(t.element_size());
        QVERIFY(t.requires_grad() == (name.find(".lora_") != std::string::npos));
    }
    QVERIFY(trainable > 0);
    // The log's and the summary's count of frozen parameters is the base's values, as bf16's.
    int64_t values = 0;
    for (const TensorRecord& r : hffolder::weights(m_spec))
        values += r.data.size() / 2;
    QCOMPARE(modelTensors(*m).frozenCount(), values);
    // The base is smaller than bf16's: the embeddings stay, the linear layers shrink 3.5×.
    int64_t bf16 = 0;
    for (const TensorRecord& r : hffolder::weights(m_spec))
        bf16 += r.data.size();
    QVERIFY2(quantizedBytes < bf16 * 3 / 4, qPrintable(QString::number(quantizedBytes)));
    QVERIFY(m->transientWeightBytes(2) > 0);
    // Gradients reach the adapters through the dequantized weights (with checkpointing on, the
    // blocks are recomputed), and a few steps of SGD lower the loss on one batch.
    const at::Tensor ids = at::arange(0, 64, at::kLong).remainder(m_spec.vocab).view({4, 16});
    const at::Tensor x = ids.narrow(1, 0, 15), y = ids.narrow(1, 1, 15);
    std::vector<at::Tensor> params;
    for (const auto& [name, t] : m->parameters())
        if (t.requires_grad())
            params.push_back(t);
    m->train();
    double first = 0, last = 0;
    for (int step = 0; step < 8; ++step) {
        const at::Tensor logits = m->forward(x).to(at::kFloat);
        const at::Tensor loss =
            at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), y.reshape({-1}));
        loss.backward();
        at::NoGradGuard noGrad;
        for (at::Tensor& p : params) {
            QVERIFY(p.grad().defined());
            p.sub_(p.grad() * 0.5);
            p.mutable_grad().zero_();
        }
        (step == 0 ? first : last) = loss.item<double>();
    }
    qInfo("loss %.4f to %.4f in 8 steps on an nf4 base", first, last);
    QVERIFY(last < first - 0.05);
}

void TestQuant::theMergedExportIsDequantized() {
    auto m = openModel(ModelSource::hfFolder(m_folder), {QStringLiteral("r=4,base=nf4"), false, 3});
    QVERIFY(m);
    const QString out = m_tmp.filePath(QStringLiteral("merged"));
    QVERIFY(m->exportAs(ExportFormat::Merged, out, {ModelSource::hfFolder(m_folder), {}}));
    const QList<TensorRecord> merged =
        hffolder::readSafetensors(out + QStringLiteral("/model.safetensors"));
    QCOMPARE(merged.size(), hffolder::weights(m_spec).size());
    for (const TensorRecord& r : merged)
        QVERIFY2(r.dtype == DType::BF16, qPrintable(r.name));
    // The export loads as a plain bf16 folder and computes what the quantized model did.
    auto back = openModel(ModelSource::hfFolder(out), {QStringLiteral("r=4"), false, 3});
    QVERIFY(back);
    at::NoGradGuard noGrad;
    const at::Tensor ids = at::arange(0, 12, at::kLong).view({1, 12});
    QVERIFY(at::allclose(back->forward(ids).to(at::kFloat), m->forward(ids).to(at::kFloat), 1e-5,
                         1e-5));
}

void TestQuant::aCheckpointsArchiveRebuildsTheQuantizedModel() {
    // A run checkpoint holds the model's archive without weights, then every tensor: the
    // archive alone must rebuild the quantized layout, which the tensors then fill.
    auto m = openModel(ModelSource::hfFolder(m_folder), {QStringLiteral("r=4,base=nf4"), false, 3});
    QVERIFY(m);
    auto rebuilt = modelFromArchive(m->archive(false).value(), QStringLiteral("checkpoint"));
    QVERIFY2(rebuilt, rebuilt ? "" : qPrintable(rebuilt.error().message));
    const NamedTensors from = m->parameters(), to = rebuilt->parameters();
    QCOMPARE(to.size(), from.size());
    at::NoGradGuard noGrad;
    for (size_t i = 0; i < from.size(); ++i) {
        QCOMPARE(to[i].first, from[i].first);
        QCOMPARE(to[i].second.scalar_type(), from[i].second.scalar_type());
        to[i].second.copy_(from[i].second);
    }
    const at::Tensor ids = at::arange(0, 12, at::kLong).view({1, 12});
    QVERIFY(at::equal(rebuilt->forward(ids), m->forward(ids)));
}

void TestQuant::aDamagedQuantizedFolderIsRefusedByName() {
    if (!m_python)
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed");
    const QString bnb = m_tmp.filePath(QStringLiteral("llama-bnb-4bit"));
    QVERIFY(QFileInfo::exists(bnb + QStringLiteral("/model.safetensors")));
    QList<TensorRecord> tensors =
        hffolder::readSafetensors(bnb + QStringLiteral("/model.safetensors"));
    const QString victim = QStringLiteral("model.layers.1.mlp.down_proj.weight");
    struct Damage {
        const char* what;
        std::function<void(QList<TensorRecord>&)> apply;
        const char* said;
    };
    const QList<Damage> damages{
        {"absmax missing",
         [&](QList<TensorRecord>& t) {
             t.removeIf([&](const TensorRecord& r) {
                 return r.name == victim + QStringLiteral(".absmax");
             });
         },
         "absmax"},
        {"fp4",
         [&](QList<TensorRecord>& t) {
             for (TensorRecord& r : t)
                 if (r.name == victim + QStringLiteral(".quant_state.bitsandbytes__nf4"))
                     r.name = victim + QStringLiteral(".quant_state.bitsandbytes__fp4");
         },
         "fp4"},
        {"bytes cut",
         [&](QList<TensorRecord>& t) {
             for (TensorRecord& r : t)
                 if (r.name == victim) {
                     r.data.chop(2);
                     r.shape = {r.shape[0] - 2, 1};
                 }
         },
         "bytes"},
        {"a part alone",
         [&](QList<TensorRecord>& t) {
             TensorRecord extra;
             extra.name = QStringLiteral("model.layers.0.input_layernorm.weight.absmax");
             extra.dtype = DType::F32;
             extra.shape = {1};
             extra.data = QByteArray(4, '\0');
             t << extra;
         },
         "beside no quantized weight"},
    };
    for (const Damage& d : damages) {
        QList<TensorRecord> copy = tensors;
        d.apply(copy);
        const QString dir = m_tmp.filePath(QStringLiteral("damaged"));
        QDir(dir).removeRecursively();
        QVERIFY(QDir().mkpath(dir));
        QVERIFY(QFile::copy(bnb + QStringLiteral("/config.json"),
                            dir + QStringLiteral("/config.json")));
        QVERIFY(writeSafetensors(dir + QStringLiteral("/model.safetensors"), copy));
        auto m = openModel(ModelSource::hfFolder(dir), {QStringLiteral("r=4"), false, 1});
        QVERIFY2(!m, d.what);
        QVERIFY2(m.error().message.contains(QLatin1String(d.said)),
                 qPrintable(QLatin1String(d.what) + QStringLiteral(": ") + m.error().message));
    }
}

void TestQuant::theMemoryPlanCountsTheQuantizedBase() {
    auto bf16 = openModel(ModelSource::hfFolder(m_folder), {QStringLiteral("r=4"), false, 3});
    auto nf4 =
        openModel(ModelSource::hfFolder(m_folder), {QStringLiteral("r=4,base=nf4"), false, 3});
    QVERIFY(bf16 && nf4);
    Dataset windows;
    windows.sampleShape = {32};
    RunConfig cfg;
    const MemoryNeed wide = memoryNeed(*bf16, windows, cfg, MasterCopy::None);
    const MemoryNeed narrow = memoryNeed(*nf4, windows, cfg, MasterCopy::None);
    // The quantized base's own bytes, and its largest layer dequantized while it computes.
    int64_t held = 0;
    for (const auto& [name, t] : nf4->parameters())
        held += t.numel() * int64_t(t.element_size());
    QVERIFY(nf4->transientWeightBytes(2) > 0);
    QCOMPARE(narrow.weightBytes, held + nf4->transientWeightBytes(2));
    QCOMPARE(narrow.nf4SavingBytes, int64_t(0)); // already nf4
    // What the bf16 plan says nf4 would save is what it does save, within 1 %.
    qInfo("weights: bf16 %lld, nf4 %lld; the bf16 plan foresaw %lld saved",
          qlonglong(wide.weightBytes), qlonglong(narrow.weightBytes),
          qlonglong(wide.nf4SavingBytes));
    const double saved = double(wide.weightBytes - narrow.weightBytes);
    QVERIFY2(std::abs(double(wide.nf4SavingBytes) - saved) < 0.01 * saved,
             qPrintable(QString::number(wide.nf4SavingBytes)));
    // A device that holds the nf4 run but not the bf16 one: the refusal proposes nf4.
    DeviceInfo gpu;
    gpu.kind = DeviceKind::Cuda;
    gpu.name = QStringLiteral("Test GPU");
    gpu.memoryBytes = int64_t(
        double(narrow.fixedBytes() + narrow.perSampleBytes + wide.nf4SavingBytes / 4) / 0.9);
    QVERIFY(samplesThatFit(narrow, gpu, QStringLiteral("w1")));
    auto refused = samplesThatFit(wide, gpu, QStringLiteral("w1"));
    QVERIFY(!refused);
    for (const char* says : {"base=nf4", "the run fits", "of weights"})
        QVERIFY2(refused.error().message.contains(QLatin1String(says)),
                 qPrintable(refused.error().message));
}

QTEST_GUILESS_MAIN(TestQuant)
#include "test_quant.moc"
