// Fuzz target: a SentencePiece tokenizer.model (formats/sentencepiece.h), the protobuf a model
// folder may hold in place of tokenizer.json.

#include "formats/sentencepiece.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)tandem::readSentencePieceModel(
        QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)), QStringLiteral("fuzz"));
    return 0;
}
