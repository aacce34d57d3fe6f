#include "engine/shard/shardplan.h"

#include "engine/shard/shardowner.h"
#include "engine/step/blockwiseadam.h"
#include "engine/step/memoryplan.h"
#include "engine/wire/wiretensors.h"
#include "formats/dataset.h"
#include "model/model.h"

#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tandem {

namespace {

// A machine that did not say how much memory it has is not held to a limit.
constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max() / 4;

// What a machine can hold beside its own worker, in units of kShardAlignment values.
int64_t unitsThatFit(const ShardCandidate& m, int64_t unitBytes, int64_t machines) {
    if (m.budgetBytes <= 0)
        return kNoLimit;
    const int64_t spare = std::max<int64_t>(0, m.budgetBytes - m.workerBytes - m.keptBytes);
    // Beside the range, a segment's step and the sends waiting on the links, which grow with the
    // range up to a bound: the largest range that fits with them, by halving.
    const auto fits = [&](int64_t units) {
        return units * unitBytes + shardOwnerStepBytes(units * kShardAlignment, machines) <= spare;
    };
    int64_t low = 0, high = spare / unitBytes; // fits(low); high fits without them
    while (low < high) {
        const int64_t mid = high - (high - low) / 2;
        if (fits(mid))
            low = mid;
        else
            high = mid - 1;
    }
    return low;
}

// "1.50 billion", "124.4 million", "9,000".
QString valuesText(int64_t values) {
    if (values >= int64_t(1e9))
        return QStringLiteral("%1 billion").arg(double(values) / 1e9, 0, 'f', 2);
    if (values >= int64_t(1e6))
        return QStringLiteral("%1 million").arg(double(values) / 1e6, 0, 'f', 1);
    return QLocale(QLocale::English).toString(qlonglong(values));
}

// Each machine's part of `units`, in proportion to `weight` and never past `cap`: the machines
// whose proportional part would pass their cap hold their cap, and the rest is shared again
// among the others. The caps together must hold `units`.
std::vector<int64_t> waterFill(int64_t units, const std::vector<double>& weight,
                               const std::vector<int64_t>& cap) {
    const size_t n = cap.size();
    std::vector<bool> full(n, false);
    std::vector<double> ideal(n, 0);
    for (bool changed = true; changed;) {
        changed = false;
        double left = double(units), weights = 0;
        for (size_t i = 0; i < n; ++i) {
            if (full[i])
                left -= double(cap[i]);
            else if (cap[i] > 0)
                weights += weight[i];
        }
        for (size_t i = 0; i < n; ++i) {
            if (full[i] || cap[i] <= 0)
                continue;
            ideal[i] = weights > 0 ? std::max(0.0, left) * weight[i] / weights : 0;
            if (ideal[i] > double(cap[i])) {
                full[i] = true;
                changed = true;
            }
        }
    }
    std::vector<int64_t> part(n, 0);
    int64_t given = 0;
    for (size_t i = 0; i < n; ++i) {
        part[i] = full[i] ? cap[i] : std::min<int64_t>(cap[i], int64_t(std::floor(ideal[i])));
        given += part[i];
    }
    // What rounding down left: a unit each to those with the largest fractions and room.
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return ideal[a] - std::floor(ideal[a]) > ideal[b] - std::floor(ideal[b]);
    });
    while (given < units) {
        bool placed = false;
        for (size_t i : order) {
            if (given < units && part[i] < cap[i]) {
                ++part[i];
                ++given;
                placed = true;
            }
        }
        if (!placed)
            break; // cannot happen while the caps hold `units`
    }
    return part;
}

Error tooLarge(int64_t values, int64_t stateBytes, int64_t arrivingBytes, int64_t blockBytes,
               const std::vector<ShardCandidate>& machines, const std::vector<int64_t>& cap) {
    const int64_t bytesPerValue = stateBytes + arrivingBytes;
    const int64_t unitBytes = bytesPerValue * kShardAlignment + blockBytes;
    const int64_t needed =
        values * bytesPerValue + (values + kShardAlignment - 1) / kShardAlignment * blockBytes;
    QStringList each;
    int64_t room = 0;
    for (size_t i = 0; i < machines.size(); ++i) {
        const ShardCandidate& m = machines[i];
        const int64_t bytes = cap[i] * unitBytes;
        room += bytes;
        QString line =
            m.workerBytes > 0
                ? QStringLiteral("%1 %2 (%3 to train with, %4 for its own worker")
                      .arg(m.name, bytesText(bytes), bytesText(m.budgetBytes),
                           bytesText(m.workerBytes))
                : QStringLiteral("%1 %2 (it computes nothing").arg(m.name, bytesText(bytes));
        if (m.keptBytes > 0)
            line += QStringLiteral(", %1 for the run's model").arg(bytesText(m.keptBytes));
        each << line + QLatin1Char(')');
    }
    const int64_t fits = room / unitBytes * kShardAlignment;
    // A run just too large reads "need 11.5 GB ... can hold 11.5 GB": it says by how much.
    QString fitsText = valuesText(fits);
    if (fitsText == valuesText(values))
        fitsText = QStringLiteral("%1 (%2 fewer than the run has, %3 short)")
                       .arg(QLocale(QLocale::English).toString(qlonglong(fits)),
                            QLocale(QLocale::English).toString(qlonglong(values - fits)))
                       .arg(bytesText(needed - room));
    const int64_t sgd = shardBytesPerValue(OptimizerKind::Sgd);
    QString what = QStringLiteral("the fp32 master and the optimizer's state");
    if (blockBytes > 0)
        what += QStringLiteral(" with its scales a block");
    if (arrivingBytes > 0)
        what += QStringLiteral(", and %1 for the computing machines' gradients until a step "
                               "sums them")
                    .arg(arrivingBytes);
    return makeError(
        ErrorCode::OutOfMemory,
        QStringLiteral("this run's %1 trainable values need %2 across the machines (%3 bytes "
                       "each: %4), and the machines can hold %5 of it beside their own workers: "
                       "%6. They can hold up to %7 trainable values: add a machine, train fewer "
                       "weights (--lora)%8, or leave a machine's worker out so that its memory "
                       "holds a shard")
            .arg(valuesText(values), bytesText(needed))
            .arg(bytesPerValue)
            .arg(what, bytesText(room), each.join(QStringLiteral("; ")), fitsText,
                 stateBytes > sgd
                     ? QStringLiteral(", choose SGD (%1 bytes a value)").arg(sgd + arrivingBytes)
                     : QString()));
}

} // namespace

Status checkShardEnds(const std::vector<int64_t>& ends, int64_t members, int64_t values,
                      OptimizerKind optimizer) {
    for (size_t i = 0; i < ends.size(); ++i) {
        if (ends[i] <= (i == 0 ? 0 : ends[i - 1]))
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("member %1 of the sharded run would hold no values").arg(i + 1));
        // 8-bit AdamW's blocks are the flat order's: a range that began inside one would step
        // it in two halves, each with a scale of its own.
        if (optimizer == OptimizerKind::AdamW8bit && ends[i] != values &&
            ends[i] % BlockwiseAdamW::kBlock != 0)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("member %1's range of the sharded run ends at value "
                                            "%2, inside one of 8-bit AdamW's blocks of %3")
                                 .arg(i + 1)
                                 .arg(ends[i])
                                 .arg(BlockwiseAdamW::kBlock));
    }
    if (int64_t(ends.size()) != members || ends.empty() || ends.back() != values)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("the sharded run's %1 ranges end at %2; its %3 machines "
                                        "hold %4 values")
                             .arg(ends.size())
                             .arg(ends.empty() ? 0 : ends.back())
                             .arg(members)
                             .arg(values));
    return success();
}

int64_t shardBlockBytesPerUnit(OptimizerKind optimizer) {
    return optimizer == OptimizerKind::AdamW8bit ? kShardAlignment / BlockwiseAdamW::kBlock * 2 * 4
                                                 : 0;
}

int64_t shardBytesPerValue(OptimizerKind optimizer) {
    return 4 + optimizerBytesPerValue(optimizer);
}

int64_t shardOwnerStepBytes(int64_t values, int64_t machines) {
    if (values <= 0)
        return 0;
    const int64_t segment = std::min(values, shardSegmentValues(values));
    const int64_t sends = 4 * std::max<int64_t>(1, machines);
    return 16 * segment + std::min(kShardSendQueueBytes + segment * sends, values * sends);
}

int64_t shardArrivingBytesPerValue(size_t computing, DType wire) {
    return int64_t(computing) * dtypeSize(wire);
}

const ShardPlan::Shard* ShardPlan::shardOf(int owner) const {
    for (const Shard& s : shards)
        if (s.owner == owner)
            return &s;
    return nullptr;
}

QString ShardPlan::describe(int owner) const {
    for (size_t i = 0; i < shards.size(); ++i) {
        const Shard& s = shards[i];
        if (s.owner != owner)
            continue;
        return QStringLiteral("shard %1 of %2, %3 (%4 % of the trainable values)")
            .arg(i + 1)
            .arg(shards.size())
            .arg(bytesText(s.bytes))
            .arg(qRound64(100.0 * double(s.values()) / double(std::max<int64_t>(1, values))));
    }
    return QStringLiteral("no shard");
}

std::vector<double> shardLinkSpeeds(const std::vector<LinkFacts>& workers) {
    const std::vector<double> unknown(workers.size() + 1, 0.0);
    std::vector<double> out = unknown;
    double slowest = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < workers.size(); ++i) {
        const LinkFacts& l = workers[i];
        if (!(l.bytesPerSecond > 0) || l.atLeast)
            return unknown;
        out[i + 1] = l.bytesPerSecond;
        out[0] = std::max(out[0], l.bytesPerSecond);
        slowest = std::min(slowest, l.bytesPerSecond);
    }
    // Links closer than kShardLinkSpread are the same link, measured with a probe's noise.
    return out[0] >= kShardLinkSpread * slowest ? out : unknown;
}

Expected<ShardPlan> planShards(int64_t values, int64_t stateBytesPerValue,
                               const std::vector<ShardCandidate>& machines,
                               int64_t arrivingBytesPerValue, int64_t blockBytesPerUnit) {
    const int64_t arriving = std::max<int64_t>(0, arrivingBytesPerValue);
    const int64_t bytesPerValue = stateBytesPerValue + arriving;
    const int64_t blockBytes = std::max<int64_t>(0, blockBytesPerUnit);
    const int64_t unitBytes = bytesPerValue * kShardAlignment + blockBytes;
    if (values <= 0 || stateBytesPerValue <= 0 || machines.empty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("a shard plan needs trainable values and a machine"));
    const int64_t units = (values + kShardAlignment - 1) / kShardAlignment;
    std::vector<int64_t> cap(machines.size());
    int64_t room = 0;
    bool linksKnown = true;
    for (size_t i = 0; i < machines.size(); ++i) {
        cap[i] = unitsThatFit(machines[i], unitBytes, int64_t(machines.size()));
        room = std::min(kNoLimit, room + cap[i]);
        if (cap[i] > 0 && !(machines[i].linkBytesPerS > 0))
            linksKnown = false;
    }
    if (room < units)
        return tooLarge(values, stateBytesPerValue, arriving, blockBytes, machines, cap);
    std::vector<double> weight(machines.size(), 1.0);
    if (linksKnown)
        for (size_t i = 0; i < machines.size(); ++i)
            weight[i] = machines[i].linkBytesPerS;
    const std::vector<int64_t> part = waterFill(units, weight, cap);

    ShardPlan plan;
    plan.values = values;
    plan.bytesPerValue = bytesPerValue;
    int64_t begin = 0;
    for (size_t i = 0; i < machines.size(); ++i) {
        if (part[i] <= 0)
            continue;
        const int64_t end = std::min(values, begin + part[i] * kShardAlignment);
        plan.shards.push_back(
            {int(i), begin, end, (end - begin) * bytesPerValue + part[i] * blockBytes});
        begin = end;
    }
    return plan;
}

int64_t shardExchangeBytes(int64_t trainable, int64_t largest, WireDtype wire, bool streams) {
    const int64_t bundle = trainable * dtypeSize(storageDtype(wire));
    if (!streams)
        return 2 * bundle;
    return bundle + 2 * largest * 4;
}

int64_t shardRoundExchangeBytes(int64_t trainable, int64_t largest, WireDtype wire, int fragments) {
    const int64_t f = std::max(1, fragments);
    const int64_t fragment = std::min(trainable, (trainable + f - 1) / f + largest);
    return fragment * dtypeSize(storageDtype(wire)) + 3 * fragment * 4;
}

bool shardStepStreams(const RunConfig& cfg) {
    return cfg.mode == TrainMode::Sync && cfg.precision != Precision::Fp16;
}

MemoryNeed shardWorkerNeed(const Model& model, const Dataset& train, const RunConfig& cfg) {
    const auto [trainable, largest] = trainableValues(model);
    MemoryNeed need = memoryNeed(model, train, cfg, MasterCopy::None);
    const bool streams = shardStepStreams(cfg);
    // A streamed step's fp32 gradients go into the bundle as they are made: they are the
    // exchange's, in the wire's dtype, not the replica's, and so is a tied embedding's second
    // table (the exchange's second gradient of the largest tensor).
    if (streams)
        need.trainingBytes = std::max<int64_t>(0, need.trainingBytes - trainable * 4 -
                                                      model.transientGradientBytes());
    need.exchangeBytes = cfg.streams()
                             ? shardRoundExchangeBytes(trainable, largest, cfg.wire, cfg.fragments)
                             : shardExchangeBytes(trainable, largest, cfg.wire, streams);
    return need;
}

Expected<ShardPlan> planShardedRun(const Model& model, const Dataset& train, const RunConfig& cfg,
                                   const std::vector<ShardMachine>& machines) {
    const int64_t trainable = trainableValues(model).first;
    const MemoryNeed need = shardWorkerNeed(model, train, cfg);
    std::vector<ShardCandidate> candidates;
    size_t computing = 0;
    for (const ShardMachine& m : machines) {
        ShardCandidate c{m.name, memoryBudget(m.device), 0, m.linkBytesPerS, m.keptBytes};
        if (m.computes) {
            const auto fits = samplesThatFit(need, m.device, m.name);
            if (!fits)
                return makeError(fits.error().code,
                                 fits.error().message +
                                     QStringLiteral(" (left out of the computing, it can still "
                                                    "hold a shard of the run's state)"));
            // It computes as many samples at once as the batch gives it, up to what its whole
            // budget holds (WorkerPool::applyMemoryPlan caps it there): the whole batch, where
            // it is the one machine that computes. Its range is sized beside those.
            const int64_t atOnce = *fits > 0 ? std::min<int64_t>(cfg.batch, *fits) : 1;
            c.workerBytes =
                need.on(m.device).fixedBytes() + std::max<int64_t>(1, atOnce) * need.perSampleBytes;
            ++computing;
        }
        candidates.push_back(c);
    }
    // Local-SGD's owners keep the outer optimizer's state (SGD's momentum), whatever the inner
    // one is: each worker keeps that for the whole model.
    const OptimizerKind owners =
        cfg.mode == TrainMode::LocalSgd ? OptimizerKind::Sgd : cfg.optimizer;
    return planShards(trainable, shardBytesPerValue(owners), candidates,
                      shardArrivingBytesPerValue(computing, storageDtype(cfg.wire)),
                      shardBlockBytesPerUnit(owners));
}

} // namespace tandem
