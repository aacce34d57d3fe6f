#include "engine/modes/rounds.h"

namespace tandem {

Expected<std::shared_ptr<LocalRound>> roundFrom(const wire::Assign& a) {
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
