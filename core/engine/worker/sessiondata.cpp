#include "engine/worker/session.h"

// The worker's side of a run's dataset when this machine lacks it: the coordinator's offer,
// checked against the run's hash on the idle compute thread (gigabytes take tens of seconds),
// and cached for the next run.

#include "common/failpoint.h"
#include "net/connection.h"

namespace tandem {

void WorkerSession::onDataOffer(const wire::DataOffer& offer) {
    std::optional<QByteArray> blob = m_conn->takeBlob(offer.blob);
    // A split's token blob arrived as a file; "" for a split without one.
    auto file = [&](uint64_t id) { return id ? m_conn->takeBlobFile(id) : QString(); };
    const std::optional<QString> train = file(offer.trainTokensBlob),
                                 test = file(offer.testTokensBlob);
    if (!blob || !train || !test) {
        DatasetCache::discard({train.value_or(QString()), test.value_or(QString())});
        finish(1, QStringLiteral("the coordinator's dataset did not arrive whole"));
        return;
    }
    if (TANDEM_FAILPOINT("dataset.transfer"))
        blob->truncate(blob->size() / 2);
    // Checking the data against its hash reads all of it (a token file of gigabytes: tens of
    // seconds), so the idle compute thread does it, and this one goes on answering pings.
    m_loop.runIdle([this, cache = datasetCache(), hash = m_run->spec.datasetHash,
                    blob = std::move(*blob), train = *train, test = *test] {
        auto got = cache.accept(hash, blob, train, test);
        QMetaObject::invokeMethod(
            this, [this, hash, got = std::move(got)]() mutable { onDataChecked(hash, got); },
            Qt::QueuedConnection);
    });
}

void WorkerSession::onDataChecked(const QString& hash, Expected<DatasetCache::Received>& got) {
    if (m_state != State::AwaitData || !m_run || hash != m_run->spec.datasetHash)
        return; // the session started again meanwhile
    if (!got)
        return finish(1, got.error().message);
    if (!got->cachedAt.isEmpty())
        m_log(QStringLiteral("cached the dataset in %1").arg(got->cachedAt));
    m_data = std::make_shared<DatasetSplits>(std::move(got->data));
    becomeReady();
}

} // namespace tandem
