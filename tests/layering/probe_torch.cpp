// Must not compile: UI code reaching for LibTorch.
#include <torch/script.h>

int probeTorch() {
    return 0;
}
