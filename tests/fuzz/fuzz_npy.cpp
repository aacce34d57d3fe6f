// Fuzz target: the .npy array parser, and a dataset container holding what it parsed.

#include "formats/datasetspec.h"
#include "formats/tokenstream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    (void)tandem::parseNpy(bytes, QStringLiteral("fuzz"));
    // The same bytes as a dataset a peer sent, and as a token stream of each width.
    (void)tandem::datasetFromContainer(bytes, QStringLiteral("fuzz"));
    for (tandem::TokenType t : {tandem::TokenType::U8, tandem::TokenType::U16,
                                tandem::TokenType::U32, tandem::TokenType::I32})
        (void)tandem::TokenStream::fromBytes(bytes, t, QStringLiteral("fuzz"));
    return 0;
}
