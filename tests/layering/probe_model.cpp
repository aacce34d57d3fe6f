// Must not compile: UI code reaching into the model library's internals.
#include "model/model.h"

int probeModel() {
    return 0;
}
