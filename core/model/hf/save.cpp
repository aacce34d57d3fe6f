// Saving a native transformer as the files Hugging Face's libraries read: PEFT's adapter
// folder, and the model's own folder with its adapters merged. Both write one tensor at a time:
// a model never needs a second copy of itself in memory to be saved.
#include "common/files.h"
#include "model/hf/quant.h"
#include "model/hf/transformer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <map>

namespace tandem {

namespace {

SafetensorsEntry entryOf(const std::string& name, const at::Tensor& t) {
    DType d = DType::F32;
    const bool kept = dtypeOf(t.scalar_type(), &d);
    return {QString::fromStdString(name), kept ? d : DType::F32, t.sizes().vec(), 0,
            t.numel() * (kept ? int64_t(t.element_size()) : 4)};
}

} // namespace

Status HfTransformer::saveLoraAdapter(const QString& dir, const QString& baseModel) const {
    if (!m_lora)
        return Error{ErrorCode::Runtime, QStringLiteral("the model has no adapters to save")};
    QList<TensorRecord> records;
    for (const auto& [name, t] : m_params)
        if (name.find(".lora_") != std::string::npos)
            records.append(toRecord("base_model.model." + name, t)); // PEFT's wrapper prefix
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
        {QStringLiteral("fan_in_fan_out"), m_config.family->conv1d},
        {QStringLiteral("inference_mode"), true},
        {QStringLiteral("base_model_name_or_path"), baseModel},
    };
    return writeFileAtomically(QDir(dir).filePath(QStringLiteral("adapter_config.json")),
                               QJsonDocument(config).toJson());
}

Status HfTransformer::saveHfModel(const QString& dir) const {
    if (m_params.empty())
        return Error{ErrorCode::Runtime, QStringLiteral("the model's weights are not loaded")};
    if (!QDir().mkpath(dir))
        return Error{ErrorCode::Io, QStringLiteral("cannot create %1").arg(dir)};
    std::map<std::string, std::pair<at::Tensor, at::Tensor>> adapters; // module → (A, B)
    NamedTensors base;
    // A quantized weight is written dequantized, in its own dtype, as the folder had it.
    const std::map<std::string, at::Tensor> byName(m_params.begin(), m_params.end());
    std::map<std::string, QuantizedWeight> quantized;
    const bool conv = m_config.family->conv1d;
    for (const auto& [name, t] : m_params) {
        if (isBnbCompanion(name))
            continue;
        const size_t at = name.find(".lora_");
        if (at == std::string::npos && isQuantizedWeight(name, t)) {
            auto q = readBnb(name, byName, {});
            if (!q)
                return q.error();
            std::vector<int64_t> shape = q->shape;
            if (conv)
                std::swap(shape[0], shape[1]);
            base.emplace_back(name,
                              at::empty(shape, at::TensorOptions(q->dtype).device(at::kMeta)));
            quantized.emplace(name, std::move(*q));
            continue;
        }
        if (at == std::string::npos) {
            base.emplace_back(name, t);
            continue;
        }
        auto& pair = adapters[name.substr(0, at)];
        (name.compare(at, 7, ".lora_A") == 0 ? pair.first : pair.second) = t;
    }
    QList<SafetensorsEntry> entries;
    for (const auto& [name, t] : base)
        entries.append(entryOf(name, t));
    const Status written = writeSafetensors(
        QDir(dir).filePath(QStringLiteral("model.safetensors")), entries,
        [&](qsizetype i) -> Expected<QByteArray> {
            at::NoGradGuard noGrad;
            const auto& [name, t] = base[size_t(i)];
            at::Tensor w = t.detach();
            if (auto q = quantized.find(name); q != quantized.end()) {
                w = dequantize(q->second, q->second.dtype);
                if (conv)
                    w = w.t().contiguous();
            }
            auto ad = adapters.find(weightModule(name));
            if (ad != adapters.end()) {
                at::Tensor delta =
                    at::matmul(ad->second.second, ad->second.first) * m_lora->scale();
                if (conv) // Conv1D: [in, out]
                    delta = delta.t();
                w = (w.to(at::kFloat) + delta.to(w.device())).to(w.scalar_type());
            }
            return toRecord(name, w).data;
        },
        {{QStringLiteral("format"), QStringLiteral("pt")}});
    if (!written)
        return written;
    QJsonObject config = m_config.source;
    config.remove(QStringLiteral("quantization_config")); // written dequantized
    if (!quantized.empty())
        config.insert(QStringLiteral("torch_dtype"),
                      torchDtypeName(quantized.begin()->second.dtype));
    return writeFileAtomically(QDir(dir).filePath(QStringLiteral("config.json")),
                               QJsonDocument(config).toJson());
}

} // namespace tandem
