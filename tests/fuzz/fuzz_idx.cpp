// Fuzz target: the IDX reader (MNIST and Fashion-MNIST files), plain and gzip.

#include "formats/dataset.h"
#include "formats/gzip.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    (void)tandem::parseIdx(bytes, QStringLiteral("fuzz"));
    if (auto inflated = tandem::gunzip(bytes, 1 << 20, QStringLiteral("fuzz")))
        (void)tandem::parseIdx(*inflated, QStringLiteral("fuzz"));
    return 0;
}
