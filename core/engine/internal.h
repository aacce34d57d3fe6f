#pragma once

// Every engine-internal header includes this first. The engine's API is training.h,
// trainingrun.h, devices.h, runplan.h, runhistory.h, workerclient.h and generation.h, with the
// run's choices in common/runenums.h; everything else is the engine's own business (and its
// tests'), and including it from elsewhere fails to build.
#ifndef TANDEM_ENGINE_INTERNAL
#error "engine-internal header: outside core/engine include engine/training.h instead"
#endif
