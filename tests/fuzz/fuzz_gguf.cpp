// Fuzz target: the GGUF reader (formats/gguf.h), and ggml's block formats over whatever tensors
// it accepts.

#include "formats/gguf.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArrayView bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    auto g = tandem::parseGguf(bytes, QStringLiteral("fuzz"));
    if (!g)
        return 0;
    int64_t budget = int64_t(1) << 20; // values decoded per input, so that each stays quick
    for (const tandem::GgufTensor& t : g->tensors) {
        if (t.elements() > budget)
            break;
        budget -= t.elements();
        (void)tandem::ggmlDequantize(t.type, bytes.data() + g->dataOffset + t.offset, t.elements());
    }
    return 0;
}
