#include "model/model.h"

#include "model/tensors.h"

#include <QIODevice>

#include <stdexcept>

namespace tandem {

NotOneTensor::NotOneTensor(const std::string& kind)
    : std::runtime_error("the model returns a " + kind + ", not one tensor")
    , kind(kind) {}

at::Tensor ModelImpl::loss(const at::Tensor&, const at::Tensor&) {
    throw std::runtime_error("the model has no loss method");
}

Expected<QByteArray> Model::archive(bool withWeights) const {
    try {
        return m_impl->archive(withWeights);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("the model cannot be serialised: %1").arg(firstLine(e)));
    }
}

Expected<qint64> ModelImpl::writeArchive(bool withWeights, QIODevice& out) const {
    auto bytes = archive(withWeights);
    if (!bytes)
        return bytes.error();
    if (out.write(*bytes) != bytes->size())
        return makeError(ErrorCode::Io, out.errorString());
    return qint64(bytes->size());
}

Expected<qint64> Model::writeArchive(QIODevice& out, bool withWeights) const {
    try {
        return m_impl->writeArchive(withWeights, out);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("the model cannot be serialised: %1").arg(firstLine(e)));
    }
}

Model Model::copy() const {
    at::NoGradGuard noGrad;
    return Model(m_impl->copy());
}

Status Model::exportAs(ExportFormat format, const QString& out,
                       const ExportContext& context) const {
    const QList<ExportFormat> formats = exportFormats();
    if (!formats.contains(format)) {
        QStringList names;
        for (ExportFormat f : formats)
            names << exportFormatName(f);
        const QString what =
            kind() == ModelKind::Transformer
                ? (format == ExportFormat::Peft ? QStringLiteral("this model trained every weight, "
                                                                 "without adapters")
                                                : QStringLiteral("a Hugging Face model is built "
                                                                 "natively, not as TorchScript"))
                : QStringLiteral("this model is not a Hugging Face model");
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 cannot be exported as %2: %3; it exports as %4")
                             .arg(context.source.text(), exportFormatName(format), what,
                                  names.join(QStringLiteral(", "))));
    }
    return m_impl->exportAs(format, out, context);
}

ModelTensors modelTensors(const Model& model) {
    ModelTensors t;
    for (auto& [name, value] : model.parameters()) {
        if (value.requires_grad()) {
            t.paramNames.push_back(name);
            t.params.push_back(value);
        } else {
            t.frozenNames.push_back(name);
            t.frozen.push_back(value);
        }
    }
    for (auto& [name, value] : model.buffers()) {
        t.bufferNames.push_back(name);
        t.buffers.push_back(value);
    }
    return t;
}

QList<TensorRecord> stateDictRecords(const Model& model) {
    // Trainable and frozen parameters alike, in the model's own order, as state_dict() has them.
    QList<TensorRecord> out;
    for (const auto& [name, value] : model.parameters())
        out << toRecord(name, value);
    for (const auto& [name, value] : model.buffers())
        out << toRecord(name, value);
    return out;
}

Status writeStateDict(const QString& path, const NamedTensors& parameters,
                      const NamedTensors& buffers, const QString& modelName) {
    NamedTensors all = parameters;
    all.insert(all.end(), buffers.begin(), buffers.end());
    QList<SafetensorsEntry> entries;
    for (const auto& [name, t] : all) {
        DType d = DType::F32;
        const bool kept = dtypeOf(t.scalar_type(), &d);
        entries.append({QString::fromStdString(name), kept ? d : DType::F32, t.sizes().vec(), 0,
                        t.numel() * (kept ? int64_t(t.element_size()) : 4)});
    }
    return writeSafetensors(path, entries,
                            [&](qsizetype i) -> Expected<QByteArray> {
                                return toRecord(all[size_t(i)].first, all[size_t(i)].second).data;
                            },
                            {{QStringLiteral("format"), QStringLiteral("pt")},
                             {QStringLiteral("tandem_model"), modelName}});
}

} // namespace tandem
