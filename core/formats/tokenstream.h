#pragma once

// A flat stream of token ids: a byte file read as tokens (text:), or a nanoGPT-style .bin of
// little-endian integers (tokens:). A file is memory-mapped, never read whole, so a 4 GB token
// file costs the pages a batch touches, not 4 GB of memory; a stream received from a peer is
// held in memory instead.

#include "common/expected.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <cstdint>
#include <memory>

class QFile;

namespace tandem {

enum class TokenType { U8, U16, U32, I32 };
// "uint8", "uint16", "uint32" or "int32", as NumPy names them.
QString tokenTypeName(TokenType t);
bool tokenTypeFromName(const QString& name, TokenType* out);
int tokenTypeWidth(TokenType t);

class TokenStream {
public:
    ~TokenStream();

    // Maps a regular file whose size is a whole number of tokens, and scans it once for its
    // largest id (an int32 below 0 is refused by position). Errors name the file.
    static Expected<std::shared_ptr<const TokenStream>> map(const QString& path, TokenType type);
    // Tokens held in memory: a stream a peer sent. `name` is for errors.
    static Expected<std::shared_ptr<const TokenStream>> fromBytes(QByteArray bytes, TokenType type,
                                                                  const QString& name);

    TokenType type() const { return m_type; }
    int64_t size() const { return m_size; }
    int64_t maxToken() const { return m_max; }
    const QString& name() const { return m_name; }

    // Tokens [from, from + n) as int64; the range must lie inside the stream.
    void copy(int64_t from, int64_t n, int64_t* out) const;
    int64_t at(int64_t i) const;
    // The raw little-endian bytes of tokens [from, from + n), without a copy.
    QByteArrayView view(int64_t from, int64_t n) const;
    // After a pass over tokens [from, from + n) (the scan, the hash): a mapped file's pages
    // stop counting as this process's resident memory until a batch touches them again.
    void releasePages(int64_t from, int64_t n) const;

private:
    TokenStream() = default;
    Status scan();

    TokenType m_type = TokenType::U8;
    QString m_name;
    std::unique_ptr<QFile> m_file; // mapped
    QByteArray m_owned;            // or held
    const uchar* m_data = nullptr;
    int64_t m_size = 0;
    int64_t m_max = -1;
};

} // namespace tandem
