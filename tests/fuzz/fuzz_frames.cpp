// Fuzz target: a byte stream from a peer, through the frame decoder, the blob-part parser and
// assembler, and the message decoder: everything a node reads before it trusts anything.

#include "wire/framing.h"
#include "wire/messages.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tandem::wire;
    FrameDecoder decoder(1 << 20);
    BlobAssembler blobs;
    blobs.setCap(uint32_t(BlobKind::Tensors), 1 << 16);
    blobs.setCap(uint32_t(BlobKind::Model), 1 << 16);
    // Feed in two uneven pieces: partial frames are the decoder's hardest case.
    const size_t cut = size / 3;
    for (int piece = 0; piece < 2; ++piece) {
        const size_t from = piece == 0 ? 0 : cut, to = piece == 0 ? cut : size;
        decoder.append(
            QByteArray(reinterpret_cast<const char*>(data) + from, qsizetype(to - from)));
        while (auto payload = decoder.next()) {
            if (isBlobPart(*payload)) {
                if (auto part = parseBlobPart(*payload)) {
                    (void)blobs.add(part->id, part->kind, part->total, part->offset, part->data);
                    (void)blobs.take(part->id);
                }
            } else if (auto m = decode(*payload)) {
                (void)encode(*m); // what was accepted must re-encode
            }
        }
        if (decoder.failed())
            break;
    }
    // The same bytes through the reader the connection uses, which writes blob data straight
    // into the assembler, in pieces of uneven sizes.
    BlobAssembler direct;
    direct.setCap(uint32_t(BlobKind::Tensors), 1 << 16);
    FrameReader reader(direct, 1 << 20);
    size_t pos = 0, piece = 1;
    const FrameReader::Source source = [&](char* to, qint64 max) -> qint64 {
        const size_t n = std::min({size_t(max), piece, size - pos});
        memcpy(to, data + pos, n);
        pos += n;
        piece = piece * 3 % 1021 + 1;
        return qint64(n);
    };
    while (auto payload = reader.next(source))
        if (auto m = decode(*payload))
            (void)encode(*m);
    return 0;
}
