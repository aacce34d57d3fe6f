// Must compile: what the UI and the command line may use.
#include "engine/devices.h"
#include "engine/generation.h"
#include "engine/runhistory.h"
#include "engine/runplan.h"
#include "engine/training.h"
#include "engine/trainingrun.h"
#include "engine/workerclient.h"

int probeApi() {
    tandem::RunConfig c;
    return c.mode == tandem::TrainMode::Sync ? 0 : 1;
}
