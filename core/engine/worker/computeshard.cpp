// A sharded streaming round on a worker process (ComputeLoop::computeShardRound): the round
// merges the fragment whose new values the owners sent this machine, trains, and sends its own
// fragment's delta to the owners as its fragment's run of a gradient bundle. The coordinator
// receives the buffers only.

#include "engine/modes/fragments.h"
#include "engine/worker/computeloop.h"

namespace tandem {

QString ComputeLoop::computeShardRound(WorkRequest req,
                                       std::optional<std::vector<at::Tensor>> landed,
                                       wire::Result& res, QStringList& notes) {
    LocalRound& round = *req.local;
    wire::Assign said; // the fragments the round merges and sends
    round.describe(said);
    if (!round.wholeWeights && said.mergeFragment >= 0) {
        if (!landed)
            return QStringLiteral("the coordinator asked this worker to merge fragment %1, whose "
                                  "values did not land on this machine")
                .arg(said.mergeFragment + 1);
        if (auto st = round.takeLanded(m_run.layout, *landed); !st)
            return st.error().message;
    }
    landed.reset();
    const std::vector<Fragment> fragments =
        cutFragments(paramNumels(m_run.layout), m_run.spec.fragments);
    if (said.sendFragment < 0 || said.sendFragment >= int(fragments.size()))
        return QStringLiteral("the coordinator named fragment %1 of a model cut in %2")
            .arg(said.sendFragment + 1)
            .arg(fragments.size());
    post([this] { m_shardEarly = 0; });
    auto r = m_replica->compute(req, QStringLiteral("this worker"), &m_roundState);
    if (!r)
        return r.error().message;
    const QByteArray bytes =
        packFragment(r->grads, fragments[size_t(said.sendFragment)], m_run.wire);
    r->grads.clear();
    describeResult(*r, res);
    notes = r->notes;
    post([this, step = req.step, bytes] {
        if (m_shardSink)
            m_shardSink(step, bytes, bytes.size());
    });
    const QByteArray buffers = packBundle({}, r->buffers, m_run.wire);
    post([this, buffers] { openResult(buffers); });
    return {};
}

} // namespace tandem
