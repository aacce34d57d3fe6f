// A sharded run that goes on without a machine it loses (shardconductor.h): the coordinator logs
// what each step adds to every range (shardlog.h), and rebuilds the whole run's state after the
// last step every machine finished, for a setup on the machines left. And what each range's owner
// is set up from: its weights and state, made a range at a time.

#include "engine/coordinator/shardconductor.h"

#include "common/failpoint.h"
#include "engine/coordinator/hub.h"
#include "engine/step/memoryplan.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QIODevice>

#include <algorithm>
#include <optional>

namespace tandem {

ShardConductor::~ShardConductor() {
    m_logs.clear();
    if (!m_backupDir.isEmpty())
        QDir(m_backupDir).removeRecursively();
}

bool ShardConductor::backedUp() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return !m_backupDir.isEmpty() && m_logFailure.isEmpty() && !m_logs.empty();
}

QString ShardConductor::logFailure() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_logFailure;
}

qint64 ShardConductor::logBytes() const {
    return m_logBytes.load();
}

QStringList ShardConductor::lost() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_lost;
}

QString ShardConductor::logPath(size_t range) const {
    return QDir(m_backupDir).filePath(QStringLiteral("range-%1.log").arg(range + 1));
}

Expected<std::unique_ptr<ShardLog>> ShardConductor::newLog(const ShardRange& range,
                                                           const QString& path, int64_t firstStep,
                                                           int64_t steps,
                                                           const RangeState& base) const {
    // The range's pieces alone: no owner's tensors of the range's size for them. The base is
    // written from where it lies.
    const ShardLayout layout = ShardLayout::of(*m_replica);
    auto log = [&]() -> Expected<std::unique_ptr<ShardLog>> {
        if (!base.bytes().isEmpty())
            return ShardLog::create(path, layout, range.begin, range.end, firstStep, steps,
                                    base.bytes());
        auto file = base.open(
            QStringLiteral("the state of values %1 to %2").arg(range.begin).arg(range.end));
        if (!file)
            return file.error();
        return ShardLog::create(path, layout, range.begin, range.end, firstStep, steps, *file);
    }();
    if (log)
        (*log)->setWindows(windows());
    return log;
}

std::vector<ShardWindow> ShardConductor::windows() const {
    if (m_fragments <= 1)
        return {};
    return fragmentWindows(ShardLayout::of(*m_replica), m_fragments);
}

namespace {

// A setup says each range it has cut once it has taken this long.
constexpr qint64 kSayAfterMs = 2000;

// Range `cut`'s blob, as its owner takes it with the setup (ShardPart::setup): its fp32 weights,
// then, where the run has stepped, its optimizer state (ShardOwner::rangeStateBytes()).
Expected<qint64> writeRangeBlob(QIODevice& out, const ShardOwner& cut, bool withState) {
    const at::Tensor& weights = cut.masters();
    const char* data = static_cast<const char*>(weights.data_ptr());
    const qint64 size = qint64(weights.nbytes());
    constexpr qint64 kPart = 64 << 20;
    for (qint64 at = 0; at < size; at += kPart)
        if (out.write(data + at, std::min(kPart, size - at)) != std::min(kPart, size - at))
            return makeError(ErrorCode::Io, out.errorString());
    if (!withState)
        return size;
    auto state = writeCheckpointTo(out, cut.rangeState());
    if (!state)
        return state.error();
    return size + *state;
}

// Bytes [at, at + n) of values [begin, end) of `replica` in fp32, copied out of the replica for
// them alone: a fresh run's range is cut so, a part at a time, never held whole.
QByteArray replicaBytes(const ShardLayout& layout, const std::vector<at::Tensor>& replica,
                        int64_t begin, int64_t end, qint64 at, qint64 n) {
    if (at < 0 || n < 0 || at + n > (end - begin) * 4)
        return {};
    const int64_t first = at / 4, last = (at + n + 3) / 4;
    QByteArray bytes(qsizetype((last - first) * 4), Qt::Uninitialized);
    layout.copyRange(begin + first, begin + last, replica,
                     at::from_blob(bytes.data(), {last - first}, at::kFloat));
    return bytes.mid(qsizetype(at - first * 4), qsizetype(n));
}

// What a fresh run's range starts from (ShardOwner::rangeState() of an owner that has not
// stepped): its fp32 weights, read from the replica as they are written.
TensorFile freshRangeState(const ShardLayout& layout, const std::vector<at::Tensor>* replica,
                           int64_t begin, int64_t end) {
    TensorFile file;
    file.meta.insert(QStringLiteral("begin"), qint64(begin));
    file.meta.insert(QStringLiteral("end"), qint64(end));
    file.meta.insert(QStringLiteral("steps"), qint64(0));
    LazyTensor l;
    l.name = QLatin1String(kRangeMastersRecord);
    l.dtype = DType::F32;
    l.shape = {end - begin};
    l.part = [layout, replica, begin, end](qint64 at, qint64 n) {
        return replicaBytes(layout, *replica, begin, end, at, n);
    };
    l.bytes = [part = l.part, size = (end - begin) * 4] { return part(0, size); };
    file.lazy << l;
    return file;
}

// A fresh run's range blob (its fp32 weights alone), from the replica a part at a time.
Expected<qint64> writeFreshRangeBlob(QIODevice& out, const ShardLayout& layout,
                                     const std::vector<at::Tensor>& replica, int64_t begin,
                                     int64_t end) {
    constexpr qint64 kPart = 64 << 20;
    const qint64 size = (end - begin) * 4;
    for (qint64 at = 0; at < size; at += kPart) {
        const QByteArray bytes =
            replicaBytes(layout, replica, begin, end, at, std::min(kPart, size - at));
        if (out.write(bytes) != bytes.size())
            return makeError(ErrorCode::Io, out.errorString());
    }
    return size;
}

} // namespace

Expected<ShardConductor::RangeStarts>
ShardConductor::rangeStarts(const std::vector<ShardRange>& ranges, int64_t firstStep, int64_t steps,
                            const StateParts& state, std::vector<std::unique_ptr<ShardLog>>* logs,
                            Status* logged) const {
    QElapsedTimer clock;
    clock.start();
    logs->clear();
    if (!m_backupDir.isEmpty()) {
        (void)TANDEM_FAILPOINT("shard.logs"); // a stall stands in for a model of gigabytes
        if (!QDir().mkpath(m_backupDir))
            *logged =
                makeError(ErrorCode::Io,
                          QStringLiteral("cannot make the folder %1 for the sharded run's logs")
                              .arg(m_backupDir));
    }
    const QString prefix = QStringLiteral(".range-");
    SpilledBytes::removeLeftovers(m_spillDir, prefix);
    const ShardLayout layout = ShardLayout::of(*m_replica);
    RangeStarts out;
    // A range of gigabytes takes seconds to cut, write and log: a setup that takes long says
    // each range as it is done.
    const auto saying = [&] { return m_progress && clock.elapsed() >= kSayAfterMs; };
    const auto said = [&](size_t r, qint64 bytes) {
        m_progress(
            QStringLiteral("the sharded run's setup cut range %1 of %2 (%3: values %4 to %5, "
                           "%6) in %7 s")
                .arg(r + 1)
                .arg(ranges.size())
                .arg(r == 0 ? QStringLiteral("this machine")
                            : m_names.value(ranges[r].owner, ranges[r].owner))
                .arg(ranges[r].begin)
                .arg(ranges[r].end)
                .arg(bytesText(bytes))
                .arg(clock.elapsed() / 1000.0, 0, 'f', 1));
    };
    for (size_t r = 0; r < ranges.size(); ++r) {
        const int64_t begin = ranges[r].begin, end = ranges[r].end;
        // The range's owner as it will start: the replica's weights and, where the run has
        // stepped, its part of the state, read for it alone. A fresh run's range for a worker is
        // the replica's weights alone, read from the replica as its log and its blob are
        // written: never held whole here.
        std::optional<ShardOwner> cut;
        if (r == 0 || steps > 0) {
            cut.emplace(ShardOwner::fromParams(layout, begin, end, *m_replica, m_optimizer));
            if (steps > 0)
                if (auto st = cut->restore(steps, state); !st)
                    return st.error();
        }
        if (!m_backupDir.isEmpty() && *logged) {
            auto log = ShardLog::create(logPath(r), layout, begin, end, firstStep, steps,
                                        cut ? cut->rangeState()
                                            : freshRangeState(layout, m_replica, begin, end));
            if (log) {
                (*log)->setWindows(windows());
                logs->push_back(std::move(*log));
            } else {
                logs->clear();
                *logged = log.error();
            }
        }
        // This machine's own range starts from the owner made here; each worker's waits in a
        // file.
        if (r == 0) {
            if (saying()) {
                const auto state =
                    steps > 0 ? checkpointSize(cut->rangeState()) : Expected<qint64>(0);
                said(r, qint64(cut->masters().nbytes()) + (state ? *state : 0));
            }
            out.self = std::make_unique<ShardOwner>(std::move(*cut));
            out.blobs.emplace_back();
            continue;
        }
        auto blob = SpilledBytes::write(
            m_spillDir, prefix,
            QStringLiteral("the weights and state of values %1 to %2").arg(begin).arg(end),
            [&](QIODevice& to) {
                return cut ? writeRangeBlob(to, *cut, steps > 0)
                           : writeFreshRangeBlob(to, layout, *m_replica, begin, end);
            });
        if (!blob)
            return blob.error();
        if (saying())
            said(r, (*blob)->size());
        out.blobs.push_back(std::move(*blob));
    }
    return out;
}

void ShardConductor::swapLog(size_t range, int64_t firstStep, int64_t steps,
                             const RangeState& base) {
    const QString path = logPath(range);
    auto log = newLog(m_ranges[range], path + QStringLiteral(".new"), firstStep, steps, base);
    m_hub->runOnNetwork([&] {
        if (!log)
            return noteLog(log.error());
        if (range >= m_logs.size())
            return;
        if (m_logs[range])
            m_logBytes -= m_logs[range]->bytes();
        m_logs[range].reset();
        QFile::remove(path);
        if (!QDir().rename((*log)->path(), path))
            return noteLog(
                makeError(ErrorCode::Io, QStringLiteral("cannot name the shard log %1").arg(path)));
        (*log)->movedTo(path);
        m_logs[range] = std::move(*log);
    });
}

void ShardConductor::noteLog(const Status& st) {
    // The run goes on; a machine it loses now would stop it.
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!st && m_logFailure.isEmpty())
        m_logFailure =
            QStringLiteral("the log of the ranges' steps stopped: %1").arg(st.error().message);
}

void ShardConductor::onSummed(size_t range, const ShardLog::Span& span) {
    if (range >= m_logs.size() || !m_logs[range])
        return;
    const qint64 before = m_logs[range]->bytes();
    noteLog(m_logs[range]->append(span));
    m_logBytes += m_logs[range]->bytes() - before;
}

void ShardConductor::stop() {
    if (!m_hub)
        return;
    m_hub->runOnNetwork([this] {
        delete m_machine;
        m_machine = nullptr;
        // What the members say of this setup from now on (the links between them ending, as
        // they now do) is of a setup that is gone: it must not cost the next one a machine.
        std::lock_guard<std::mutex> lock(m_mutex);
        m_ready.clear();
        m_lost.clear();
        m_failure.clear();
    });
}

Expected<ShardConductor::Rebuilt> ShardConductor::rebuild(int64_t throughStep) const {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (!m_logFailure.isEmpty())
            return makeError(ErrorCode::Runtime, m_logFailure);
    }
    if (m_logs.size() != m_ranges.size())
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("the sharded run keeps no log of its ranges"));
    const ShardLayout layout = ShardLayout::of(*m_replica);
    std::vector<std::unique_ptr<ShardOwner>> owners;
    std::vector<const ShardOwner*> all;
    for (const auto& log : m_logs) {
        auto owner = ShardLog::rebuild(log->path(), layout, m_optimizer, throughStep, windows());
        if (!owner)
            return owner.error();
        owners.push_back(std::move(*owner));
        all.push_back(owners.back().get());
    }
    Rebuilt out;
    out.steps = owners.front()->stepCount();
    for (const ShardOwner* o : all)
        if (o->stepCount() != out.steps)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the logs of the run's ranges rebuild %1 and %2 steps")
                                 .arg(out.steps)
                                 .arg(o->stepCount()));
    auto masters = ShardOwner::gatherMasters(all);
    if (!masters)
        return masters.error();
    auto state = ShardOwner::gatherState(all);
    if (!state)
        return state.error();
    out.masters = std::move(*masters);
    out.state = std::move(*state);
    return out;
}

} // namespace tandem
