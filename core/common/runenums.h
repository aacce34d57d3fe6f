#pragma once

// The run's choices as types. Each enum has one table of names, used by parse() and
// nameOf() at the edges (the JSON run description, the command line, the wire) and by
// choices() for the sentence that lists what is allowed. Inside the engine they are only
// compared as values. Plain C++/Qt: the app and the UI include it.

#include "common/expected.h"

#include <QString>
#include <QStringList>

#include <optional>
#include <utility>

namespace tandem {

// How workers' results become optimizer steps: each mode's value and the name the command
// line, the form and the wire know it by. A mode is its line here, its file under
// core/engine/modes (which defines makeMode<Value>(), its StepPolicy) and its entry in the New
// run form's list (docs/architecture.md shows one added). Auto is a request, not a mode: the
// coordinator measures each worker's link as it joins and trains in sync or streaming
// local-SGD.
#define TANDEM_TRAIN_MODES(X) X(Sync, "sync") X(Async, "async") X(LocalSgd, "local-sgd")
enum class TrainMode {
#define TANDEM_MODE_VALUE(value, name) value,
    TANDEM_TRAIN_MODES(TANDEM_MODE_VALUE)
#undef TANDEM_MODE_VALUE
        Auto
};
// How weights and gradients travel between machines.
enum class WireDtype { Fp32, Fp16, Bf16 };
// How local-SGD's outer traffic (weights down, parameter deltas up) travels.
enum class OuterWire { Fp32, Fp16, Int8, Int4 };
// Local-SGD's inner learning rate: scaled with how many workers share a round, or as given.
enum class LrScaling { Workers, None };
// What workers compute the forward pass in (autocast); weights stay fp32.
enum class Precision { Fp32, Bf16, Fp16 };
// AdamW8bit: AdamW with its moments in 8 bits a value (engine/step/blockwiseadam.h).
enum class OptimizerKind { Sgd, Adam, AdamW, RmsProp, Adagrad, AdamW8bit };
enum class Schedule { Constant, Cosine };
// What a step minimises. Auto is a request: the model check picks one from the model's output
// and the data's targets; Model calls the model's own loss(output, target) method. Dpo and Orpo
// are preference tuning's, on pairs of answers (engine/step/preference.h).
enum class LossKind { Auto, CrossEntropy, Mse, L1, Huber, Bce, Model, Dpo, Orpo };
// What a run's figures mean, from its loss and its data: top-1 accuracy of one class per sample,
// next-token accuracy and perplexity, R² and mean absolute error, per-label accuracy, or only
// the loss of a model that defines its own, or a preference objective's reward accuracy.
enum class Task { Classification, Sequence, Regression, MultiLabel, Custom, Preference };
// Which side of a connection a peer is on.
enum class PeerRole { Coordinator, Worker, Node };

template <typename E> struct EnumNames;
#define TANDEM_ENUM_NAMES(E, ...)                                                                  \
    template <> struct EnumNames<E> {                                                              \
        static constexpr std::pair<E, const char*> table[] = {__VA_ARGS__};                        \
    };
template <> struct EnumNames<TrainMode> {
    static constexpr std::pair<TrainMode, const char*> table[] = {
#define TANDEM_MODE_NAME(value, name) {TrainMode::value, name},
        TANDEM_TRAIN_MODES(TANDEM_MODE_NAME)
#undef TANDEM_MODE_NAME
            {TrainMode::Auto, "auto"}};
};
TANDEM_ENUM_NAMES(WireDtype, {WireDtype::Fp32, "fp32"}, {WireDtype::Fp16, "fp16"},
                  {WireDtype::Bf16, "bf16"})
TANDEM_ENUM_NAMES(OuterWire, {OuterWire::Fp32, "fp32"}, {OuterWire::Fp16, "fp16"},
                  {OuterWire::Int8, "int8"}, {OuterWire::Int4, "int4"})
TANDEM_ENUM_NAMES(LrScaling, {LrScaling::Workers, "workers"}, {LrScaling::None, "none"})
TANDEM_ENUM_NAMES(Precision, {Precision::Fp32, "fp32"}, {Precision::Bf16, "bf16"},
                  {Precision::Fp16, "fp16"})
TANDEM_ENUM_NAMES(OptimizerKind, {OptimizerKind::Sgd, "sgd"}, {OptimizerKind::Adam, "adam"},
                  {OptimizerKind::AdamW, "adamw"}, {OptimizerKind::RmsProp, "rmsprop"},
                  {OptimizerKind::Adagrad, "adagrad"}, {OptimizerKind::AdamW8bit, "adamw8bit"})
TANDEM_ENUM_NAMES(Schedule, {Schedule::Constant, "constant"}, {Schedule::Cosine, "cosine"})
TANDEM_ENUM_NAMES(LossKind, {LossKind::Auto, "auto"}, {LossKind::CrossEntropy, "cross-entropy"},
                  {LossKind::Mse, "mse"}, {LossKind::L1, "l1"}, {LossKind::Huber, "huber"},
                  {LossKind::Bce, "bce"}, {LossKind::Model, "model"}, {LossKind::Dpo, "dpo"},
                  {LossKind::Orpo, "orpo"})
TANDEM_ENUM_NAMES(Task, {Task::Classification, "classification"}, {Task::Sequence, "sequence"},
                  {Task::Regression, "regression"}, {Task::MultiLabel, "multi-label"},
                  {Task::Custom, "custom"}, {Task::Preference, "preference"})
TANDEM_ENUM_NAMES(PeerRole, {PeerRole::Coordinator, "coordinator"}, {PeerRole::Worker, "worker"},
                  {PeerRole::Node, "node"})
#undef TANDEM_ENUM_NAMES

template <typename E, typename = decltype(EnumNames<E>::table)> QString nameOf(E value) {
    for (const auto& [v, name] : EnumNames<E>::table)
        if (v == value)
            return QLatin1String(name);
    return {};
}

template <typename E> std::optional<E> parse(const QString& name) {
    for (const auto& [v, n] : EnumNames<E>::table)
        if (name == QLatin1String(n))
            return v;
    return std::nullopt;
}

// "sync, async or local-sgd": the names, for messages.
template <typename E> QString choices() {
    QStringList names;
    for (const auto& entry : EnumNames<E>::table)
        names << QLatin1String(entry.second);
    const QString last = names.takeLast();
    return names.isEmpty() ? last
                           : names.join(QStringLiteral(", ")) + QStringLiteral(" or ") + last;
}

// Reads `text` into `out`, or says what is allowed: unknown mode "x"; use sync, async or local-sgd.
template <typename E> Status parseInto(const QString& text, E& out, const char* what) {
    if (auto v = parse<E>(text)) {
        out = *v;
        return success();
    }
    return makeError(
        ErrorCode::InvalidArgument,
        QStringLiteral("unknown %1 \"%2\"; use %3").arg(QLatin1String(what), text, choices<E>()));
}

} // namespace tandem
