#include "engine/worker/session.h"

// The worker's side of a run's base (engine/step/basepack.h): found in the cache or in a folder the
// user named, or received part by part from the coordinator, each part checked and written as
// it comes, a cut transfer taken up at its first missing part.

#include "common/failpoint.h"
#include "net/connection.h"

#include <QLocale>

namespace tandem {

void WorkerSession::findBase(const wire::RunSpec& spec, const QByteArray& archive) {
    auto manifest = BaseManifest::parse(spec.baseManifest, spec.baseHash);
    if (!manifest) {
        return refuse(wire::RejectCode::Protocol, manifest.error().message);
    }
    const BaseCache cache = baseCache();
    if (auto base = cache.find(*manifest)) {
        m_log(QStringLiteral("the run's base model (%1) is in the model cache %2: nothing to "
                             "receive")
                  .arg(QLocale::c().formattedDataSize(manifest->totalBytes), cache.dir()));
        return admit(spec, archive, &*base);
    }
    if (m_opt.modelsDir.isEmpty())
        return receiveBase(spec, archive, std::move(*manifest));
    // Opening the folders there (and quantizing one as the run does) takes a while: the idle
    // compute thread does it, and this one goes on answering pings.
    m_state = State::AwaitBase;
    m_log(QStringLiteral("looking for the run's base model in %1").arg(m_opt.modelsDir));
    const uint64_t search = ++m_baseSearch;
    m_loop.runIdle([this, search, dir = m_opt.modelsDir, spec, archive, manifest = *manifest] {
        auto found = std::make_shared<std::optional<FoundBase>>(findBaseIn(dir, manifest, archive));
        QMetaObject::invokeMethod(
            this,
            [this, search, spec, archive, manifest, found] {
                if (search != m_baseSearch || m_state != State::AwaitBase || m_base)
                    return; // the session started again meanwhile
                if (!*found)
                    return receiveBase(spec, archive, manifest);
                m_log(QStringLiteral("the run's base model is %1: nothing to receive")
                          .arg((*found)->folder));
                admit(spec, archive, &(*found)->tensors);
            },
            Qt::QueuedConnection);
    });
}

void WorkerSession::receiveBase(const wire::RunSpec& spec, const QByteArray& archive,
                                BaseManifest manifest) {
    const BaseCache cache = baseCache();
    const int held = cache.partsHeld(manifest);
    if (auto st = cache.prepare(manifest, held); !st) {
        return refuse(wire::RejectCode::Internal, st.error().message);
    }
    const QString total = QLocale::c().formattedDataSize(manifest.totalBytes);
    if (held > 0)
        m_log(QStringLiteral("resuming the base model's transfer at part %1 of %2 (%3 of %4 "
                             "here already)")
                  .arg(held + 1)
                  .arg(manifest.parts())
                  .arg(QLocale::c().formattedDataSize(qint64(held) * manifest.partBytes), total));
    else
        m_log(QStringLiteral("the run's base model (%1) is not here; receiving it from the "
                             "coordinator in %2 part(s) into %3")
                  .arg(total)
                  .arg(manifest.parts())
                  .arg(cache.dir()));
    m_conn->setBlobCap(wire::BlobKind::BasePart, manifest.partBytes);
    m_base = BaseTransfer{spec, archive, std::move(manifest), held, held, held, {}, 0};
    m_base->clock.start();
    m_state = State::AwaitBase;
    if (held == m_base->manifest.parts())
        return completeBase(); // every part is here: it only needs its name
    requestBaseParts();
}

void WorkerSession::requestBaseParts() {
    // A few parts ahead keep the link busy; no more, so that a cut wastes little and the
    // coordinator holds few parts in its queue.
    constexpr int kAhead = 3;
    while (m_base->asked < m_base->manifest.parts() && m_base->asked - m_base->next < kAhead)
        m_conn->send(wire::BaseRequest{m_base->manifest.hash, uint32_t(m_base->asked++)});
}

void WorkerSession::onBasePart(const wire::BasePart& p) {
    BaseTransfer& b = *m_base;
    std::optional<QByteArray> bytes = m_conn->takeBlob(p.blob);
    if (p.part != uint32_t(b.next) || !bytes) {
        const QString why = QStringLiteral("part %1 of the base model came out of order or "
                                           "without its bytes")
                                .arg(p.part + 1);
        return refuse(wire::RejectCode::Protocol, why);
    }
    if (auto st = baseCache().write(b.manifest, b.next, *bytes); !st) {
        return refuse(wire::RejectCode::Internal, st.error().message);
    }
    ++b.next;
    if (TANDEM_FAILPOINT("base.part")) {
        m_conn->close(QStringLiteral("failpoint base.part"));
        return;
    }
    if (b.next == b.manifest.parts())
        return completeBase();
    const qint64 ms = b.clock.elapsed();
    if (ms - b.logged >= 10000) {
        b.logged = ms;
        const double rate = double(qint64(b.next - b.first) * b.manifest.partBytes) / (ms / 1000.0);
        const qint64 left = b.manifest.totalBytes - qint64(b.next) * b.manifest.partBytes;
        const QLocale c = QLocale::c();
        m_log(QStringLiteral("receiving the base model: %1 of %2, about %3 s left")
                  .arg(c.formattedDataSize(qint64(b.next) * b.manifest.partBytes),
                       c.formattedDataSize(b.manifest.totalBytes))
                  .arg(qRound64(double(left) / rate)));
    }
    requestBaseParts();
}

void WorkerSession::completeBase() {
    const BaseTransfer& b = *m_base;
    const BaseCache cache = baseCache();
    auto base = cache.complete(b.manifest);
    if (!base)
        return finish(1, base.error().message);
    m_log(QStringLiteral("received the base model: %1 in %2 s, kept in %3")
              .arg(QLocale::c().formattedDataSize(b.manifest.totalBytes -
                                                  qint64(b.first) * b.manifest.partBytes))
              .arg(b.clock.elapsed() / 1000.0, 0, 'f', 1)
              .arg(cache.dir()));
    const BaseTransfer done = std::move(*m_base);
    m_base.reset();
    admit(done.spec, done.archive, &*base);
}

} // namespace tandem
