// Fuzz target: a UDP announcement (discovery), which anyone on the LAN can send.

#include "wire/messages.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray datagram(reinterpret_cast<const char*>(data), qsizetype(size));
    if (auto a = tandem::wire::decodeAnnouncement(datagram))
        (void)tandem::wire::encodeAnnouncement(*a);
    // The same bytes behind the magic, as most junk on the port would not carry it.
    (void)tandem::wire::decodeAnnouncement(QByteArray("TDMA") + datagram);
    return 0;
}
