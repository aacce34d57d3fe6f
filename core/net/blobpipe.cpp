#include "net/blobpipe.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tandem {

BlobPipe::BlobPipe(qint64 capBytes, qint64 chunkBytes)
    : m_cap(std::max<qint64>(1, capBytes))
    , m_chunk(std::clamp<qint64>(chunkBytes, 1, std::max<qint64>(1, capBytes))) {}

bool BlobPipe::write(const char* p, qint64 n) {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (n > 0) {
        if (m_cancelled)
            return false;
        if (m_pending.isEmpty())
            m_pending.reserve(qsizetype(m_chunk));
        const qint64 take = std::min(n, m_chunk - qint64(m_pending.size()));
        m_pending.append(p, qsizetype(take));
        p += take;
        n -= take;
        if (qint64(m_pending.size()) < m_chunk)
            continue;
        // A whole part: it waits to be read, once the parts before it leave room for it.
        m_drained.wait(lock, [&] { return m_cancelled || m_ready - m_read < m_cap; });
        if (m_cancelled)
            return false;
        m_ready += m_pending.size();
        m_parts.push_back(std::exchange(m_pending, QByteArray()));
        m_peak = std::max(m_peak, m_ready - m_read);
    }
    return !m_cancelled;
}

void BlobPipe::close() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_pending.isEmpty())
        return;
    m_ready += m_pending.size();
    m_parts.push_back(std::exchange(m_pending, QByteArray()));
    m_peak = std::max(m_peak, m_ready - m_read);
}

qint64 BlobPipe::ready() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_ready;
}

Expected<QByteArray> BlobPipe::read(qint64 at, qint64 n) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (at != m_read || n < 0 || n > m_ready - m_read)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("bytes %1 to %2 asked of a pipe that has sent %3 and holds "
                                        "%4 more")
                             .arg(at)
                             .arg(at + n)
                             .arg(m_read)
                             .arg(m_ready - m_read));
    // One part read whole is handed over as it is; otherwise the bytes are copied out.
    if (!m_parts.empty() && m_frontRead == 0 && qint64(m_parts.front().size()) == n) {
        QByteArray out = std::move(m_parts.front());
        m_parts.pop_front();
        m_read += n;
        m_drained.notify_all();
        return out;
    }
    QByteArray out(qsizetype(n), Qt::Uninitialized);
    qint64 got = 0;
    while (got < n) {
        const QByteArray& front = m_parts.front();
        const qint64 take = std::min(n - got, qint64(front.size()) - m_frontRead);
        memcpy(out.data() + got, front.constData() + m_frontRead, size_t(take));
        got += take;
        m_frontRead += take;
        if (m_frontRead == qint64(front.size())) {
            m_parts.pop_front();
            m_frontRead = 0;
        }
    }
    m_read += n;
    m_drained.notify_all();
    return out;
}

void BlobPipe::cancel() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_cancelled = true;
    }
    m_drained.notify_all();
}

bool BlobPipe::cancelled() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_cancelled;
}

qint64 BlobPipe::heldPeak() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_peak;
}

std::function<Expected<QByteArray>(qint64, qint64)>
BlobPipe::readerOf(const std::shared_ptr<BlobPipe>& pipe, qint64 size) {
    // Shared by every copy of the reader; the last copy to go cancels the pipe unless it read
    // the whole blob.
    struct Hold {
        std::shared_ptr<BlobPipe> pipe;
        qint64 size = 0;
        qint64 read = 0;
        ~Hold() {
            if (pipe && read < size)
                pipe->cancel();
        }
    };
    auto hold = std::make_shared<Hold>();
    hold->pipe = pipe;
    hold->size = size;
    return [hold](qint64 at, qint64 n) {
        Expected<QByteArray> part = hold->pipe->read(at, n);
        if (part)
            hold->read += part->size();
        return part;
    };
}

} // namespace tandem
