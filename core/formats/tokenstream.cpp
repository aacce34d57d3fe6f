#include "formats/tokenstream.h"

#include "common/files.h"

#include <QFile>
#include <QFileInfo>
#include <QtEndian>

#include <cstring>

#if defined(Q_OS_UNIX)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace tandem {

QString tokenTypeName(TokenType t) {
    switch (t) {
    case TokenType::U8:
        return QStringLiteral("uint8");
    case TokenType::U16:
        return QStringLiteral("uint16");
    case TokenType::U32:
        return QStringLiteral("uint32");
    case TokenType::I32:
        return QStringLiteral("int32");
    }
    return {};
}

bool tokenTypeFromName(const QString& name, TokenType* out) {
    for (TokenType t : {TokenType::U8, TokenType::U16, TokenType::U32, TokenType::I32})
        if (tokenTypeName(t) == name) {
            *out = t;
            return true;
        }
    return false;
}

int tokenTypeWidth(TokenType t) {
    switch (t) {
    case TokenType::U8:
        return 1;
    case TokenType::U16:
        return 2;
    case TokenType::U32:
    case TokenType::I32:
        return 4;
    }
    return 1;
}

TokenStream::~TokenStream() = default;

Expected<std::shared_ptr<const TokenStream>> TokenStream::map(const QString& path, TokenType type) {
    if (auto st = checkRegularFile(path); !st)
        return st.error();
    std::shared_ptr<TokenStream> s(new TokenStream);
    s->m_type = type;
    s->m_name = path;
    s->m_file = std::make_unique<QFile>(path);
    if (!s->m_file->open(QIODevice::ReadOnly))
        return makeError(ErrorCode::Io,
                         QStringLiteral("%1: %2").arg(path, s->m_file->errorString()));
    const qint64 bytes = s->m_file->size();
    const int w = tokenTypeWidth(type);
    if (bytes % w != 0)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: its %2 bytes are not a whole number of %3 tokens "
                                        "(%4 bytes each); is dtype= right?")
                             .arg(path)
                             .arg(bytes)
                             .arg(tokenTypeName(type))
                             .arg(w));
    s->m_size = bytes / w;
    if (bytes > 0) {
        s->m_data = s->m_file->map(0, bytes);
        if (!s->m_data)
            return makeError(ErrorCode::Io, QStringLiteral("%1: cannot be memory-mapped: %2")
                                                .arg(path, s->m_file->errorString()));
    }
    if (auto st = s->scan(); !st)
        return st.error();
    return std::shared_ptr<const TokenStream>(std::move(s));
}

void TokenStream::releasePages(int64_t from, int64_t n) const {
#if defined(Q_OS_UNIX)
    // The pages stay in the page cache; the process only stops counting them as its own, and
    // a later read faults them in again, so rounding the range out to whole pages is safe.
    if (!m_file || !m_data || n <= 0)
        return;
    static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    const int w = tokenTypeWidth(m_type);
    const uintptr_t begin = uintptr_t(m_data + from * w) & ~(page - 1);
    const uintptr_t end = uintptr_t(m_data + std::min(from + n, m_size) * w);
    if (end > begin)
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
    (void)from;
    (void)n;
#endif
}

Expected<std::shared_ptr<const TokenStream>>
TokenStream::fromBytes(QByteArray bytes, TokenType type, const QString& name) {
    std::shared_ptr<TokenStream> s(new TokenStream);
    s->m_type = type;
    s->m_name = name;
    const int w = tokenTypeWidth(type);
    if (bytes.size() % w != 0)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: a token stream of %2 bytes is not a whole number "
                                        "of %3 tokens")
                             .arg(name)
                             .arg(bytes.size())
                             .arg(tokenTypeName(type)));
    s->m_owned = std::move(bytes);
    s->m_data = reinterpret_cast<const uchar*>(s->m_owned.constData());
    s->m_size = s->m_owned.size() / w;
    if (auto st = s->scan(); !st)
        return st.error();
    return std::shared_ptr<const TokenStream>(std::move(s));
}

Status TokenStream::scan() {
    // In slices, each let go once read: a mapped file of gigabytes is scanned without becoming
    // gigabytes of this process's resident memory.
    constexpr int64_t kSlice = int64_t(1) << 22;
    int64_t best = -1;
    for (int64_t from = 0; from < m_size; from += kSlice) {
        const int64_t to = std::min(m_size, from + kSlice);
        switch (m_type) {
        case TokenType::U8:
            for (int64_t i = from; i < to; ++i)
                best = std::max<int64_t>(best, m_data[i]);
            break;
        case TokenType::U16:
            for (int64_t i = from; i < to; ++i)
                best = std::max<int64_t>(best, qFromLittleEndian<quint16>(m_data + 2 * i));
            break;
        case TokenType::U32:
            for (int64_t i = from; i < to; ++i)
                best = std::max<int64_t>(best, qFromLittleEndian<quint32>(m_data + 4 * i));
            break;
        case TokenType::I32:
            for (int64_t i = from; i < to; ++i) {
                const qint32 v = qFromLittleEndian<qint32>(m_data + 4 * i);
                if (v < 0)
                    return makeError(ErrorCode::Corrupt,
                                     QStringLiteral("%1: token %2 at position %3 is negative")
                                         .arg(m_name)
                                         .arg(v)
                                         .arg(i));
                best = std::max<int64_t>(best, v);
            }
            break;
        }
        releasePages(from, to - from);
    }
    m_max = best;
    return success();
}

int64_t TokenStream::at(int64_t i) const {
    switch (m_type) {
    case TokenType::U8:
        return m_data[i];
    case TokenType::U16:
        return qFromLittleEndian<quint16>(m_data + 2 * i);
    case TokenType::U32:
        return qFromLittleEndian<quint32>(m_data + 4 * i);
    case TokenType::I32:
        return qFromLittleEndian<qint32>(m_data + 4 * i);
    }
    return 0;
}

void TokenStream::copy(int64_t from, int64_t n, int64_t* out) const {
    if (m_type == TokenType::U8) {
        const uchar* p = m_data + from;
        for (int64_t i = 0; i < n; ++i)
            out[i] = p[i];
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        out[i] = at(from + i);
}

QByteArrayView TokenStream::view(int64_t from, int64_t n) const {
    const int w = tokenTypeWidth(m_type);
    return QByteArrayView(reinterpret_cast<const char*>(m_data + from * w), qsizetype(n * w));
}

} // namespace tandem
