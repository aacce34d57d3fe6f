// Fuzz target: the Hugging Face model archive a coordinator sends a worker (model/hf/hfmodel.h),
// rebuilt as the worker rebuilds it, within 512 MB. The input is the archive without its
// closing SHA-256, which the target appends: a mutation then reaches the container's directory,
// the config and the layout rather than stopping at the digest.

#include "formats/sha256.h"
#include "model/hf/hfmodel.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    QByteArray archive(reinterpret_cast<const char*>(data), qsizetype(size));
    archive += tandem::Sha256::hash(archive);
    if (!tandem::isHfArchive(archive))
        return 0;
    (void)tandem::hfModelFromArchive(archive, QStringLiteral("fuzz"), nullptr, int64_t(512) << 20);
    return 0;
}
