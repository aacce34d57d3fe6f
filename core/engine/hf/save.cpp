// Saving a native transformer as the files Hugging Face's libraries read: PEFT's adapter
// folder, and the model's own folder with its adapters merged.
#include "common/files.h"
#include "engine/hf/hfmodel.h"
#include "engine/hf/transformer.h"
#include "engine/runhistory.h"
#include "engine/scriptmodel.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace tandem {

Status HfTransformer::saveLoraAdapter(const QString& dir) const {
    if (!m_lora)
        return Error{ErrorCode::Runtime, QStringLiteral("the model has no adapters to save")};
    QList<TensorRecord> records;
    for (const auto& [module, ad] : m_adapters) {
        // PEFT's names: its wrapper's prefix and no adapter name.
        records.append(
            toRecord("base_model.model." + module + ".lora_A.weight", ad.a.detach().cpu()));
        records.append(
            toRecord("base_model.model." + module + ".lora_B.weight", ad.b.detach().cpu()));
    }
    const Status written =
        writeSafetensors(QDir(dir).filePath(QStringLiteral("adapter_model.safetensors")), records,
                         {{QStringLiteral("format"), QStringLiteral("pt")}});
    if (!written)
        return written;
    QJsonObject config{
        {QStringLiteral("peft_type"), QStringLiteral("LORA")},
        {QStringLiteral("task_type"), QStringLiteral("CAUSAL_LM")},
        {QStringLiteral("r"), qint64(m_lora->rank)},
        {QStringLiteral("lora_alpha"), m_lora->alpha},
        {QStringLiteral("lora_dropout"), m_lora->dropout},
        {QStringLiteral("target_modules"), QJsonArray::fromStringList(m_lora->targets)},
        {QStringLiteral("bias"), QStringLiteral("none")},
        {QStringLiteral("fan_in_fan_out"), m_config.family == HfFamily::Gpt2},
        {QStringLiteral("inference_mode"), true},
        {QStringLiteral("base_model_name_or_path"), QString()},
    };
    return writeFileAtomically(QDir(dir).filePath(QStringLiteral("adapter_config.json")),
                               QJsonDocument(config).toJson());
}

Status HfTransformer::saveHfModel(const QString& dir) const {
    if (m_params.empty())
        return Error{ErrorCode::Runtime, QStringLiteral("the model's weights are not loaded")};
    if (!QDir().mkpath(dir))
        return Error{ErrorCode::Io, QStringLiteral("cannot create %1").arg(dir)};
    QList<TensorRecord> records;
    at::NoGradGuard noGrad;
    for (const auto& [name, t] : m_params) {
        if (name.find(".lora_") != std::string::npos)
            continue;
        at::Tensor w = t.detach();
        auto ad = m_adapters.find(weightModule(name));
        if (ad != m_adapters.end()) {
            at::Tensor delta = at::matmul(ad->second.b, ad->second.a) * m_lora->scale();
            if (m_config.family == HfFamily::Gpt2) // Conv1D: [in, out]
                delta = delta.t();
            w = (w.to(at::kFloat) + delta.to(w.device())).to(w.scalar_type());
        }
        records.append(toRecord(name, w.cpu().contiguous()));
    }
    const Status written =
        writeSafetensors(QDir(dir).filePath(QStringLiteral("model.safetensors")), records,
                         {{QStringLiteral("format"), QStringLiteral("pt")}});
    if (!written)
        return written;
    return writeFileAtomically(QDir(dir).filePath(QStringLiteral("config.json")),
                               QJsonDocument(m_config.source).toJson());
}

Status copyCompanionFiles(const QString& sourceDir, const QString& dir) {
    if (sourceDir.isEmpty())
        return success();
    for (const char* name :
         {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
          "vocab.json", "merges.txt", "generation_config.json"}) {
        const QString from = QDir(sourceDir).filePath(QLatin1String(name));
        if (!QFileInfo(from).isFile())
            continue;
        const QString to = QDir(dir).filePath(QLatin1String(name));
        QFile::remove(to);
        if (!QFile::copy(from, to))
            return Error{ErrorCode::Io, QStringLiteral("cannot copy %1 to %2").arg(from, dir)};
    }
    return success();
}

Status exportHfModel(const HfTransformer& model, const QString& outDir, const QString& sourceDir) {
    const QString folder = QDir(outDir).filePath(RunFiles::hfModel());
    if (auto st = model.saveHfModel(folder); !st)
        return st;
    if (auto st = copyCompanionFiles(sourceDir, folder); !st)
        return st;
    if (!model.lora())
        return success();
    const QString adapter = QDir(outDir).filePath(RunFiles::adapter());
    if (!QDir().mkpath(adapter))
        return Error{ErrorCode::Io, QStringLiteral("cannot create %1").arg(adapter)};
    return model.saveLoraAdapter(adapter);
}

} // namespace tandem
