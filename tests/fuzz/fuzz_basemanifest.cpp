// Fuzz target: a run's base manifest as a coordinator sends it in a run spec, or a checkpoint
// names it: JSON whose BLAKE2b-256 the peer also sends. The hash is taken over the input here, so
// that every input reaches the parser; what it accepts must describe a base consistently.

#include "wire/basemanifest.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using tandem::BaseManifest;
    const QByteArray json(reinterpret_cast<const char*>(data), qsizetype(size));
    const QString hash = QString::fromLatin1(BaseManifest::digest(json).toHex());
    auto m = BaseManifest::parse(json, hash);
    if (!m)
        return 0;
    qint64 total = 0;
    for (int p = 0; p < m->parts(); ++p) {
        const qint64 n = m->partSize(p);
        if (n <= 0 || n > m->partBytes)
            std::abort(); // a part the transfer could never fill
        total += n;
    }
    if (total != m->totalBytes || m->partSize(m->parts()) != 0 || m->partSize(-1) != 0)
        std::abort();
    // What was accepted says the same thing written again.
    BaseManifest again = *m;
    again.seal();
    auto back = BaseManifest::parse(again.json(), again.hash);
    if (!back || back->digests != m->digests || back->totalBytes != m->totalBytes ||
        back->partBytes != m->partBytes)
        std::abort();
    return 0;
}
