#pragma once

#include "engine/internal.h"

// Engine-internal: a range's optimizer state and fp32 weights as they reach the machine that
// gathers them (ShardOwner::rangeState(), in Tandem's checkpoint container): that machine's own
// owner's tensors, the bytes a link brought in memory, or the file the link wrote them to as they
// came. Whichever, its tensors are read a part at a time where they lie, so that gathering,
// spilling and logging a range never holds a second copy of it.

#include "common/expected.h"
#include "formats/tensorfile.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace tandem {

class RangeState {
public:
    RangeState() = default;
    // An owner's own tensors (ShardOwner::rangeState()), read where they lie: valid while nothing
    // steps them.
    static RangeState ofOwner(TensorFile state);
    // The container's bytes in memory.
    static RangeState ofBytes(QByteArray bytes);
    // The container in the file at `path`, which this takes over: removed once the last copy of
    // this and of what open() gave is gone.
    static RangeState ofFile(const QString& path);

    bool empty() const { return !m_held; }
    // The file it lies in; empty where it is in memory.
    QString path() const;
    // Its bytes where they are a container in memory; empty otherwise.
    QByteArray bytes() const;
    // Its metadata and tensors, each with LazyTensor::part set, checked as a container is
    // (checkpoint.h's reader: a file's digest is read through once, here). `what` names it in
    // errors. The first call opens it; later ones give the same.
    Expected<TensorFile> open(const QString& what) const;

private:
    struct Held;
    std::shared_ptr<Held> m_held;
};

} // namespace tandem
