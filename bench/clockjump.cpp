// LD_PRELOAD shim for the fault campaign (bench/faults.py, kind clock-jump): shifts this
// process's wall clock (CLOCK_REALTIME, gettimeofday, time) by the whole seconds written in the
// file TANDEM_CLOCK_OFFSET_FILE names, re-read at most every 100 ms, as a laptop's clock does
// when it syncs after sleep. Monotonic clocks, which Tandem's timeouts use, are untouched.
// Linux and glibc only.

#include <dlfcn.h>
#include <sys/time.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

using ClockGettime = int (*)(clockid_t, struct timespec*);

ClockGettime realClock() {
    static const auto f = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
    return f;
}

std::atomic<long long> g_offset{0};
std::atomic<long long> g_readAt{-1};

long long offsetSeconds() {
    timespec now{};
    realClock()(CLOCK_MONOTONIC, &now);
    const long long ns = now.tv_sec * 1000000000LL + now.tv_nsec;
    const long long last = g_readAt.load();
    if (last >= 0 && ns - last < 100000000LL)
        return g_offset.load();
    g_readAt = ns;
    const char* path = std::getenv("TANDEM_CLOCK_OFFSET_FILE");
    if (FILE* f = path ? std::fopen(path, "r") : nullptr) {
        long long v = 0;
        if (std::fscanf(f, "%lld", &v) == 1 && v != g_offset.exchange(v))
            std::fprintf(stderr, "clockjump: the wall clock is now %+lld s off\n", v);
        std::fclose(f);
    }
    return g_offset.load();
}

} // namespace

extern "C" int clock_gettime(clockid_t clock, struct timespec* ts) __THROW {
    const int r = realClock()(clock, ts);
    if (r == 0 && ts && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE))
        ts->tv_sec += offsetSeconds();
    return r;
}

extern "C" int gettimeofday(struct timeval* tv, void* tz) __THROW {
    (void)tz;
    timespec ts{};
    const int r = clock_gettime(CLOCK_REALTIME, &ts);
    if (r == 0 && tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

extern "C" time_t time(time_t* out) __THROW {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}
