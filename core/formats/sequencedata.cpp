// Sequence data: windows of a token stream. `text:` reads a file's bytes as tokens (a
// vocabulary of 256), `tokens:` a flat little-endian stream of token ids as nanoGPT's prepare
// scripts write it. Both are memory-mapped (TokenStream), so only the windows a batch touches
// are ever read.

#include "formats/dataset.h"
#include "formats/datasetspec.h"
#include "formats/tokenstream.h"

#include <QFileInfo>

namespace tandem {

namespace {

constexpr int64_t kDefaultContext = 256;
constexpr int64_t kMaxContext = 1 << 16;

// A split over tokens [from, from + length) of `stream`: as many whole windows of context + 1
// tokens (consecutive windows share their boundary token) as fit.
Dataset windowsOf(std::shared_ptr<const TokenStream> stream, int64_t from, int64_t length,
                  int64_t context) {
    Dataset d;
    d.storage = Dataset::Storage::Windows;
    d.targets = Dataset::Targets::Ids;
    d.sampleShape = d.targetShape = {context};
    d.stream = std::move(stream);
    d.firstToken = from;
    d.windows = length > context ? (length - 1) / context : 0;
    return d;
}

Error tooShort(const QString& file, int64_t tokens, int64_t context, const QString& what) {
    return makeError(ErrorCode::Corrupt,
                     QStringLiteral("%1: %2 holds %3 token(s), fewer than one window of %4 "
                                    "(a context of %5 plus the next token); use a longer file or "
                                    "a shorter context")
                         .arg(file, what)
                         .arg(tokens)
                         .arg(context + 1)
                         .arg(context));
}

} // namespace

Expected<DatasetSplits> readSequenceDataset(const QString& kind, const QString& body,
                                            const QString& spec) {
    const bool text = kind == QLatin1String("text");
    const QStringList allowed = text
                                    ? QStringList{QStringLiteral("context"), QStringLiteral("test")}
                                    : QStringList{QStringLiteral("context"), QStringLiteral("test"),
                                                  QStringLiteral("dtype")};
    auto opts = parseSpecOptions(body, allowed, spec);
    if (!opts)
        return opts.error();
    int64_t context = kDefaultContext;
    if (opts->values.contains(QStringLiteral("context"))) {
        bool ok = false;
        context = opts->values.value(QStringLiteral("context")).toLongLong(&ok);
        if (!ok || context < 1 || context > kMaxContext)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("dataset spec %1: context= takes a whole number of "
                                            "tokens from 1 to %2")
                                 .arg(spec)
                                 .arg(kMaxContext));
    }
    TokenType type = text ? TokenType::U8 : TokenType::U16;
    if (opts->values.contains(QStringLiteral("dtype")) &&
        (!tokenTypeFromName(opts->values.value(QStringLiteral("dtype")), &type) ||
         type == TokenType::U8))
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("dataset spec %1: dtype= takes uint16, uint32 or int32").arg(spec));

    auto stream = TokenStream::map(opts->file, type);
    if (!stream)
        return stream.error();
    const int64_t n = (*stream)->size();
    DatasetSplits s;
    s.spec = spec;
    s.kind = kind;
    const QString testFile = opts->values.value(QStringLiteral("test"));
    int64_t maxToken = (*stream)->maxToken();
    if (testFile.isEmpty()) {
        // The last tenth is held out: text read in order keeps its documents whole that way.
        const int64_t cut = n - n / 10;
        s.train = windowsOf(*stream, 0, cut, context);
        s.test = windowsOf(*stream, cut, n - cut, context);
        if (s.train.windows == 0 || s.test.windows == 0)
            return tooShort(opts->file, n, context,
                            QStringLiteral("with a tenth held out for testing, each part"));
        s.description = QStringLiteral("%1 %2 (%3 tokens, windows of %4; the last tenth held "
                                       "out for testing)")
                            .arg(kind, QFileInfo(opts->file).fileName())
                            .arg(n)
                            .arg(context);
    } else {
        auto testStream = TokenStream::map(testFile, type);
        if (!testStream)
            return testStream.error();
        s.train = windowsOf(*stream, 0, n, context);
        s.test = windowsOf(*testStream, 0, (*testStream)->size(), context);
        if (s.train.windows == 0)
            return tooShort(opts->file, n, context, QStringLiteral("it"));
        if (s.test.windows == 0)
            return tooShort(testFile, (*testStream)->size(), context, QStringLiteral("it"));
        maxToken = std::max(maxToken, (*testStream)->maxToken());
        s.description = QStringLiteral("%1 %2 (%3 tokens, windows of %4; test: %5)")
                            .arg(kind, QFileInfo(opts->file).fileName())
                            .arg(n)
                            .arg(context)
                            .arg(QFileInfo(testFile).fileName());
    }
    // Bytes are a vocabulary of 256 whatever the file holds; a token file's vocabulary is at
    // least its largest id + 1 (a model's may be larger).
    s.numClasses = text ? 256 : int(std::min<int64_t>(maxToken + 1, INT32_MAX));
    s.finish();
    return s;
}

} // namespace tandem
