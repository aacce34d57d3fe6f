// Fuzz target: the CSV reader, with the label column by default, by index and by name.

#include "formats/dataset.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    (void)tandem::parseCsv(bytes, QString(), QStringLiteral("fuzz"));
    (void)tandem::parseCsv(bytes, QStringLiteral("0"), QStringLiteral("fuzz"));
    (void)tandem::parseCsv(bytes, QStringLiteral("label"), QStringLiteral("fuzz"),
                           {QStringLiteral("a"), QStringLiteral("b")});
    return 0;
}
