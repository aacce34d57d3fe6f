// Fuzz target: Tandem's checkpoint container and the dataset container built on it.

#include "formats/dataset.h"
#include "formats/tensorfile.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    (void)tandem::parseCheckpoint(bytes, QStringLiteral("fuzz"));
    (void)tandem::datasetFromContainer(bytes, QStringLiteral("fuzz"));
    return 0;
}
