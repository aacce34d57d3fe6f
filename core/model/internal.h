#pragma once

// Every model-internal header includes this first. The model library's API for code that does
// not include LibTorch is modelsource.h; everything else is for the library itself, the engine
// above it and their tests, and including it from elsewhere fails to build.
#ifndef TANDEM_MODEL_INTERNAL
#error                                                                                             \
    "model-internal header: outside core/model and core/engine include model/modelsource.h instead"
#endif
