// The dataset specs' front door: which reader a spec's kind goes to, and the options its body
// carries.
#include "formats/datasetspec.h"

#include "formats/linedata.h"
#include "formats/tokenizer.h"

#include <QFileInfo>

namespace tandem {

Expected<SpecOptions> parseSpecOptions(const QString& body, const QStringList& allowed,
                                       const QString& spec) {
    const QStringList parts = body.split(QLatin1Char(','));
    SpecOptions o;
    o.file = parts.first();
    if (o.file.isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1 names no file").arg(spec));
    for (int i = 1; i < parts.size(); ++i) {
        const qsizetype eq = parts[i].indexOf(QLatin1Char('='));
        const QString key = eq < 0 ? parts[i] : parts[i].left(eq);
        if (eq < 0 || !allowed.contains(key) || o.values.contains(key))
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("dataset spec %1: unknown or repeated option \"%2\" "
                                            "(it takes %3)")
                                 .arg(spec, parts[i],
                                      allowed.isEmpty() ? QStringLiteral("none")
                                                        : allowed.join(QStringLiteral("=, ")) +
                                                              QLatin1Char('=')));
        o.values.insert(key, parts[i].mid(eq + 1));
    }
    return o;
}

Expected<QString> specTemplateSource(const Tokenizer& tok, const QString& file, const QString& dir,
                                     QString* name) {
    if (file.isEmpty()) {
        *name = dir + QStringLiteral("/tokenizer_config.json");
        return tok.chatTemplate();
    }
    *name = file;
    auto bytes = readTextFile(file);
    if (!bytes)
        return bytes.error();
    return QString::fromUtf8(*bytes);
}

Expected<int64_t> specContext(const SpecOptions& o, const QString& spec, int64_t fallback) {
    constexpr int64_t kMost = 1 << 16;
    if (!o.values.contains(QStringLiteral("context")))
        return fallback;
    bool ok = false;
    const int64_t context = o.values.value(QStringLiteral("context")).toLongLong(&ok);
    if (!ok || context < 1 || context > kMost)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1: context= takes a whole number of "
                                        "tokens from 1 to %2")
                             .arg(spec)
                             .arg(kMost));
    return context;
}

Expected<std::shared_ptr<const Tokenizer>> specTokenizer(const SpecOptions& o, const QString& spec,
                                                         const QString& tokenizerDir,
                                                         QString* dir) {
    *dir = o.values.value(QStringLiteral("tokenizer"), tokenizerDir);
    if (dir->isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("dataset spec %1 needs a tokenizer: train a Hugging Face "
                                        "model (--model hf:DIR), whose tokenizer it uses, or "
                                        "add tokenizer=DIR")
                             .arg(spec));
    return Tokenizer::fromFolder(*dir);
}

// ---- Spec ----------------------------------------------------------------------------------

Expected<DatasetSplits> loadDataset(const QString& spec) {
    return loadDataset(spec, QString());
}

Expected<DatasetSplits> loadDataset(const QString& spec, const QString& tokenizerDir) {
    if (spec == QLatin1String("fashion-mnist")) {
        const QString dir = defaultFashionMnistDir();
        if (!QFileInfo(dir).isDir())
            return makeError(ErrorCode::NotFound,
                             QStringLiteral("the built-in Fashion-MNIST is not installed at %1; "
                                            "install Debian's dataset-fashion-mnist package or "
                                            "use fashion-mnist:DIR")
                                 .arg(dir));
        return readIdxDataset(dir, spec);
    }
    const qsizetype colon = spec.indexOf(QLatin1Char(':'));
    const QString kind = colon < 0 ? spec : spec.left(colon);
    const QString body = colon < 0 ? QString() : spec.mid(colon + 1);
    if (kind == QLatin1String("fashion-mnist") || kind == QLatin1String("mnist") ||
        kind == QLatin1String("idx")) {
        if (body.isEmpty())
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("dataset spec %1 needs a folder, as %2:DIR").arg(spec, kind));
        return readIdxDataset(body, spec);
    }
    if (kind == QLatin1String("cifar10")) {
        if (body.isEmpty())
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("dataset spec %1 needs a folder, as cifar10:DIR").arg(spec));
        return readCifar10(body, spec);
    }
    if (kind == QLatin1String("csv"))
        return readCsvDataset(body, spec);
    const bool tokenized = !tokenizerDir.isEmpty() || body.contains(QStringLiteral(",tokenizer="));
    if ((kind == QLatin1String("text") && tokenized) || kind == QLatin1String("jsonl") ||
        kind == QLatin1String("chat"))
        return readTextDataset(kind, body, spec, tokenizerDir);
    if (kind == QLatin1String("prefs"))
        return readPreferenceDataset(body, spec, tokenizerDir);
    if (kind == QLatin1String("text") || kind == QLatin1String("tokens"))
        return readSequenceDataset(kind, body, spec);
    if (kind == QLatin1String("npz") || kind == QLatin1String("npy"))
        return readArrayDataset(kind, body, spec);
    if (kind == QLatin1String("images"))
        return readImageDataset(body, spec);
    return makeError(ErrorCode::InvalidArgument,
                     QStringLiteral("unknown dataset \"%1\"; use fashion-mnist, "
                                    "fashion-mnist:DIR, mnist:DIR, cifar10:DIR, csv:FILE, "
                                    "text:FILE, jsonl:FILE, chat:FILE, prefs:FILE, tokens:FILE, "
                                    "npz:FILE, "
                                    "npy:DIR or images:DIR")
                         .arg(spec));
}

} // namespace tandem
