#pragma once

// The pieces a Tokenizer is made of, for the files that build and run them (tokenizer.cpp:
// reading tokenizer.json and the pipeline; bpe.cpp: the BPE model and GPT-2's byte map).

#include <QByteArray>
#include <QHash>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace tandem {

// A stretch of text on its way through the pre-tokenizers. Only the first piece of the text
// is `atStart` (Metaspace's prepend_scheme "first" looks at it); `bytes` once ByteLevel has
// mapped its UTF-8 bytes to GPT-2's printable characters.
struct Piece {
    QString text;
    bool atStart = false;
};

struct Normalizer {
    std::function<void(QString&)> apply;
    bool prepends = false; // Prepend: left out where a text goes on from an earlier piece
};
using PreTokenizer = std::function<void(std::vector<Piece>&)>;
using Decoder = std::function<void(std::vector<QByteArray>&)>;

struct BpeModel {
    QHash<QString, int32_t> vocab;
    QHash<char32_t, int32_t> chars; // the tokens of one code point, looked up most often
    QHash<quint64, std::pair<int32_t, int32_t>> merges; // (left, right) ids -> (rank, merged id)
    int32_t unk = -1;
    bool fuseUnk = false;
    bool byteFallback = false;
    bool ignoreMerges = false;
    int32_t byteIds[256]; // "<0x41>" and so on, -1 when absent

    // Appends the ids of one pre-tokenized word.
    void encodeWord(QStringView word, std::vector<int32_t>& out) const;
};

struct AddedToken {
    QString content;
    int32_t id = -1;
    bool special = false;
    bool lstrip = false;
    bool rstrip = false;
    bool singleWord = false;
    bool normalized = false; // matched in the text as the normalizers leave it
};

// The added tokens' contents as a trie over UTF-16 code units, for Hugging Face's matching:
// leftmost first, and of the tokens that start there the longest. Any number of tokens; no
// regular expression.
class AddedTrie {
public:
    void insert(QStringView content, int token);
    // The longest token that starts at `at`: its index and length; (-1, 0) when none does.
    std::pair<int, qsizetype> longestAt(QStringView text, qsizetype at) const;
    bool empty() const { return m_nodes.size() <= 1; }

private:
    struct Node {
        std::vector<std::pair<char16_t, int32_t>> next; // sorted by unit
        int token = -1;
    };
    std::vector<Node> m_nodes{Node{}};
};

// Where added tokens cut a text: the stretches between them and the tokens themselves.
struct AddedSplit {
    qsizetype from = 0, to = 0; // [from, to) of the text
    int token = -1;             // index in TokenizerParts::added; -1 for a plain stretch
};

// The text cut by `trie`'s tokens as Hugging Face's AddedVocabulary cuts it: a single_word
// token is left in place where a word character touches it, lstrip and rstrip take the spaces
// beside a token into it.
std::vector<AddedSplit> splitAdded(QStringView text, const AddedTrie& trie,
                                   const std::vector<AddedToken>& added);

struct TokenizerParts {
    QString name;
    QByteArray fingerprint;
    BpeModel bpe;
    std::vector<QString> idToToken; // by id; empty where no token has it
    int32_t modelVocabSize = 0;     // idToToken's size before the added tokens
    std::vector<AddedToken> added;
    QHash<int32_t, int> addedById; // id -> index in `added`
    AddedTrie addedTrie;           // the tokens matched in the raw text (normalized false)
    AddedTrie normalizedTrie;      // those matched after the normalizers (normalized true)
    std::vector<Normalizer> normalizers;
    std::vector<PreTokenizer> preTokenizers;
    std::vector<Decoder> decoders;
    bool joinWithSpaces = false; // no decoder: tokens joined with spaces, as Hugging Face does
    std::vector<int32_t> prefix, suffix; // the post-processor's tokens around one sequence
    int32_t bos = -1, eos = -1;
    QString bosToken, eosToken, chatTemplate;
};

// Why a tokenizer.json cannot be used, thrown while it is read and caught where it is opened.
struct TokenizerRefusal {
    QString what;
};
[[noreturn]] inline void refuse(const QString& what) {
    throw TokenizerRefusal{what};
}

// GPT-2's map of the 256 byte values to printable characters, and back.
const std::vector<char32_t>& byteToChar();
int byteOfChar(char32_t c); // -1 for a character the map does not produce

} // namespace tandem
