// Must not compile: UI code reaching into the engine's internals.
#include "engine/worker.h"

int probeInternal() {
    return 0;
}
