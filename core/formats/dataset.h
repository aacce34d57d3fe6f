#pragma once

#include "common/expected.h"
#include "formats/gzip.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tandem {

class TokenStream;

// A target id that no loss counts, as PyTorch's ignore_index: the prompt's positions in a chat
// transcript, padding.
constexpr int64_t kIgnoredTarget = -100;

// One split of a dataset, held in the form it was stored in. Images stay uint8 (a quarter of
// the memory of float) and are scaled to [0,1] when a batch is gathered; tabular features are
// float; integer arrays (token ids a model embeds) stay int64. A token stream is not copied at
// all: its samples are windows of a memory-mapped file. No normalisation is applied anywhere: a
// model that wants it does it in forward().
struct Dataset {
    enum class Storage {
        U8,      // u8, scaled to [0,1] when gathered
        F32,     // f32, as stored
        I64,     // i64, as stored (token ids, indices)
        Windows, // sample i is tokens [first + i*context, first + (i+1)*context] of `stream`
    };
    // What a sample's target is, and so which losses can use it.
    enum class Targets {
        Class,  // one class index per sample, in [0, numClasses): `labels`
        Ids,    // integers of targetShape per sample (next tokens, masks; -100 is ignored),
                // in [0, numClasses): `labels`
        Values, // floats of targetShape per sample (regression, multi-label): `values`
    };

    Storage storage = Storage::U8;
    std::vector<int64_t> sampleShape; // per sample: {C,H,W} for images, {features} for tables
    std::vector<uint8_t> u8;          // count * product(sampleShape), when storage == U8
    std::vector<float> f32;           // count * product(sampleShape), when storage == F32
    std::vector<int64_t> i64;         // count * product(sampleShape), when storage == I64
    Targets targets = Targets::Class;
    std::vector<int64_t> targetShape; // per sample; empty for Class
    std::vector<int64_t> labels;      // count * product(targetShape), for Class and Ids
    std::vector<float> values;        // count * product(targetShape), for Values
    // Windows: the input of sample i is `context` tokens from firstToken + i*context, and its
    // target the same positions one token later (sampleShape and targetShape are {context}).
    std::shared_ptr<const TokenStream> stream;
    int64_t firstToken = 0;
    int64_t windows = 0;

    int64_t count() const;
    int64_t sampleSize() const;
    int64_t targetSize() const;
    // The integer or float element type of a sample's input as a model receives it.
    bool integerInputs() const { return storage == Storage::I64 || storage == Storage::Windows; }
};

struct DatasetSplits {
    QString spec; // as the user wrote it, e.g. "fashion-mnist" or "csv:iris.csv,label=species"
    QString kind; // "idx", "cifar10", "csv", "text", "tokens", "npz" or "npy"
    QString description; // human-readable, names the files
    // Class and Ids targets lie in [0, numClasses): the classes, or the token vocabulary (256
    // for text:, the largest token id + 1 for tokens:). 0 for Values.
    int numClasses = 0;
    QStringList classNames;
    Dataset train;
    Dataset test;
    QByteArray contentHash; // SHA-256 over both splits' shapes, data and labels (hex)
    // The same over what the splits hold now, which differs once they are limited; empty when
    // not known (then computed again, a pass over all the data).
    QByteArray heldHash;

    // Gives up the first n training samples only (0 keeps all); the hash is not changed since
    // it identifies the content a peer must hold (heldHash is).
    void limitTrain(int64_t n);
    void limitTest(int64_t n);
    // Computes both hashes from the splits as they are: what a reader does last.
    void finish();
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
//   csv:FILE,target=COL[,test=FILE]   regression on the float column COL
//   text:FILE[,context=N][,test=FILE]  the file's bytes as tokens, windows of N (256)
//   tokens:FILE[,dtype=uint16|uint32|int32][,context=N][,test=FILE]  a flat little-endian
//                                 token stream (nanoGPT's .bin), memory-mapped
//   npz:FILE, npy:DIR             NumPy arrays x_train, y_train[, x_test, y_test]
// With a tokenizer (a Hugging Face model's folder, or tokenizer=DIR in the spec):
//   text:FILE[,context=N][,test=FILE]      the file through the tokenizer, one document
//   jsonl:FILE[,field=text][,context=N][,long=split|refuse][,test=FILE]  a document a line
//   chat:FILE[,template=FILE][,context=N][,long=split|refuse][,test=FILE]  {"messages": […]}
//                                 a line, written with the chat template; only the
//                                 assistant's tokens are targets (the rest are -100)
//   prefs:FILE[,template=FILE][,context=N][,test=FILE]  preference pairs in TRL's formats
//                                 (formats/prefdata.h): samples of two sequences, the chosen
//                                 answer's and the rejected one's, for --loss dpo or orpo
Expected<DatasetSplits> loadDataset(const QString& spec);
Expected<DatasetSplits> loadDataset(const QString& spec, const QString& tokenizerDir);

// A dataset as one self-describing blob (Tandem's checkpoint container), for sending it to a
// worker that lacks it and for that worker's cache. The hash of what it holds is recomputed on
// reading, so a blob that does not hold what it claims is refused. A dataset cut to its first
// samples (limitTrain) is shipped cut, and read back with the whole dataset's hash, which is
// what identifies it to a run.
//
// With tokens left apart, a split of token windows keeps only its description in the
// container: its tokens travel as a blob of their own (splitTokens), which a worker writes to a
// file and maps, so that no side holds a token file of gigabytes in memory. Reading such a
// container asks `tokens` for each split's stream ("train" or "test").
enum class TokenPlacement { Inside, Apart };
using TokenSource = std::function<Expected<std::shared_ptr<const TokenStream>>(
    const QString& split, const QString& dtype)>;
Expected<QByteArray> datasetToContainer(const DatasetSplits& data,
                                        TokenPlacement tokens = TokenPlacement::Inside);
Expected<DatasetSplits> datasetFromContainer(const QByteArray& bytes, const QString& name,
                                             const TokenSource& tokens = {});
// The raw little-endian bytes of the tokens a split of windows covers, without a copy (valid
// while the split's stream lives); empty for any other split.
QByteArray splitTokens(const Dataset& d);

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
// With `floatTarget` the column is a regression target: every value must be a number, and the
// table's targets are Values.
Expected<CsvTable> parseCsv(const QByteArray& text, const QString& labelColumn, const QString& name,
                            const QStringList& knownClasses = {}, bool floatTarget = false);
Expected<DatasetSplits> readCsvDataset(const QString& specBody, const QString& spec);

} // namespace tandem
