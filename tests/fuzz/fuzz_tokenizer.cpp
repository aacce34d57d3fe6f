// Fuzz target: a model folder's tokenizer.json with the tokenizer_config.json beside it
// (formats/tokenizer.h), read and then used: a multilingual text with special tokens encoded
// and decoded. The input is tokenizer.json's bytes, then, after a line "--config--",
// tokenizer_config.json's.

#include "formats/tokenizer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray in(reinterpret_cast<const char*>(data), qsizetype(size));
    static const QByteArray kCut("\n--config--\n");
    const qsizetype cut = in.indexOf(kCut);
    const QByteArray json = cut < 0 ? in : in.left(cut);
    const QByteArray config = cut < 0 ? QByteArray() : in.mid(cut + kCut.size());
    auto t = tandem::Tokenizer::fromJson(json, config, QStringLiteral("fuzz"));
    if (!t)
        return 0;
    const tandem::Tokenizer& tok = **t;
    for (bool special : {false, true}) {
        const auto ids = tok.encode(
            QStringLiteral("Héllo wörld, it's 2026! 你好，世界。 <|im_end|><s> \t\n  x"), special);
        (void)tok.decode(ids, special);
    }
    (void)tok.idOf(tok.eosToken());
    return 0;
}
