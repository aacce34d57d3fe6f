#pragma once

// The dataset readers' shared pieces, for the files that hold the readers of each kind
// (dataset.cpp: images and tables; sequencedata.cpp: token streams; arraydata.cpp: NumPy).

#include "common/expected.h"
#include "formats/dataset.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <vector>

namespace tandem {

class Tokenizer;

// "FILE,key=value,..." with only the keys in `allowed`; errors name the spec.
struct SpecOptions {
    QString file;
    QHash<QString, QString> values;
};
Expected<SpecOptions> parseSpecOptions(const QString& body, const QStringList& allowed,
                                       const QString& spec);
// The chat template's Jinja source for a spec: the template=FILE it names, else the
// tokenizer's (empty when neither has one); `name` receives where it came from, for errors.
Expected<QString> specTemplateSource(const Tokenizer& tok, const QString& file, const QString& dir,
                                     QString* name);
// The spec's context= (a whole number of tokens from 1 to 65,536), or `fallback` without one.
Expected<int64_t> specContext(const SpecOptions& o, const QString& spec, int64_t fallback);
// The tokenizer of the spec's tokenizer= folder, else of `tokenizerDir` (the model's); `dir`
// receives the folder used. Without either, says how to give one.
Expected<std::shared_ptr<const Tokenizer>> specTokenizer(const SpecOptions& o, const QString& spec,
                                                         const QString& tokenizerDir, QString* dir);

// One NumPy array as an .npy file holds it.
struct NpyArray {
    char kind = 'f'; // f, i, u or b
    int width = 4;   // bytes per element
    std::vector<int64_t> shape;
    QByteArray data; // little-endian, C order

    int64_t count() const { return shape.empty() ? 1 : shape[0]; }
    int64_t perRow() const {
        int64_t n = 1;
        for (size_t i = 1; i < shape.size(); ++i)
            n *= shape[i];
        return n;
    }
    QString dtype() const; // "float32", as NumPy names it; empty for one not read
    bool integer() const { return kind == 'i' || kind == 'u'; }
};

// Parses an .npy file's bytes: the magic, a version 1, 2 or 3 header, its dict (descr,
// fortran_order, shape) and exactly the data the shape asks for. Errors name `name`.
Expected<NpyArray> parseNpy(const QByteArray& bytes, const QString& name);

Expected<DatasetSplits> readSequenceDataset(const QString& kind, const QString& body,
                                            const QString& spec);
// text:, jsonl: and chat: through the tokenizer of `tokenizerDir` (or the spec's tokenizer=).
Expected<DatasetSplits> readTextDataset(const QString& kind, const QString& body,
                                        const QString& spec, const QString& tokenizerDir);
// prefs:FILE[,context=N][,test=FILE][,template=FILE][,tokenizer=DIR]: the pairs of FILE through
// the tokenizer of `tokenizerDir` (or tokenizer=), conversations written with its chat template
// (or template=), each pair cut to `context` positions (256); without test=, the last tenth of
// the pairs is held out (formats/prefdata.h).
Expected<DatasetSplits> readPreferenceDataset(const QString& body, const QString& spec,
                                              const QString& tokenizerDir);
Expected<DatasetSplits> readImageDataset(const QString& body, const QString& spec);
Expected<DatasetSplits> readArrayDataset(const QString& kind, const QString& body,
                                         const QString& spec);

} // namespace tandem
