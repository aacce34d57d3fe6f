// Must not compile: UI code reaching into the engine's internals.
#include "engine/step/replica.h"

int probeInternal() {
    return 0;
}
