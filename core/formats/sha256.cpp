#include "formats/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace tandem {

struct Sha256::Context {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256()
    : m_ctx(std::make_unique<Context>()) {
    // Fails only when OpenSSL cannot allocate a few bytes, where nothing else would work
    // either.
    if (!m_ctx->ctx || EVP_DigestInit_ex(m_ctx->ctx, EVP_sha256(), nullptr) != 1)
        std::abort();
}

Sha256::~Sha256() = default;

void Sha256::addData(QByteArrayView data) {
    if (!data.isEmpty())
        EVP_DigestUpdate(m_ctx->ctx, data.data(), size_t(data.size()));
}

QByteArray Sha256::result() {
    QByteArray out(EVP_MAX_MD_SIZE, Qt::Uninitialized);
    unsigned int n = 0;
    EVP_DigestFinal_ex(m_ctx->ctx, reinterpret_cast<unsigned char*>(out.data()), &n);
    out.truncate(qsizetype(n));
    return out;
}

QByteArray Sha256::hash(QByteArrayView data) {
    Sha256 h;
    h.addData(data);
    return h.result();
}

} // namespace tandem
