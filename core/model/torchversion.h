#pragma once

#include "model/internal.h"

// Model-internal: which LibTorch this build compiles against, for code that differs between
// LibTorch 1.13 (Debian 12) and 2.x. torchcompat.h includes it; code below torchcompat (the
// tensor memory cache it installs) includes it alone.

#include <torch/version.h>

// True when the LibTorch being compiled against is at least major.minor.
#define TANDEM_TORCH_AT_LEAST(major, minor)                                                        \
    (TORCH_VERSION_MAJOR > (major) ||                                                              \
     (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
