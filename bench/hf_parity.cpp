// Tandem's side of the parity checks against Hugging Face's own libraries (bench/hf_parity.py):
// a Hugging Face folder loaded as `tandem train --model hf:DIR` loads it, and what Tandem
// computes from it written to files, so that Python compares them with transformers, PEFT and
// tokenizers on the same machine and device.
//
//   bench_hf_parity DIR ADAPTER IDS TEXTS OUT [--device D]
//
// writes into OUT:
//   logits_f32, logits_bf16  next-token logits [B, T, V] (as F32) of IDS's "input_ids" [B, T],
//                            with the weights in fp32 and in bf16
//   logits_adapter           the same with the PEFT adapter folder ADAPTER on top (its r, alpha
//                            and targets, its values), fp32
//   grads                    ADAPTER as a run's initial adapters: one forward and backward pass
//                            of the mean cross-entropy of the logits against IDS's "labels"
//                            (-100 ignored): "loss" and each adapter's gradient, by the name
//                            PEFT saves that adapter under
//   adapter/, merged/        the model with ADAPTER's adapters exported as a run exports it:
//                            PEFT's folder, and a Hugging Face folder with them folded in
//   tokens.json              TEXTS ({"texts": [...], "chats": [[{"role", "content"}, ...]]})
//                            through the folder's tokenizer and chat template: "ids" (with the
//                            tokenizer's special tokens), "plain" (without), and per chat
//                            "rendered" and "chat_ids"
// (all .safetensors). Each part runs apart: one that fails says why on stderr and the others
// still run. Prints one JSON line, each part "ok" or its error; exits 1 if any failed.
#include "engine/devices.h"
#include "engine/step/modelcheck.h"
#include "formats/chattemplate.h"
#include "formats/tokenizer.h"
#include "model/hf/hfmodel.h"
#include "model/hf/transformer.h"
#include "model/scriptmodel.h"
#include "model/torchcompat.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <functional>
#include <map>

using namespace tandem;

namespace {

struct Failure {
    QString message;
};

[[noreturn]] void fail(const QString& why) {
    throw Failure{why};
}

template <typename T> T must(Expected<T> v) {
    if (!v)
        fail(v.error().message);
    return std::move(*v);
}

void must(const Status& s) {
    if (!s)
        fail(s.error().message);
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        fail(QStringLiteral("cannot read %1").arg(path));
    return f.readAll();
}

std::map<QString, at::Tensor> readTensors(const QString& path) {
    std::map<QString, at::Tensor> out;
    for (const TensorRecord& r : must(parseSafetensors(readAll(path), path)))
        out[r.name] = must(fromRecord(r));
    return out;
}

// A PEFT adapter folder's settings as --lora's spec, and its tensors by the module they adapt
// ("model.layers.0.self_attn.q_proj.lora_A.weight").
struct PeftAdapter {
    QString spec;
    std::map<std::string, at::Tensor> tensors;
};

PeftAdapter readPeftAdapter(const QString& dir) {
    const QJsonObject c =
        QJsonDocument::fromJson(readAll(dir + QStringLiteral("/adapter_config.json"))).object();
    QStringList targets;
    for (const QJsonValue& t : c.value(QStringLiteral("target_modules")).toArray())
        targets << t.toString();
    if (targets.isEmpty())
        fail(QStringLiteral("%1/adapter_config.json names no target_modules").arg(dir));
    PeftAdapter a;
    a.spec = QStringLiteral("r=%1,alpha=%2,dropout=0,targets=%3")
                 .arg(c.value(QStringLiteral("r")).toInt())
                 .arg(c.value(QStringLiteral("lora_alpha")).toDouble())
                 .arg(targets.join(QLatin1Char(',')));
    const QString prefix = QStringLiteral("base_model.model.");
    for (auto& [name, t] : readTensors(dir + QStringLiteral("/adapter_model.safetensors"))) {
        if (!name.startsWith(prefix))
            fail(QStringLiteral("%1: unexpected tensor %2").arg(dir, name));
        a.tensors[name.mid(prefix.size()).toStdString()] = t;
    }
    return a;
}

struct Options {
    QString dtype = QStringLiteral("f32");
    QString device = QStringLiteral("cpu");
    QString adapter;
};

// The folder as a run opens it, with the adapter's values in place of the drawn ones.
Model open(const QString& dir, const Options& o) {
    PeftAdapter adapter;
    if (!o.adapter.isEmpty())
        adapter = readPeftAdapter(o.adapter);
    Model m = must(openHfModel(dir, {adapter.spec, false, 0}));
    HfTransformer* t = transformerOf(m);
    if (o.dtype == QLatin1String("bf16"))
        t->convertWeights(at::kBFloat16);
    else if (o.adapter.isEmpty())
        t->convertWeights(at::kFloat);
    at::NoGradGuard noGrad;
    size_t filled = 0;
    for (const auto& [name, value] : m.parameters()) {
        auto it = adapter.tensors.find(name);
        if (it == adapter.tensors.end())
            continue;
        if (!value.sizes().equals(it->second.sizes()))
            fail(QStringLiteral("adapter %1 does not fit").arg(QString::fromStdString(name)));
        value.copy_(it->second);
        ++filled;
    }
    if (filled != adapter.tensors.size())
        fail(QStringLiteral("%1 of the adapter's %2 tensors found a place in the model")
                 .arg(filled)
                 .arg(adapter.tensors.size()));
    m.to(c10::Device(o.device.toStdString()));
    m.eval();
    return m;
}

void save(const QString& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
    QList<TensorRecord> records;
    for (const auto& [name, t] : tensors)
        records << toRecord(name, t.detach().to(at::kFloat).cpu().contiguous());
    must(writeSafetensors(path, records));
}

void logits(const QString& dir, const QString& idsPath, const QString& out, const Options& o) {
    const Model m = open(dir, o);
    const at::Tensor ids = readTensors(idsPath).at(QStringLiteral("input_ids"));
    at::Tensor y;
    {
        at::NoGradGuard noGrad;
        y = m.forward(ids.to(at::kLong).to(c10::Device(o.device.toStdString())));
    }
    save(out, {{"logits", y}});
}

void grads(const QString& dir, const QString& adapterDir, const QString& idsPath,
           const QString& out, const Options& given) {
    Options o = given;
    o.adapter = adapterDir;
    const Model m = open(dir, o);
    m.train(true);
    const auto batch = readTensors(idsPath);
    const c10::Device device(o.device.toStdString());
    const at::Tensor ids = batch.at(QStringLiteral("input_ids")).to(at::kLong).to(device);
    const at::Tensor labels = batch.at(QStringLiteral("labels")).to(at::kLong).to(device);
    const at::Tensor y = m.forward(ids);
    const at::Tensor loss =
        at::cross_entropy_loss(y.reshape({-1, y.size(-1)}).to(at::kFloat), labels.reshape({-1}), {},
                               at::Reduction::Mean, -100);
    loss.backward();
    std::vector<std::pair<std::string, at::Tensor>> tensors{{"loss", loss.reshape({1})}};
    for (const auto& [name, value] : m.parameters())
        if (value.requires_grad() && value.grad().defined())
            tensors.emplace_back("base_model.model." + name, value.grad());
    save(out, tensors);
}

void exportFolders(const QString& dir, const QString& adapterDir, const QString& out) {
    Options o;
    o.adapter = adapterDir;
    const Model m = open(dir, o);
    // As `tandem export` writes them.
    const ExportContext context{ModelSource::hfFolder(dir), {}};
    must(m.exportAs(ExportFormat::Peft, out + QStringLiteral("/adapter"), context));
    must(m.exportAs(ExportFormat::Merged, out + QStringLiteral("/merged"), context));
}

QJsonArray idsJson(const std::vector<int32_t>& ids) {
    QJsonArray a;
    for (int32_t id : ids)
        a << id;
    return a;
}

void tokenize(const QString& dir, const QString& textsPath, const QString& out) {
    const auto tok = must(Tokenizer::fromFolder(dir));
    const QJsonObject in = QJsonDocument::fromJson(readAll(textsPath)).object();
    QJsonArray ids, plain, rendered, chatIds;
    for (const QJsonValue& v : in.value(QStringLiteral("texts")).toArray()) {
        ids << idsJson(tok->encode(v.toString(), true));
        plain << idsJson(tok->encode(v.toString(), false));
    }
    const QJsonArray chats = in.value(QStringLiteral("chats")).toArray();
    if (!chats.isEmpty()) {
        const ChatTemplate tmpl = must(ChatTemplate::parse(tok->chatTemplate(), dir));
        for (const QJsonValue& chat : chats) {
            std::vector<ChatMessage> messages;
            for (const QJsonValue& m : chat.toArray())
                messages.push_back({m[QStringLiteral("role")].toString(),
                                    m[QStringLiteral("content")].toString()});
            const QString text =
                must(tmpl.render(messages, true, tok->bosToken(), tok->eosToken()));
            rendered << text;
            chatIds << idsJson(tok->encode(text, false));
        }
    }
    QFile f(out);
    if (!f.open(QIODevice::WriteOnly))
        fail(QStringLiteral("cannot write %1").arg(out));
    f.write(QJsonDocument(QJsonObject{{QStringLiteral("ids"), ids},
                                      {QStringLiteral("plain"), plain},
                                      {QStringLiteral("rendered"), rendered},
                                      {QStringLiteral("chat_ids"), chatIds}})
                .toJson(QJsonDocument::Compact));
}

} // namespace

// Every part on one model folder, each apart: a part that fails says why on stderr and the
// others still run. Prints which parts were written.
int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments().mid(1);
    Options o;
    const qsizetype at = args.indexOf(QStringLiteral("--device"));
    if (at >= 0 && at + 1 < args.size()) {
        o.device = args[at + 1];
        args.remove(at, 2);
    }
    if (args.size() != 5) {
        std::fputs("usage: bench_hf_parity DIR ADAPTER IDS TEXTS OUT [--device D]\n", stderr);
        return 2;
    }
    const QString dir = args[0], adapter = args[1], ids = args[2], texts = args[3], out = args[4];
    initTorchRuntime();
    if (!QDir().mkpath(out)) {
        std::fprintf(stderr, "bench_hf_parity: cannot create %s\n", qPrintable(out));
        return 1;
    }
    auto file = [&](const char* name) { return out + QLatin1Char('/') + QLatin1String(name); };
    const std::vector<std::pair<const char*, std::function<void()>>> parts{
        {"logits_f32", [&] { logits(dir, ids, file("logits_f32.safetensors"), o); }},
        {"logits_bf16",
         [&] {
             Options b = o;
             b.dtype = QStringLiteral("bf16");
             logits(dir, ids, file("logits_bf16.safetensors"), b);
         }},
        {"logits_adapter",
         [&] {
             Options a = o;
             a.adapter = adapter;
             logits(dir, ids, file("logits_adapter.safetensors"), a);
         }},
        {"grads", [&] { grads(dir, adapter, ids, file("grads.safetensors"), o); }},
        {"export", [&] { exportFolders(dir, adapter, out); }},
        {"tokens", [&] { tokenize(dir, texts, file("tokens.json")); }},
    };
    QJsonObject done;
    int failed = 0;
    for (const auto& [name, part] : parts) {
        QString why;
        try {
            part();
        } catch (const Failure& f) {
            why = f.message;
        } catch (const std::exception& e) {
            why = firstLine(e);
        }
        done.insert(QLatin1String(name), why.isEmpty() ? QStringLiteral("ok") : why);
        if (!why.isEmpty()) {
            std::fprintf(stderr, "bench_hf_parity %s: %s\n", name, qPrintable(why));
            ++failed;
        }
    }
    std::printf("%s\n", QJsonDocument(done).toJson(QJsonDocument::Compact).constData());
    return failed ? 1 : 0;
}
