#pragma once

#include "common/expected.h"
#include "formats/gzip.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace tandem {

// One split of a classification dataset, held in memory in the form it was stored in.
// Images stay uint8 (a quarter of the memory of float) and are scaled to [0,1] when a batch is
// gathered; tabular features are float. No normalisation is applied anywhere: a model that
// wants it does it in forward().
struct Dataset {
    enum class Storage { U8, F32 };

    Storage storage = Storage::U8;
    std::vector<int64_t> sampleShape; // per sample: {C,H,W} for images, {features} for tables
    std::vector<uint8_t> u8;          // count * product(sampleShape), when storage == U8
    std::vector<float> f32;           // count * product(sampleShape), when storage == F32
    std::vector<int64_t> labels;      // count entries, each in [0, numClasses)

    int64_t count() const { return static_cast<int64_t>(labels.size()); }
    int64_t sampleSize() const;
};

struct DatasetSplits {
    QString spec; // as the user wrote it, e.g. "fashion-mnist" or "csv:iris.csv,label=species"
    QString kind; // "idx", "cifar10" or "csv"
    QString description; // human-readable, names the files
    int numClasses = 0;
    QStringList classNames;
    Dataset train;
    Dataset test;
    QByteArray contentHash; // SHA-256 over both splits' shapes, data and labels (hex)

    // Gives up the first n training samples only (0 keeps all); the hash is not changed since
    // it identifies the content a peer must hold.
    void limitTrain(int64_t n);
    void limitTest(int64_t n);
};

// Where Debian's dataset-fashion-mnist package puts the files; FASHION_MNIST_DIR overrides it.
QString defaultFashionMnistDir();

// Parses a dataset spec and reads every file it names, checking magic numbers, sizes and label
// ranges before returning. Specs:
//   fashion-mnist                 the built-in default (Debian's dataset-fashion-mnist)
//   fashion-mnist:DIR, mnist:DIR  IDX files (gzip or plain) in DIR
//   cifar10:DIR                   CIFAR-10 binary batches in DIR
//   csv:FILE[,label=COL][,test=FILE]  tabular classification; COL is a header name or 0-based
//                                 index (default: the column headed "label", else the last
//                                 column); without test= every fifth
//                                 row is held out for testing
Expected<DatasetSplits> loadDataset(const QString& spec);

// A dataset as one self-describing blob (Tandem's checkpoint container), for sending it to a
// worker that lacks it and for that worker's cache. The hash is recomputed on reading, so a
// blob that does not hold what its name claims is refused.
Expected<QByteArray> datasetToContainer(const DatasetSplits& data);
Expected<DatasetSplits> datasetFromContainer(const QByteArray& bytes, const QString& name);

// The individual readers, exposed for tests and fuzzing.
struct IdxArray {
    std::vector<int64_t> dims;
    std::vector<uint8_t> data;
};
// Parses an IDX file's bytes (already decompressed). Only unsigned-byte payloads are accepted.
Expected<IdxArray> parseIdx(const QByteArray& bytes, const QString& name);
// How long an IDX file's header says the file is, for reading it compressed.
DeclaredLength idxDeclaredLength(const QString& name);
Expected<DatasetSplits> readIdxDataset(const QString& dir, const QString& spec);
Expected<DatasetSplits> readCifar10(const QString& dir, const QString& spec);
// Parses CSV text. labelColumn is a header name, a 0-based index, or empty for the column
// headed "label" (any case), else the last column.
struct CsvTable {
    Dataset data;
    QStringList classNames;
};
Expected<CsvTable> parseCsv(const QByteArray& text, const QString& labelColumn, const QString& name,
                            const QStringList& knownClasses = {});
Expected<DatasetSplits> readCsvDataset(const QString& specBody, const QString& spec);

} // namespace tandem
