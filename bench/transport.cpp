// Transport throughput: a ResNet-18-sized set of fp32 tensors (CIFAR head, 11.2 M parameters,
// 62 tensors) moved coordinator -> worker -> coordinator over the real TLS connection on
// loopback, packed and unpacked the way a sync step does it (packBundle, blob, unpackInto).
// The coordinator side runs on a thread of its own with its own event loop, as the hub does;
// the worker side on the main thread, as `tandem worker` does.
//
//   bench_transport [ROUNDS]       prints one JSON line; the first round is a warm-up
#include "common/memory.h"
#include "engine/wire/wiretensors.h"
#include "net/connection.h"
#include "net/identity.h"
#include "net/server.h"

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace tandem;

namespace {

double now() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// ResNet-18's parameter shapes with a 10-class head: 11,173,962 parameters.
std::vector<at::Tensor> resnet18Shaped() {
    std::vector<std::vector<int64_t>> shapes{{64, 3, 7, 7}, {64}, {64}};
    int64_t in = 64;
    for (int64_t width : {64, 128, 256, 512}) {
        for (int block = 0; block < 2; ++block) {
            const int64_t from = block == 0 ? in : width;
            shapes.push_back({width, from, 3, 3});
            shapes.push_back({width});
            shapes.push_back({width});
            shapes.push_back({width, width, 3, 3});
            shapes.push_back({width});
            shapes.push_back({width});
            if (block == 0 && from != width) {
                shapes.push_back({width, from, 1, 1});
                shapes.push_back({width});
                shapes.push_back({width});
            }
        }
        in = width;
    }
    shapes.push_back({10, 512});
    shapes.push_back({10});
    std::vector<at::Tensor> out;
    for (const auto& s : shapes)
        out.push_back(at::randn(s));
    return out;
}

ModelLayout layoutOf(const std::vector<at::Tensor>& params) {
    std::vector<std::string> names;
    for (size_t i = 0; i < params.size(); ++i)
        names.push_back("p" + std::to_string(i));
    return ModelLayout::of(names, params, {}, {});
}

struct Times {
    std::vector<std::atomic<double>> sent, arrived; // per round, per direction
    explicit Times(int n)
        : sent(size_t(2 * n))
        , arrived(size_t(2 * n)) {}
};

// The coordinator: sends weights, takes back a bundle of the same size, for `rounds` rounds.
class Coordinator : public QObject {
public:
    Coordinator(const Identity& id, int rounds, Times* times)
        : m_id(id)
        , m_rounds(rounds)
        , m_times(times)
        , m_weights(resnet18Shaped())
        , m_grads(resnet18Shaped())
        , m_layout(layoutOf(m_weights)) {}

    quint16 listen() {
        m_server = new Server(m_id, this);
        connect(m_server, &Server::connectionSecured, this, [this](Connection* c) {
            m_conn = c;
            c->setParent(this);
            c->setBlobCap(wire::BlobKind::Tensors, m_layout.bundleBytes(DType::F32));
            connect(c, &Connection::received, this, [this](const wire::Message& m) {
                if (const auto* r = std::get_if<wire::Result>(&m))
                    onResult(*r);
            });
            sendRound();
        });
        return m_server->listenOn(QHostAddress::LocalHost, 0).ok() ? m_server->serverPort() : 0;
    }

private:
    void sendRound() {
        m_times->sent[size_t(2 * m_round)] = now();
        wire::Assign a;
        a.step = m_round;
        a.weightsBlob = m_conn->sendBlob(wire::BlobKind::Tensors,
                                         packBundle(m_weights, {}, DType::F32, &m_spare));
        m_conn->send(a);
    }
    void onResult(const wire::Result& r) {
        auto blob = m_conn->takeBlob(r.tensorsBlob);
        std::vector<at::Tensor> none;
        if (!blob || !unpackInto(*blob, m_layout, DType::F32, m_grads, none).ok()) {
            std::fprintf(stderr, "bad result in round %d\n", m_round);
            QCoreApplication::exit(1);
            return;
        }
        m_times->arrived[size_t(2 * m_round + 1)] = now();
        if (++m_round < m_rounds)
            sendRound();
        else
            m_conn->send(wire::Bye{QStringLiteral("done")});
    }

    Identity m_id;
    int m_rounds;
    Times* m_times;
    std::vector<at::Tensor> m_weights, m_grads;
    ModelLayout m_layout;
    QByteArray m_spare;
    Server* m_server = nullptr;
    Connection* m_conn = nullptr;
    int m_round = 0;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    keepFreedMemoryForReuse(); // as the app does
    QCoreApplication app(argc, argv);
    const int rounds = argc > 1 ? std::max(2, atoi(argv[1])) : 21;
    QTemporaryDir homeC, homeW;
    auto idC = Identity::loadOrCreate(homeC.path());
    auto idW = Identity::loadOrCreate(homeW.path());
    if (!idC || !idW)
        return 1;
    Times times(rounds);

    QThread net;
    auto* coord = new Coordinator(*idC, rounds, &times);
    coord->moveToThread(&net);
    net.start();
    quint16 port = 0;
    QMetaObject::invokeMethod(
        coord, [&] { port = coord->listen(); }, Qt::BlockingQueuedConnection);
    if (port == 0)
        return 1;

    std::vector<at::Tensor> weights = resnet18Shaped(), grads = resnet18Shaped(), none;
    QByteArray spare;
    const ModelLayout layout = layoutOf(weights);
    const qint64 bytes = layout.bundleBytes(DType::F32);
    Connection* conn = Connection::connectTo(QStringLiteral("127.0.0.1"), port, *idW);
    conn->setBlobCap(wire::BlobKind::Tensors, bytes);
    int exitCode = 0;
    QObject::connect(conn, &Connection::received, [&](const wire::Message& m) {
        if (std::holds_alternative<wire::Bye>(m)) {
            app.quit();
            return;
        }
        const auto* a = std::get_if<wire::Assign>(&m);
        if (!a)
            return;
        auto blob = conn->takeBlob(a->weightsBlob);
        if (!blob || !unpackInto(*blob, layout, DType::F32, weights, none).ok()) {
            exitCode = 1;
            app.quit();
            return;
        }
        const size_t r = size_t(a->step);
        times.arrived[2 * r] = now();
        times.sent[2 * r + 1] = now();
        wire::Result res;
        res.step = a->step;
        res.tensorsBlob =
            conn->sendBlob(wire::BlobKind::Tensors, packBundle(grads, {}, DType::F32, &spare));
        conn->send(res);
    });
    QObject::connect(conn, &Connection::closed, [&](const QString& why) {
        std::fprintf(stderr, "connection closed: %s\n", qPrintable(why));
        exitCode = 1;
        app.quit();
    });
    app.exec();
    QMetaObject::invokeMethod(
        coord, [&] { delete coord; }, Qt::BlockingQueuedConnection);
    net.quit();
    net.wait();
    if (exitCode != 0)
        return exitCode;

    std::vector<double> down, up, round;
    for (int r = 1; r < rounds; ++r) { // round 0 warms up
        down.push_back(times.arrived[size_t(2 * r)] - times.sent[size_t(2 * r)]);
        up.push_back(times.arrived[size_t(2 * r + 1)] - times.sent[size_t(2 * r + 1)]);
        round.push_back(times.arrived[size_t(2 * r + 1)] - times.sent[size_t(2 * r)]);
    }
    const double gb = double(bytes) / 1e9;
    std::printf("{\"bytes\": %lld, \"tensors\": %zu, \"rounds\": %d, \"down_ms\": %.2f, "
                "\"up_ms\": %.2f, \"round_ms\": %.2f, \"down_gb_per_s\": %.3f, "
                "\"up_gb_per_s\": %.3f}\n",
                static_cast<long long>(bytes), weights.size(), rounds - 1, median(down) * 1e3,
                median(up) * 1e3, median(round) * 1e3, gb / median(down), gb / median(up));
    return 0;
}
