#include "net/identity.h"

#include "common/files.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QHostInfo>
#include <QSaveFile>
#include <QStandardPaths>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <memory>

namespace tandem {

QString nodeHome(const QString& override) {
    if (!override.isEmpty())
        return QDir(override).absolutePath();
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

QString deviceIdOf(const QSslCertificate& cert) {
    return QString::fromLatin1(
        QCryptographicHash::hash(cert.toDer(), QCryptographicHash::Sha256).toHex());
}

QString shortDeviceIdText(const QString& id) {
    const QString digits = id.left(8).toUpper();
    return digits.size() <= 4 ? digits : digits.left(4) + QLatin1Char(' ') + digits.mid(4);
}

bool isDeviceId(const QString& s) {
    if (s.size() != 64)
        return false;
    for (QChar c : s)
        if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9')) ||
              (c >= QLatin1Char('a') && c <= QLatin1Char('f'))))
            return false;
    return true;
}

namespace {

template <typename T, void (*F)(T*)> struct Deleter {
    void operator()(T* p) const { F(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

QByteArray bioBytes(BIO* b) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(b, &data);
    return QByteArray(data, n);
}

// A P-256 key and a self-signed certificate valid for 20 years. The certificate's fields
// carry no authority: peers pin its hash at pairing.
Expected<std::pair<QByteArray, QByteArray>> makeIdentity() {
    auto fail = [](const char* what) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("cannot create this node's identity: %1 failed")
                             .arg(QLatin1String(what)));
    };
    PKey key(EVP_EC_gen("P-256"));
    if (!key)
        return fail("EVP_EC_gen");
    X509Ptr x(X509_new());
    if (!x)
        return fail("X509_new");
    X509_set_version(x.get(), 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof serial);
    serial[0] &= 0x7f; // positive
    BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x.get()), 20L * 365 * 24 * 3600);
    X509_set_pubkey(x.get(), key.get());
    X509_NAME* name = X509_get_subject_name(x.get());
    const QByteArray cn =
        (QStringLiteral("Tandem node ") + QHostInfo::localHostName()).left(60).toUtf8();
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(cn.constData()), -1, -1, 0);
    X509_set_issuer_name(x.get(), name);
    if (X509_sign(x.get(), key.get(), EVP_sha256()) <= 0)
        return fail("X509_sign");

    Bio kb(BIO_new(BIO_s_mem())), cb(BIO_new(BIO_s_mem()));
    if (!PEM_write_bio_PrivateKey(kb.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr))
        return fail("PEM_write_bio_PrivateKey");
    if (!PEM_write_bio_X509(cb.get(), x.get()))
        return fail("PEM_write_bio_X509");
    return std::make_pair(bioBytes(kb.get()), bioBytes(cb.get()));
}

Status writePrivate(const QString& path, const QByteArray& bytes, bool secret) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    if (secret)
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    if (!f.commit())
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    return success();
}

// The certificate is this key's own and its signature holds: a certificate damaged in a way
// that still parses would otherwise give this node another device ID without a word.
bool signedBy(const QByteArray& certPem, const QByteArray& keyPem) {
    Bio cb(BIO_new_mem_buf(certPem.constData(), int(certPem.size())));
    Bio kb(BIO_new_mem_buf(keyPem.constData(), int(keyPem.size())));
    if (!cb || !kb)
        return false;
    X509Ptr cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
    PKey key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
    return cert && key && X509_check_private_key(cert.get(), key.get()) == 1 &&
           X509_verify(cert.get(), key.get()) == 1;
}

} // namespace

Expected<Identity> Identity::loadOrCreate(const QString& home) {
    const QString dir = QDir(home).filePath(QStringLiteral("identity"));
    const QString keyPath = QDir(dir).filePath(QStringLiteral("key.pem"));
    const QString certPath = QDir(dir).filePath(QStringLiteral("cert.pem"));
    if (!QFile::exists(keyPath) || !QFile::exists(certPath)) {
        if (!QDir().mkpath(dir))
            return makeError(ErrorCode::Io, QStringLiteral("cannot create %1").arg(dir));
        auto made = makeIdentity();
        if (!made)
            return made.error();
        if (auto st = writePrivate(keyPath, made->first, true); !st)
            return st.error();
        if (auto st = writePrivate(certPath, made->second, false); !st)
            return st.error();
    }
    const auto damaged = [&](const QString& file) {
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("this node's identity is damaged (%1); move the folder %2 "
                                        "away to make a new one (peers must then pair again)")
                             .arg(file, dir));
    };
    auto keyPem = readRegularFile(keyPath, 64 * 1024);
    if (!keyPem)
        return keyPem.error();
    auto certPem = readRegularFile(certPath, 64 * 1024);
    if (!certPem)
        return certPem.error();
    Identity id;
    id.m_key = QSslKey(*keyPem, QSsl::Ec, QSsl::Pem);
    if (id.m_key.isNull())
        return damaged(keyPath);
    const QList<QSslCertificate> certs = QSslCertificate::fromData(*certPem, QSsl::Pem);
    if (certs.isEmpty() || !signedBy(*certPem, *keyPem))
        return damaged(certPath);
    id.m_cert = certs.first();
    id.m_id = deviceIdOf(id.m_cert);
    return id;
}

} // namespace tandem
