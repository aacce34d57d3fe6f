#include "common/failpoint.h"

#if TANDEM_FAILPOINTS_BUILD

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <signal.h>

namespace tandem::failpoint {

namespace {

// Every failpoint in the code. A name in TANDEM_FAILPOINTS that is not here is a typo, and a
// test that armed it would pass without anything having fired.
constexpr std::array<const char*, 21> kFailpoints{
    "checkpoint.write",   // a run checkpoint, before its bytes are written
    "checkpoint.rename",  // written to its temporary file, before it replaces the old one
    "checkpoint.renamed", // just after it replaced the old one
    "frame.send",         // half of a message frame handed to the socket
    "worker.upload",      // a worker's result, part of it sent
    "hub.broadcast",      // the coordinator's weights to a worker, part of them sent
    "trainer.step",       // the optimizer step taken, the new weights not yet sent
    "dataset.transfer",   // a worker has received the coordinator's dataset, not yet read it
    "worker.admit",       // a worker is about to read the run's model (off its event thread)
    "shard.logs",         // a sharded run's coordinator is about to write its ranges' logs
    "shard.plan",         // a sharded run's coordinator is about to size the machines' ranges
    "shard.log.append",   // a record of a range's log, before it is written
    "shard.save",         // a worker is about to write its range's state (off its event thread)
    "shard.spill.write",  // a range's state written to its file beside the run, not yet kept
    "shard.close",        // a worker heard a sharded step's close, before it acts on it
    "base.part",          // a worker has written a part of the run's base, not asked for more
    "base.write",         // a worker is about to write a part of the run's base to its cache
    "pairing.exchange",   // a pairing request received, the answer not yet sent
    "truststore.write",   // the trust store written to its temporary file, not yet renamed
    "file.write",         // any other whole-file write (exports, sweep records), before renaming
    "gguf.write",         // a GGUF export, after its last tensor and before renaming
};

enum class Kind { Off, Crash, Stall, Stop, Fail };

struct Point {
    Kind kind = Kind::Off;
    long stallMs = 0;
    long onHit = 0; // 0: every hit
    std::atomic<long> hits{0};
};

struct Table {
    std::array<Point, kFailpoints.size()> points;
    std::string error;
};

int indexOf(const std::string& name) {
    for (size_t i = 0; i < kFailpoints.size(); ++i)
        if (name == kFailpoints[i])
            return int(i);
    return -1;
}

bool parseOne(const std::string& item, Table& t) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
        t.error = "TANDEM_FAILPOINTS: \"" + item + "\" is not NAME=ACTION";
        return false;
    }
    const int at = indexOf(item.substr(0, eq));
    if (at < 0) {
        t.error = "TANDEM_FAILPOINTS: there is no failpoint named \"" + item.substr(0, eq) + "\"";
        return false;
    }
    std::string action = item.substr(eq + 1);
    Point& p = t.points[size_t(at)];
    if (const size_t amp = action.find('@'); amp != std::string::npos) {
        p.onHit = std::atol(action.c_str() + amp + 1);
        action.resize(amp);
        if (p.onHit < 1) {
            t.error = "TANDEM_FAILPOINTS: \"" + item + "\": @N counts from 1";
            return false;
        }
    }
    if (action == "crash") {
        p.kind = Kind::Crash;
    } else if (action == "stop") {
        p.kind = Kind::Stop;
    } else if (action == "fail") {
        p.kind = Kind::Fail;
    } else if (action.rfind("stall:", 0) == 0 && std::atol(action.c_str() + 6) > 0) {
        p.kind = Kind::Stall;
        p.stallMs = std::atol(action.c_str() + 6);
    } else {
        t.error =
            "TANDEM_FAILPOINTS: \"" + item + "\": the action is crash, stall:MS, stop or fail";
        return false;
    }
    return true;
}

Table* parse() {
    auto* t = new Table;
    const char* env = std::getenv("TANDEM_FAILPOINTS");
    std::string spec = env ? env : "";
    size_t start = 0;
    while (start <= spec.size()) {
        size_t end = spec.find(';', start);
        if (end == std::string::npos)
            end = spec.size();
        const std::string item = spec.substr(start, end - start);
        if (!item.empty() && !parseOne(item, *t)) {
            for (Point& p : t->points)
                p.kind = Kind::Off;
            break;
        }
        start = end + 1;
    }
    return t;
}

Table& table() {
    static Table* t = parse(); // never freed: failpoints may fire while statics are destroyed
    return *t;
}

void announce(const char* name, const char* what) {
    std::fprintf(stderr, "failpoint %s: %s\n", name, what);
    std::fflush(stderr);
}

} // namespace

bool due(const char* name) {
    Table& t = table();
    const int i = indexOf(name);
    if (i < 0) {
        announce(name, "not in the list of failpoints");
        std::abort();
    }
    Point& p = t.points[size_t(i)];
    if (p.kind == Kind::Off)
        return false;
    const long hit = p.hits.fetch_add(1) + 1;
    return p.onHit == 0 || hit == p.onHit;
}

bool act(const char* name) {
    const Point& p = table().points[size_t(indexOf(name))];
    switch (p.kind) {
    case Kind::Off:
        return false;
    case Kind::Crash:
        announce(name, "crash");
        ::raise(SIGKILL);
        std::_Exit(137);
    case Kind::Stop:
        announce(name, "stop");
        ::raise(SIGSTOP);
        return false;
    case Kind::Stall:
        announce(name, "stall");
        std::this_thread::sleep_for(std::chrono::milliseconds(p.stallMs));
        return false;
    case Kind::Fail:
        announce(name, "fail");
        return true;
    }
    return false;
}

const char* configError() {
    const std::string& e = table().error;
    return e.empty() ? nullptr : e.c_str();
}

} // namespace tandem::failpoint

#endif
