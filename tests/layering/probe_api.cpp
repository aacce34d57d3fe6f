// Must compile: what the UI and the command line may use.
#include "engine/devices.h"
#include "engine/generation.h"
#include "engine/runhistory.h"
#include "engine/runplan.h"
#include "engine/training.h"
#include "engine/trainingrun.h"
#include "engine/workerclient.h"
#include "model/modelsource.h"

int probeApi() {
    tandem::RunConfig c;
    const tandem::ModelSource s = tandem::ModelSource::parse(c.model);
    return c.mode == tandem::TrainMode::Sync && s.isBuiltIn() ? 0 : 1;
}
