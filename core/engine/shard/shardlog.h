#pragma once

#include "engine/internal.h"

// Engine-internal: the summed gradients of one shard's range, step after step, in a file. The
// machine that backs a range up keeps it, so that when the range's owner is lost its state is
// rebuilt without losing a step: the last checkpoint's state for the range, then each logged
// step through the same optimizer (ShardOwner::applySum), which is the arithmetic the owner did.
// The log is emptied when a newer checkpoint holds the range.
//
// The file: "TANDEMSL", u32 version, the range (i64 begin, i64 end), u32 pieces and each piece's
// i64 values; then one record a step: i64 step, f64 learning rate, a byte per piece (1: it has a
// gradient), the fp32 values of the pieces that have one, and the CRC-32 of the record. A record
// cut short or damaged ends what is read: a crash while writing costs at most that step, which
// its owner had not yet sent on (the owner sends its update once the record is written).

#include "common/expected.h"
#include "engine/shard/shardowner.h"

#include <ATen/ATen.h>

#include <QFile>
#include <QString>

#include <memory>
#include <vector>

namespace tandem {

class ShardLog {
public:
    // A new, empty log at `path` (replacing one there) for `owner`'s range and pieces.
    static Expected<std::unique_ptr<ShardLog>> create(const QString& path, const ShardOwner& owner);

    // Appends step `step`'s summed gradient for the range (ShardOwner::sum()) at learning rate
    // `lr`, and hands it to the system before it returns.
    Status append(int64_t step, double lr, const std::vector<at::Tensor>& sum);
    // Empties the log: a checkpoint now holds the range's state.
    Status clear();
    int64_t records() const { return m_records; }

    // Applies the steps logged at `path` after `afterStep` to `owner` (restored from the
    // checkpoint of step `afterStep`), in order. Returns the last step applied (`afterStep` when
    // none): the record after it was missing, cut short or damaged. Refuses a log of another
    // range, or whose steps do not follow each other.
    static Expected<int64_t> replay(const QString& path, ShardOwner& owner, int64_t afterStep);

private:
    explicit ShardLog(QString path);
    QString m_path;
    QFile m_file;
    qint64 m_headerBytes = 0;
    int64_t m_records = 0;
};

} // namespace tandem
