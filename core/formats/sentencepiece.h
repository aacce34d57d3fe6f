#pragma once

// A SentencePiece model file (tokenizer.model, a serialised sentencepiece.ModelProto) turned
// into the tokenizer.json that describes the same tokenizer, as Hugging Face's converter for
// Llama 2 and Mistral writes it: the pieces as the vocabulary, merges ordered by the score of
// the piece they make (SentencePiece's BPE merges the pair whose piece scores highest), "▁"
// for spaces with the dummy prefix, byte fallback, the control pieces as special tokens and
// the user-defined ones as added tokens. The tokenizer then runs through the same pipeline as
// every tokenizer.json (tokenizer.h), and is checked against SentencePiece itself in the tests.
//
// Implemented is what those families' files use: BPE pieces, the identity normalizer, the dummy
// prefix and byte fallback. A unigram model, a normalization rule other than identity, removal
// of extra whitespace or whitespace as a suffix is refused, naming the setting.

#include "common/expected.h"

#include <QByteArray>
#include <QString>

namespace tandem {

struct SentencePieceModel {
    QByteArray tokenizerJson; // a Hugging Face tokenizer.json
    QString bosPiece;         // the model's own BOS and EOS pieces; empty when it has none
    QString eosPiece;
};

// A tokenizer.model larger than this is not one (Llama 2's is 0.5 MB, Gemma's 4 MB).
constexpr qsizetype kMaxSentencePieceBytes = qsizetype(64) << 20;

// `name` is for errors (the file's path).
Expected<SentencePieceModel> readSentencePieceModel(const QByteArray& model, const QString& name);

} // namespace tandem
