// Code outside core/engine sees this in place of LibTorch's <torch/extension.h>: LibTorch is
// private to the engine. Use the engine's API (engine/training.h, engine/trainingrun.h,
// engine/devices.h, engine/workerclient.h) instead.
#error "LibTorch is private to the engine: include engine/training.h, not <torch/extension.h>"
