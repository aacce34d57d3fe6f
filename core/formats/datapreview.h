#pragma once

// A look at chat: and jsonl: data before a run trains on it: the first documents as the model
// reads them (for chat, through its chat template), the tokens that train told apart from
// those that only give context; every document's length against the context; how many the
// windows cut and which windows are left out; and every line that cannot be read, with why,
// where training would stop at the first. Plain C++/Qt.

#include "common/expected.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <utility>
#include <vector>

namespace tandem {

struct DataPreview {
    struct Document {
        qsizetype line = 0;
        // The text in pieces, each with whether its tokens are trained (an assistant's turn).
        QList<std::pair<QString, bool>> pieces;
        int64_t tokens = 0;
        int64_t trained = 0;
    };
    QString kind; // "chat" or "jsonl"
    int64_t context = 0;
    QList<Document> first;        // the first documents that read
    std::vector<int64_t> lengths; // every document's tokens
    int64_t longer = 0;           // documents longer than a window
    int64_t cut = 0;              // documents a window boundary cuts
    int64_t windows = 0;          // windows of `context` the packed documents give
    int64_t leftOut = 0;          // of them, those with no trained token (not trained on)
    QStringList refused;          // "FILE, line N: why" for each line that cannot be read
};

// `spec` as --data gives it (chat:FILE,… or jsonl:FILE,…); `tokenizerDir`: the model's folder.
// `documents`: how many of the first to render.
Expected<DataPreview> previewData(const QString& spec, const QString& tokenizerDir,
                                  int documents = 5);

} // namespace tandem
