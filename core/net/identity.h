#pragma once

#include "common/expected.h"

#include <QSslCertificate>
#include <QSslKey>
#include <QString>

namespace tandem {

// This node's home folder: --home when given, else the platform's application-data folder
// (~/.local/share/Tandem, ~/Library/Application Support/Tandem, %APPDATA%/Tandem).
QString nodeHome(const QString& override = {});

// The device ID: SHA-256 of the certificate's DER encoding, as 64 lowercase hex digits. It is
// what the trust store pins, so it is computed from the certificate the TLS handshake proved,
// never from anything a peer says about itself.
QString deviceIdOf(const QSslCertificate& cert);
bool isDeviceId(const QString& s);
// How people see a device ID: its first eight digits, upper case, in two groups ("1F65 EBAE"),
// enough to tell apart two machines that share a name.
QString shortDeviceIdText(const QString& id);

// A key pair and a self-signed certificate, made with OpenSSL on first use and kept in the
// home folder (the key readable by its owner only).
class Identity {
public:
    static Expected<Identity> loadOrCreate(const QString& home);

    const QSslCertificate& certificate() const { return m_cert; }
    const QSslKey& key() const { return m_key; }
    QString deviceId() const { return m_id; }

private:
    QSslCertificate m_cert;
    QSslKey m_key;
    QString m_id;
};

} // namespace tandem
