// Must not compile: UI code reaching into the engine's internals.
#include "engine/replica.h"

int probeInternal() {
    return 0;
}
