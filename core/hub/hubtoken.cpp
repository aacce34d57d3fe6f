#include "hub/hubtoken.h"

#include "hub/hubcache.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSaveFile>
#include <QStandardPaths>

#include <optional>

#if defined(Q_OS_WIN)
#include <wincred.h>
#include <windows.h>
#endif

namespace tandem::hub {

namespace {

constexpr auto kService = "tandem.huggingface";

#if defined(Q_OS_WIN)
const wchar_t* kTarget = L"tandem.huggingface";

QString keychainRead() {
    PCREDENTIALW cred = nullptr;
    if (!CredReadW(kTarget, CRED_TYPE_GENERIC, 0, &cred))
        return {};
    const QString token = QString::fromUtf8(reinterpret_cast<const char*>(cred->CredentialBlob),
                                            int(cred->CredentialBlobSize));
    CredFree(cred);
    return token;
}

bool keychainWrite(const QString& token) {
    QByteArray blob = token.toUtf8();
    CREDENTIALW cred = {};
    cred.Type = CRED_TYPE_GENERIC;
    cred.TargetName = const_cast<wchar_t*>(kTarget);
    cred.CredentialBlobSize = DWORD(blob.size());
    cred.CredentialBlob = reinterpret_cast<LPBYTE>(blob.data());
    cred.Persist = CRED_PERSIST_LOCAL_MACHINE;
    return CredWriteW(&cred, 0);
}

void keychainErase() {
    CredDeleteW(kTarget, CRED_TYPE_GENERIC, 0);
}
#else
// macOS: the `security` tool; elsewhere: `secret-tool` (libsecret), where a desktop session's
// bus is there to reach the Secret Service. The token goes through standard input, never the
// command line, which other users can read.
struct Tool {
    QString program;
    bool mac = false;
};

std::optional<Tool> keychainTool() {
#if defined(Q_OS_MACOS)
    return Tool{QStringLiteral("/usr/bin/security"), true};
#else
    if (qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"))
        return std::nullopt;
    const QString tool = QStandardPaths::findExecutable(QStringLiteral("secret-tool"));
    if (tool.isEmpty())
        return std::nullopt;
    return Tool{tool, false};
#endif
}

QStringList secretAttributes() {
    return {QStringLiteral("service"), QLatin1String(kService), QStringLiteral("account"),
            QStringLiteral("token")};
}

// Runs the tool with `input` on its standard input; its output, or nothing when it failed.
std::optional<QByteArray> runTool(const Tool& t, const QStringList& args, const QByteArray& input,
                                  int timeoutMs) {
    QProcess p;
    p.start(t.program, args);
    if (!p.waitForStarted(5000))
        return std::nullopt;
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(1000);
        return std::nullopt;
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return std::nullopt;
    return p.readAllStandardOutput();
}

const QString kAccount = QStringLiteral("token");

QString keychainRead() {
    const auto t = keychainTool();
    if (!t)
        return {};
    const QStringList args = t->mac ? QStringList{QStringLiteral("find-generic-password"),
                                                  QStringLiteral("-s"),
                                                  QLatin1String(kService),
                                                  QStringLiteral("-a"),
                                                  kAccount,
                                                  QStringLiteral("-w")}
                                    : QStringList{QStringLiteral("lookup")} + secretAttributes();
    const auto out = runTool(*t, args, {}, 20000);
    return out ? QString::fromUtf8(*out).trimmed() : QString();
}

bool keychainWrite(const QString& token) {
    const auto t = keychainTool();
    if (!t)
        return false;
    if (t->mac) // `security -i` reads its commands from standard input
        return runTool(*t, {QStringLiteral("-i")},
                       QStringLiteral("add-generic-password -U -s %1 -a %2 -w %3\n")
                           .arg(QLatin1String(kService), kAccount, token)
                           .toUtf8(),
                       60000)
            .has_value();
    return runTool(*t,
                   QStringList{QStringLiteral("store"),
                               QStringLiteral("--label=Tandem: Hugging Face token")} +
                       secretAttributes(),
                   token.toUtf8(), 60000)
        .has_value();
}

void keychainErase() {
    const auto t = keychainTool();
    if (!t)
        return;
    runTool(*t,
            t->mac ? QStringList{QStringLiteral("delete-generic-password"), QStringLiteral("-s"),
                                 QLatin1String(kService), QStringLiteral("-a"), kAccount}
                   : QStringList{QStringLiteral("clear")} + secretAttributes(),
            {}, 20000);
}
#endif

// Only letters, digits and the few marks tokens carry: a token with anything else (a space, a
// newline, a quote) was pasted wrong, and would also break the keychain tool's command line.
bool tokenLooksRight(const QString& t) {
    if (t.isEmpty() || t.size() > 512)
        return false;
    for (const QChar c : t)
        if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != QLatin1Char('_') &&
            c != QLatin1Char('-') && c != QLatin1Char('.'))
            return false;
    return true;
}

} // namespace

QString tokenFile() {
    const QString path = qEnvironmentVariable("HF_TOKEN_PATH");
    return path.isEmpty() ? QDir(hfHome()).filePath(QStringLiteral("token")) : path;
}

Token findToken() {
    const QString env = qEnvironmentVariable("HF_TOKEN").trimmed();
    if (!env.isEmpty())
        return {env, QStringLiteral("HF_TOKEN")};
    const QString kept = keychainRead();
    if (!kept.isEmpty())
        return {kept, QStringLiteral("keychain")};
    QFile f(tokenFile());
    if (f.size() < 4096 && f.open(QIODevice::ReadOnly)) {
        const QString t = QString::fromUtf8(f.readAll()).trimmed();
        if (!t.isEmpty())
            return {t, f.fileName()};
    }
    return {};
}

Expected<QString> saveToken(const QString& token) {
    const QString t = token.trimmed();
    if (!tokenLooksRight(t))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("that is not a Hugging Face access token (it has spaces "
                                        "or other marks); copy it again from "
                                        "huggingface.co/settings/tokens"));
    if (keychainWrite(t))
        return QStringLiteral("keychain");
    const QString path = tokenFile();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) ||
        !f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        f.write(t.toUtf8()) != t.toUtf8().size() || !f.commit())
        return makeError(ErrorCode::Io, QStringLiteral("could not save the token in %1: %2")
                                            .arg(QDir::toNativeSeparators(path), f.errorString()));
    return path;
}

void forgetToken() {
    keychainErase();
    QFile::remove(tokenFile());
}

} // namespace tandem::hub
