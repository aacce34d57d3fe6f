#pragma once

#include "common/expected.h"

#include <QByteArray>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace tandem {

// A blob's bytes made on one thread and sent on another (Connection::openBlobFrom), holding no
// more than about `capBytes` of them at once: the maker waits while that much is made and not
// yet sent. A range's optimizer state of gigabytes then leaves its owner without a second copy
// of it in memory.
class BlobPipe {
public:
    static constexpr qint64 kDefaultCap = qint64(64) << 20;
    static constexpr qint64 kDefaultChunk = qint64(4) << 20;
    explicit BlobPipe(qint64 capBytes = kDefaultCap, qint64 chunkBytes = kDefaultChunk);

    // The maker's side. Appends `n` bytes, waiting while the pipe holds its cap; false once the
    // pipe is cancelled (nothing reads it any more).
    bool write(const char* p, qint64 n);
    // What was written is all: the last part may be read.
    void close();
    // Bytes that may be read, from the first: whole parts of `chunkBytes`, and after close()
    // every byte written.
    qint64 ready() const;

    // The sender's side: the `n` bytes from `at`, which must be the first not read yet and lie
    // within ready(). What is read leaves the pipe.
    Expected<QByteArray> read(qint64 at, qint64 n);
    // Nothing will read the pipe any more: write() returns false from now on, and a maker that
    // waits goes on.
    void cancel();
    bool cancelled() const;
    // What the pipe holds at most, for the tests: its cap's high-water mark.
    qint64 heldPeak() const;

    // A reader for Connection::openBlobFrom of a blob of `size` bytes: the pipe is cancelled when
    // the connection lets go of it before it read them all (the connection closed), so that its
    // maker never waits for a reader that is gone.
    static std::function<Expected<QByteArray>(qint64, qint64)>
    readerOf(const std::shared_ptr<BlobPipe>& pipe, qint64 size);

private:
    const qint64 m_cap;
    const qint64 m_chunk;
    mutable std::mutex m_mutex;
    std::condition_variable m_drained;
    std::deque<QByteArray> m_parts; // ready, in order
    qint64 m_frontRead = 0;         // bytes of the first part already read
    QByteArray m_pending;           // written, not yet a part
    qint64 m_ready = 0;             // bytes in parts so far, read or not
    qint64 m_read = 0;
    qint64 m_peak = 0;
    bool m_cancelled = false;
};

} // namespace tandem
