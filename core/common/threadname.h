#pragma once

#if defined(__linux__) || defined(__APPLE__)
#include <pthread.h>
#endif

namespace tandem {

// Names the calling thread as the system shows it (top -H, perf, a debugger, Activity
// Monitor): "tandem-compute" rather than the process's name for every thread. Linux keeps at
// most 15 characters. Does nothing elsewhere.
inline void nameThisThread(const char* name) {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name);
#elif defined(__APPLE__)
    pthread_setname_np(name);
#else
    (void)name;
#endif
}

} // namespace tandem
