// Fuzz target: a chat: file (one conversation a line, {"messages": [...]}) and the same bytes as
// a jsonl: file, read as a run reads them (formats/datasetspec.h's readTextDataset): each line
// parsed, rendered with a model folder's chat template, tokenized, masked and cut into windows;
// and as the app's Preview reads them (formats/datapreview.h), every line on its own.
// The folder is the tests' 64-token one (hffolder.h); the token cache is off, since its folder
// cannot be made.

#include "../hffolder.h"
#include "formats/datapreview.h"
#include "formats/datasetspec.h"

#include <QTemporaryDir>

#include <cstddef>
#include <cstdint>

namespace {

struct Folder {
    QTemporaryDir dir;
    QString data;
    Folder() {
        if (!dir.isValid() || !hffolder::writeTokenizer(dir.path()))
            std::abort();
        QFile blocker(dir.filePath(QStringLiteral("not-a-folder")));
        if (!blocker.open(QIODevice::WriteOnly))
            std::abort();
        qputenv("TANDEM_TOKEN_CACHE", dir.filePath(QStringLiteral("not-a-folder/cache")).toUtf8());
        data = dir.filePath(QStringLiteral("data.jsonl"));
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Folder* folder = new Folder;
    QFile f(folder->data);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        f.write(reinterpret_cast<const char*>(data), qint64(size)) != qint64(size))
        std::abort();
    f.close();
    for (const char* kind : {"chat", "jsonl"}) {
        const QString body = folder->data + QStringLiteral(",context=16");
        (void)tandem::readTextDataset(QLatin1String(kind), body,
                                      QLatin1String(kind) + QLatin1Char(':') + body,
                                      folder->dir.path());
        (void)tandem::previewData(QLatin1String(kind) + QLatin1Char(':') + body,
                                  folder->dir.path());
    }
    return 0;
}
