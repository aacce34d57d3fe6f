#pragma once

#include "engine/internal.h"

// Engine-internal: the optimizer state of a whole model in the one-owner run's names and shapes
// (what ShardOwner::gatherState() gives), put together a range at a time from the state each
// range's owner sends (ShardOwner::rangeStateBytes()), so that the machine that gathers lets a
// range's bytes go before it asks for the next. Each range's state is read where it lies
// (RangeState), a part at a time. GatheredState holds the state in memory, for a run that takes
// it up again (machines joining, a machine lost); SpilledState keeps each range's state in a file
// until a checkpoint's writer reads each tensor from it, so that a checkpoint never holds the
// whole state in memory.

#include "common/expected.h"
#include "engine/shard/rangestate.h"
#include "engine/shard/shardowner.h"
#include "formats/tensorfile.h"
#include "model/tensors.h"

#include <ATen/ATen.h>

#include <QString>
#include <QStringList>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

class GatheredState {
public:
    // `keepState` false: add() writes each range's weights into the replica and keeps none of
    // its optimizer state (the end of a run, whose export needs only the weights).
    explicit GatheredState(ShardLayout layout, bool keepState = true);
    // Adds the state of the values [begin, end) after `steps` steps, as its owner sent it, and
    // writes the range's fp32 weights into `params` (a replica's parameters in schema order; none
    // when null). Refuses a state of another range or step count, a range that overlaps one
    // added, pieces that do not fit the range, and a state that cannot be read where it lies.
    Status add(int64_t begin, int64_t end, int64_t steps, const RangeState& state,
               std::vector<at::Tensor>* params);
    Status add(int64_t begin, int64_t end, int64_t steps, const QByteArray& bytes,
               std::vector<at::Tensor>* params) {
        return add(begin, end, steps, RangeState::ofBytes(bytes), params);
    }
    // The whole state. Refuses one whose ranges do not cover the values once, or that keeps a
    // slot of a parameter for only part of it.
    Expected<NamedTensors> take();

private:
    ShardLayout m_layout;
    bool m_keepState = true;
    std::vector<std::pair<int64_t, int64_t>> m_ranges;            // added so far
    std::map<std::string, std::map<int64_t, at::Tensor>> m_slots; // slot -> tensor -> whole
    std::map<std::string, std::map<int64_t, int64_t>> m_covered;  // values of it added
    std::map<int64_t, at::Tensor> m_steps;                        // per tensor
};

class SpilledState {
public:
    // Each range's bytes go to a file in `dir` (on the disk the checkpoint is written to), removed
    // with this object.
    SpilledState(ShardLayout layout, QString dir);
    ~SpilledState();
    SpilledState(const SpilledState&) = delete;
    SpilledState& operator=(const SpilledState&) = delete;

    // As GatheredState::add(). A state in a file (RangeState::ofFile) is kept there, read where
    // it lies; one in memory is checked, written to a file of its own in `dir`, and not kept in
    // memory. Fails as well when the disk cannot hold it, saying how much it needed.
    Status add(int64_t begin, int64_t end, int64_t steps, const RangeState& state,
               std::vector<at::Tensor>* params);
    Status add(int64_t begin, int64_t end, int64_t steps, const QByteArray& bytes,
               std::vector<at::Tensor>* params) {
        return add(begin, end, steps, RangeState::ofBytes(bytes), params);
    }
    // The whole state, in GatheredState::take()'s names and order, each tensor read from the
    // files when a writer asks for its bytes. Refuses what take() refuses. Valid while this
    // object lives.
    Expected<QList<LazyTensor>> tensors() const;
    // Why a tensor's bytes could not be read from its files, once one could not (its bytes then
    // come back empty, which a checkpoint's writer refuses).
    QString failure() const { return *m_failure; }

private:
    struct Part {
        int file = 0;                                   // in m_kept
        std::function<QByteArray(qint64, qint64)> read; // its bytes, as LazyTensor::part
        int64_t at = 0;                                 // its first value within the tensor
        int64_t values = 0;
    };
    struct Slot {
        DType dtype = DType::F32;
        std::vector<Part> parts;
        int64_t covered = 0;
    };
    ShardLayout m_layout;
    QString m_dir;
    std::vector<RangeState> m_kept; // each range's, its file removed with it
    std::vector<std::pair<int64_t, int64_t>> m_ranges;
    std::map<std::string, std::map<int64_t, Slot>> m_slots;
    std::map<int64_t, at::Tensor> m_steps;
    std::shared_ptr<QString> m_failure = std::make_shared<QString>();
};

} // namespace tandem
