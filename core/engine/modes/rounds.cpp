#include "engine/modes/rounds.h"

#include <algorithm>

namespace tandem {

Expected<std::shared_ptr<LocalRound>> roundFrom(const wire::Assign& a, int runFragments) {
    if (runFragments > 1 && a.innerSteps > 0 && a.fragments != runFragments)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the coordinator sent a round of a model cut in %1 "
                                        "fragment(s) in a run it said streams %2; this worker's "
                                        "memory is planned for %2")
                             .arg(std::max(1, a.fragments))
                             .arg(runFragments));
    if (a.innerSteps <= 0) {
        if (a.fragments > 1)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the coordinator sent fragments without inner steps"));
        return std::shared_ptr<LocalRound>();
    }
    if (a.fragments <= 1)
        return localSgdRound(a.innerSteps, a.lr);
    StreamingAssignment s;
    s.fragments = a.fragments;
    s.send = a.sendFragment;
    s.merge = a.mergeFragment;
    return streamingRound(a.innerSteps, a.lr, std::move(s));
}

} // namespace tandem
