// Fuzz target: the safetensors reader.

#include "formats/tensorfile.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)tandem::parseSafetensors(QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)),
                                   QStringLiteral("fuzz"));
    return 0;
}
