// Fuzz target: Tandem's checkpoint container and the dataset container built on it.

#include "formats/dataset.h"
#include "formats/tensorfile.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    (void)tandem::parseCheckpoint(bytes, QStringLiteral("fuzz"));
    // Read in place (a peer's range of state), every view is read whole: one past the bytes
    // would be caught here.
    if (auto shared = tandem::parseCheckpointInPlace(bytes, QStringLiteral("fuzz"))) {
        unsigned sum = 0;
        for (const tandem::TensorRecord& t : shared->tensors)
            for (char c : t.data)
                sum += unsigned(uchar(c));
        volatile unsigned kept = sum;
        (void)kept;
    }
    (void)tandem::datasetFromContainer(bytes, QStringLiteral("fuzz"));
    return 0;
}
