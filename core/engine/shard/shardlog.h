#pragma once

#include "engine/internal.h"

// Engine-internal: what each step added to one shard's range, step after step, in a file beside
// the range's state when the log began. The coordinator keeps one for every range of a sharded
// run whose owners back up (wire::ShardSetup::backup), so that when a machine is lost the whole
// run's state after the last step every machine finished is rebuilt (rebuild()): the range's
// base state, then each logged step through the same optimizer a segment at a time
// (ShardOwner::stepSpan), which is the arithmetic the owner did. A checkpoint's gathered state
// starts a new log.
//
// The file: "TANDEMSL", u32 version, the range (i64 begin, i64 end), u32 segments and each one's
// end, u32 pieces and each piece's i64 values, the first step it logs (i64), the base's optimizer
// steps (i64), u64 bytes and the base (ShardOwner::rangeStateBytes()), the header's CRC-32. Then
// one record a span: i64 step, i64 from, i64 to, f64 learning rate, u32 pieces in the span and a
// byte for each (1: it has a sum), the fp32 sums of those that have one, and the record's CRC-32.
// A record cut short or damaged ends what is read: a crash while writing costs at most that span.

#include "common/expected.h"
#include "engine/shard/shardowner.h"

#include <ATen/ATen.h>

#include <QByteArray>
#include <QFile>
#include <QString>

#include <functional>
#include <memory>
#include <vector>

namespace tandem {

class ShardLog {
public:
    // What a step added to the values [from, to) of a range, a segment of it (ShardSum's fields):
    // a byte for each of the range's pieces that lie in the span (1: it has a sum), and those
    // pieces' sums, fp32.
    struct Span {
        int64_t step = 0;
        int64_t from = 0;
        int64_t to = 0;
        double lr = 0;
        QByteArray present;
        QByteArray values;
    };
    // `owner`'s sum for [from, to) as it stands before it steps them (ShardOwner::sum()).
    static Span spanOf(const ShardOwner& owner, int64_t step, int64_t from, int64_t to, double lr);

    // A new log at `path` (replacing one there) for `owner`'s range, its first record of step
    // `firstStep`, beginning from `base` (the range's ShardOwner::rangeStateBytes() after
    // `baseSteps` optimizer steps).
    static Expected<std::unique_ptr<ShardLog>> create(const QString& path, const ShardOwner& owner,
                                                      int64_t firstStep, int64_t baseSteps,
                                                      const QByteArray& base);
    // The same for the range [begin, end) of `layout`, cut as an owner cuts it by default
    // (ShardOwner::piecesOf()), without an owner's tensors.
    static Expected<std::unique_ptr<ShardLog>> create(const QString& path,
                                                      const ShardLayout& layout, int64_t begin,
                                                      int64_t end, int64_t firstStep,
                                                      int64_t baseSteps, const QByteArray& base);
    // The same, from the base's contents unwritten (ShardOwner::rangeState()): written to the log
    // as it is made, never held as bytes.
    static Expected<std::unique_ptr<ShardLog>> create(const QString& path,
                                                      const ShardLayout& layout, int64_t begin,
                                                      int64_t end, int64_t firstStep,
                                                      int64_t baseSteps, const TensorFile& base);

    // Streaming local-SGD: step s adds to the range's part inside windows[s % size] alone
    // (shardstep.h's fragmentWindows()), its spans cut where that part begins and ends, and a
    // step whose part is empty adds nothing and takes no record. Before the first append().
    void setWindows(std::vector<ShardWindow> windows) { m_windows = std::move(windows); }
    // Appends one span and hands it to the system before it returns. Refuses, changing nothing,
    // a span that does not follow the last (the segments of a step in order, then the next
    // step's), is not a segment, or whose flags or values do not fit it.
    Status append(const Span& span);
    // The last step whose every segment is logged; firstStep - 1 when none.
    int64_t lastWholeStep() const { return m_lastWhole; }
    int64_t begin() const { return m_begin; }
    int64_t end() const { return m_end; }
    // The records' bytes, beside the header and base.
    qint64 bytes() const { return m_bytes; }
    QString path() const { return m_path; }
    // The file was renamed to `path` while open: later appends still go to it.
    void movedTo(const QString& path) { m_path = path; }

    // The range as it stood after step `throughStep`, from the log at `path`: its base, then each
    // logged step through that one. Refuses a log that ends before (a record missing, cut short
    // or damaged) or whose records do not follow each other, naming the range and the step.
    static Expected<std::unique_ptr<ShardOwner>>
    rebuild(const QString& path, const ShardLayout& layout, const OptimizerConfig& optimizer,
            int64_t throughStep, const std::vector<ShardWindow>& windows = {});

private:
    explicit ShardLog(QString path);
    static Expected<std::unique_ptr<ShardLog>>
    create(const QString& path, int64_t begin, int64_t end, std::vector<int64_t> segmentEnds,
           std::vector<ShardLayout::Piece> pieces, int64_t firstStep, int64_t baseSteps,
           qint64 baseSize, const std::function<Status(QIODevice&)>& base);
    Status check(const Span& span) const;
    // Step `step`'s part of the range (setWindows()), counted from its first value.
    std::pair<int64_t, int64_t> partOf(int64_t step) const;
    // The first step after the last whole one that adds to the range.
    int64_t nextStep() const;

    QString m_path;
    QFile m_file;
    int64_t m_begin = 0, m_end = 0;
    std::vector<int64_t> m_segmentEnds;
    std::vector<ShardLayout::Piece> m_pieces;
    int64_t m_lastWhole = -1; // the last step whose spans reach the range's end
    int64_t m_at = 0;         // where the next span of an open step starts; 0 between steps
    int64_t m_open = -1;      // that step
    std::vector<ShardWindow> m_windows;
    qint64 m_bytes = 0;
};

} // namespace tandem
