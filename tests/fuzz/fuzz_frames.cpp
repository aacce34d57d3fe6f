// Fuzz target: a byte stream from a peer, through the frame reader, the blob assembler and the
// message decoder: everything a node reads before it trusts anything.

#include "wire/framing.h"
#include "wire/messages.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tandem::wire;
    // The reader the connection uses, which writes blob data straight into the assembler, fed
    // in pieces of uneven sizes: partial frames are its hardest case.
    BlobAssembler direct;
    direct.setCap(uint32_t(BlobKind::Tensors), 1 << 16);
    direct.setReuse(uint32_t(BlobKind::Tensors)); // as Connection::setBlobCap sets it
    direct.setCap(uint32_t(BlobKind::Model), 1 << 16);
    direct.setCap(uint32_t(BlobKind::BasePart), 1 << 16);
    FrameReader reader(direct, 1 << 20);
    size_t pos = 0, piece = 1;
    const FrameReader::Source source = [&](char* to, qint64 max) -> qint64 {
        const size_t n = std::min({size_t(max), piece, size - pos});
        memcpy(to, data + pos, n);
        pos += n;
        piece = piece * 3 % 1021 + 1;
        return qint64(n);
    };
    while (auto payload = reader.next(source)) {
        if (auto m = decode(*payload))
            (void)encode(*m); // what was accepted must re-encode
        for (uint64_t id = 1; id < 4; ++id)
            (void)direct.take(id);
    }
    return 0;
}
