#pragma once

// A Hugging Face model folder's tokenizer, read from its tokenizer.json: the pipeline the file
// declares (normalizer, pre-tokenizer, BPE model, post-processor, decoder) and its added
// tokens. Implemented are the parts the supported families ship: byte-level BPE with GPT-2's
// byte map and a splitting regular expression (GPT-2, Llama 3, Qwen2), and SentencePiece-style
// BPE over "▁" with byte fallback (Llama 2, Mistral, TinyLlama). A file that uses anything
// else is refused, naming the component. Regular expressions go through PCRE2
// (QRegularExpression) with Unicode properties, as the files write them.
//
// Plain Qt: nothing here includes LibTorch, so the tokenizer serves datasets and generation
// alike and its tests build in seconds.

#include "common/expected.h"

#include <QByteArray>
#include <QString>
#include <QStringView>

#include <cstdint>
#include <memory>
#include <vector>

class QJsonObject;

namespace tandem {

struct TokenizerParts;

class Tokenizer {
public:
    ~Tokenizer();

    // DIR/tokenizer.json, with DIR/tokenizer_config.json for the BOS and EOS tokens and the
    // chat template where it exists (and generation_config.json or config.json for an EOS id
    // the tokenizer's config leaves out). Errors name the file. `json`, where given, receives
    // tokenizer.json's parsed object (empty where the folder has SentencePiece's file instead),
    // for a reader that needs more of it than the tokenizer keeps (a GGUF export).
    static Expected<std::shared_ptr<const Tokenizer>> fromFolder(const QString& dir,
                                                                 QJsonObject* json = nullptr);
    // The same from the files' bytes (`config` may be empty); `name` is for errors.
    static Expected<std::shared_ptr<const Tokenizer>> fromJson(const QByteArray& tokenizerJson,
                                                               const QByteArray& config,
                                                               const QString& name,
                                                               QJsonObject* json = nullptr);

    // Token ids for `text`. Added tokens are matched first and never split; with `addSpecial`
    // the post-processor adds its tokens (a BOS) around the text as the file's template says.
    // With `continuation` the text goes on from an earlier piece of the same document: it is
    // not the text's start for Metaspace, and a Prepend normalizer leaves its first stretch.
    std::vector<int32_t> encode(QStringView text, bool addSpecial = true,
                                bool continuation = false) const;
    // The UTF-8 bytes that `ids` stand for, through the file's decoder. Byte-fallback tokens
    // give raw bytes, so a prefix of a sequence may end inside a character. Ids outside the
    // vocabulary are passed over; `skipSpecial` leaves special tokens out.
    QByteArray decode(const std::vector<int32_t>& ids, bool skipSpecial = false) const;

    // The tokens the post-processor puts before and after a sequence (a BOS, an EOS).
    const std::vector<int32_t>& prefixTokens() const;
    const std::vector<int32_t>& suffixTokens() const;

    // The largest id the tokenizer gives, plus one.
    int32_t vocabSize() const;
    // The same without added tokens past the end of the model's own vocabulary: Gemma 3's
    // <image_soft_token> (262144) beside a model that scores 262144 ids.
    int32_t modelVocabSize() const;
    // -1 when the tokenizer names none.
    int32_t bos() const;
    int32_t eos() const;
    QString bosToken() const;
    QString eosToken() const;
    // The Jinja template of tokenizer_config.json (its "default" one when it holds several);
    // empty when there is none.
    QString chatTemplate() const;
    // The id of a token in the vocabulary or among the added tokens; -1 when it is neither.
    int32_t idOf(const QString& token) const;
    bool isSpecial(int32_t id) const;
    // SHA-256 (hex) over the files the tokenizer was read from: what identifies it in a cache.
    QByteArray fingerprint() const;
    const QString& name() const;

private:
    Tokenizer();
    std::unique_ptr<TokenizerParts> m;
};

} // namespace tandem
