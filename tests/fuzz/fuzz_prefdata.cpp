// Fuzz target: a prefs: file (preference pairs in TRL's formats, one JSON object a line), read as
// a run reads it (formats/datasetspec.h's readPreferenceDataset): each line parsed, its prompt
// and answers as text or messages (the implicit prompt found), rendered with the folder's chat
// template, tokenized, checked against the context and written as a pair of rows. The folder is
// the tests' 64-token one (hffolder.h).

#include "../hffolder.h"
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
        data = dir.filePath(QStringLiteral("pairs.jsonl"));
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
    const QString body = folder->data + QStringLiteral(",context=24");
    (void)tandem::readPreferenceDataset(body, QStringLiteral("prefs:") + body, folder->dir.path());
    return 0;
}
