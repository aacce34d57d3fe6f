// Fuzz target: the first bytes of a connection to the real TLS server (the listener of the
// coordinator and of `tandem serve`), over loopback, before any authentication. This is the path
// where one 7-byte TLS alert once crashed the process (Qt's OpenSSL backend went on using its
// SSL object after a slot had disconnected the socket inside errorOccurred).
//
// One Server lives for the whole run, in this thread; each input is sent by a fresh client
// that then closes, and the event loop runs until the server has dealt with the connection.

#include "net/identity.h"
#include "net/server.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QTcpSocket>
#include <QTemporaryDir>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>

namespace {

struct Harness {
    Harness() {
        static int argc = 1;
        static char name[] = "fuzz_tls_accept";
        static char* argv[] = {name, nullptr};
        app = std::make_unique<QCoreApplication>(argc, argv);
        QLoggingCategory::setFilterRules(QStringLiteral("tandem.*.debug=false"));
        auto made = tandem::Identity::loadOrCreate(home.path());
        if (!made)
            std::abort();
        identity = std::make_unique<tandem::Identity>(*made);
        server = std::make_unique<tandem::Server>(*identity);
        // Inputs arrive faster than any person connects: the flood limits are not under test.
        server->setMaxPerAddress(1 << 20);
        server->setMaxUnauthenticated(1 << 20);
        server->setHandshakeTimeout(2000);
        if (!server->listenOn(QHostAddress::LocalHost, 0))
            std::abort();
    }
    QTemporaryDir home;
    std::unique_ptr<QCoreApplication> app;
    std::unique_ptr<tandem::Identity> identity;
    std::unique_ptr<tandem::Server> server;
};

void spin(const std::function<bool()>& done, int ms) {
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < ms)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Harness h;
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, h.server->serverPort());
    spin([&] { return client.state() == QAbstractSocket::ConnectedState; }, 2000);
    // Wait until the server has taken the connection, so each input meets a handshake.
    spin([&] { return h.server->unauthenticated() > 0; }, 2000);
    client.write(reinterpret_cast<const char*>(data), qint64(size));
    spin([&] { return client.bytesToWrite() == 0; }, 2000);
    client.disconnectFromHost();
    spin(
        [&] {
            return client.state() == QAbstractSocket::UnconnectedState &&
                   h.server->unauthenticated() == 0;
        },
        3000);
    // Connections closed by the server are deleted later; free them now.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    return 0;
}
