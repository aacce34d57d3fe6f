#include "model/modelsource.h"

#include "formats/tensorfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace tandem {

namespace {
const QString kHfPrefix = QStringLiteral("hf:");
}

QStringList zooModelNames() {
    return {QStringLiteral("mlp"), QStringLiteral("mnist-cnn"), QStringLiteral("resnet8"),
            QStringLiteral("gpt")};
}

bool isZooModel(const QString& name) {
    return zooModelNames().contains(name);
}

ModelSource ModelSource::parse(const QString& text) {
    const QString t = text.trimmed();
    if (t.isEmpty())
        return {Kind::BuiltIn, QStringLiteral("mnist-cnn")};
    if (t.startsWith(kHfPrefix))
        return {Kind::HfFolder, t.mid(kHfPrefix.size())};
    if (isZooModel(t))
        return {Kind::BuiltIn, t};
    // Only a regular file is looked into: a FIFO or a device would block the read.
    QFile f(t);
    if (QFileInfo(t).isFile() && f.open(QIODevice::ReadOnly) && isTandemCheckpoint(f.read(16)))
        return {Kind::Checkpoint, t};
    return {Kind::TorchScript, t};
}

QString ModelSource::text() const {
    return kind == Kind::HfFolder ? kHfPrefix + path : path;
}

bool modelKindOf(const ModelSource& source, ModelKind* out) {
    switch (source.kind) {
    case ModelSource::Kind::BuiltIn:
    case ModelSource::Kind::TorchScript:
        *out = ModelKind::TorchScript;
        return true;
    case ModelSource::Kind::HfFolder:
        *out = ModelKind::Transformer;
        return true;
    case ModelSource::Kind::Checkpoint:
        return false;
    }
    return false;
}

namespace {
struct FormatName {
    ExportFormat format;
    const char* name;
};
constexpr FormatName kFormats[] = {{ExportFormat::TorchScript, "torchscript"},
                                   {ExportFormat::Safetensors, "safetensors"},
                                   {ExportFormat::Hf, "hf"},
                                   {ExportFormat::Peft, "peft"},
                                   {ExportFormat::Merged, "merged"},
                                   {ExportFormat::Gguf, "gguf"}};
} // namespace

QString exportFormatName(ExportFormat f) {
    for (const FormatName& n : kFormats)
        if (n.format == f)
            return QLatin1String(n.name);
    return {};
}

bool exportFormatFromName(const QString& name, ExportFormat* out) {
    for (const FormatName& n : kFormats)
        if (name == QLatin1String(n.name)) {
            *out = n.format;
            return true;
        }
    return false;
}

QList<ExportFormat> exportFormatsOf(ModelKind kind, bool withAdapters) {
    if (kind == ModelKind::TorchScript)
        return {ExportFormat::TorchScript, ExportFormat::Safetensors};
    QList<ExportFormat> f{ExportFormat::Hf, ExportFormat::Merged, ExportFormat::Safetensors,
                          ExportFormat::Gguf};
    if (withAdapters)
        f.insert(1, ExportFormat::Peft);
    return f;
}

qint64 hfFolderParameters(const QString& dir) {
    qint64 bytes = 0;
    for (const QFileInfo& f :
         QDir(dir).entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files))
        bytes += f.size();
    QFile config(QDir(dir).filePath(QStringLiteral("config.json")));
    const QString dtype = config.open(QIODevice::ReadOnly)
                              ? QJsonDocument::fromJson(config.readAll())
                                    .object()
                                    .value(QStringLiteral("torch_dtype"))
                                    .toString()
                              : QString();
    return bytes / (dtype == QLatin1String("float32") ? 4 : 2);
}

} // namespace tandem
