// Fuzz target: a Hugging Face model folder's config.json (model/hf/config.h), read by every
// family's rules: what it accepts is within the size caps, so that nothing is planned or
// allocated from figures no model has.

#include "model/hf/config.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto c = tandem::parseHfConfig(QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)),
                                   QStringLiteral("fuzz"));
    if (!c)
        return 0;
    // Accepted: positive sizes, kept within what the caps allow.
    if (c->vocab < 1 || c->hidden < 1 || c->layers < 1 || c->heads < 1 || c->kvHeads < 1 ||
        c->headDim < 1 || c->layers > 1024 || c->hidden > (1 << 16) || c->vocab > (1 << 22))
        std::abort();
    return 0;
}
