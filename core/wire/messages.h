#pragma once

// The wire protocol's messages as plain structs. Only messages.cpp sees the generated
// protobuf types; everything else builds and reads these.

#include "common/deviceinfo.h"
#include "common/expected.h"
#include "common/runenums.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace tandem::wire {

// Version 1 is the first; a peer speaking another major version is refused by name.
constexpr uint32_t kProtocolVersion = 15;

// The compatibility rule (docs/user-guide.md, "Versions"): two nodes work together exactly
// when they speak the same protocol version, whatever their app versions. The protocol
// version rises only when the wire format or the meaning of a message changes, so releases
// that keep it interoperate. Returns an empty string when the peer is compatible, otherwise a
// sentence that names both versions and says which to install.
QString incompatibility(const QString& myApp, uint32_t peerProtocol, const QString& peerApp,
                        const QString& peerRole);

// Tokens: a token stream's raw bytes, sent apart from its dataset's container so that a worker
// writes them to a file and maps it, whatever their size.
// BasePart: one part of a run's frozen base (RunSpec::baseManifest).
// RangeState: a sharded run's range of optimizer state (ShardState), which the coordinator writes
// to a file as it comes.
enum class BlobKind : uint32_t {
    Model = 1,
    Tensors = 2,
    Dataset = 3,
    Tokens = 4,
    BasePart = 5,
    RangeState = 6,
};

enum class RejectCode : uint32_t {
    Version = 1,   // protocol versions do not match
    Untrusted = 2, // the certificate is not in the trust store
    Schema = 3,    // the model's parameters differ
    Busy = 4,      // the run is full or over
    Protocol = 5,  // a malformed or unexpected message
    Internal = 6,
};

struct TensorMeta {
    QString name;
    std::vector<int64_t> shape;
    QString dtype;
};

struct Hello {
    uint32_t protocolVersion = kProtocolVersion;
    QString appVersion;
    QString torchVersion;
    QString deviceId;
    QString displayName;
    QString role;
    QList<DeviceInfo> devices;
    bool holdsOnly = false; // a worker that only holds a range (--hold-only): it needs no model
};
struct Reject {
    RejectCode code = RejectCode::Protocol;
    QString message;
};
// The run's settings a worker computes with, and nothing of the coordinator's own (its output
// folder, address, invitations or devices).
struct WorkerSettings {
    OptimizerKind optimizer = OptimizerKind::Adam; // local-SGD's inner optimizer
    double momentum = 0.9;
    double weightDecay = 0; // as the optimizer applies it
    Precision precision = Precision::Fp32;
    LossKind loss = LossKind::CrossEntropy; // as the coordinator resolved it: never Auto
    double beta = 0.1;                      // dpo and orpo: RunConfig::beta
    bool operator==(const WorkerSettings& o) const {
        return optimizer == o.optimizer && momentum == o.momentum && weightDecay == o.weightDecay &&
               precision == o.precision && loss == o.loss && beta == o.beta;
    }
};
struct RunSpec {
    QString runId;
    WorkerSettings settings;
    uint64_t modelBlob = 0;
    QString schemaHash;
    QString datasetSpec;
    QString datasetHash;
    TrainMode mode = TrainMode::Sync; // never Auto: the coordinator decides before it sends
    WireDtype wire = WireDtype::Fp32;
    QList<TensorMeta> params;
    QList<TensorMeta> buffers;
    int64_t trainSamples = 0;
    std::optional<OuterWire> outerWire; // local-sgd only
    // A frozen base the archive leaves out (engine/step/basepack.h); both empty when it holds all.
    QByteArray baseManifest;
    QString baseHash;
    bool sharded = false; // ShardSetup follows once every worker is ready
    int fragments = 1;    // local-sgd: 2 or more streams the exchange (RunConfig::fragments)
};
struct Ready {
    QString schemaHash;
    DeviceInfo device;
    int64_t maxBatch = 0;
    QString precision;
    QString precisionNote;
    quint16 shardPort = 0;  // a sharded run: where this worker listens for its links
    bool holdsOnly = false; // a sharded run: this worker owns a range and computes nothing
};
struct DataRequest {
    QString datasetHash;
};
struct DataOffer {
    uint64_t blob = 0;
    // The token blobs of a split of token windows, whose container leaves its tokens out;
    // 0 for a split that carries its own data.
    uint64_t trainTokensBlob = 0;
    uint64_t testTokensBlob = 0;
};
struct BaseRequest {
    QString baseHash;
    uint32_t part = 0;
};
struct BasePart {
    uint32_t part = 0;
    uint64_t blob = 0;
};
struct Assign {
    int64_t step = 0;
    std::vector<int64_t> indices;
    uint64_t seed = 0;
    uint64_t weightsBlob = 0;
    int64_t weightsVersion = 0;
    int innerSteps = 0;
    double lr = 0;
    bool weightsDelta = false; // the blob brings the last weights sent up to date
    // Streaming local-SGD (fragments > 1): the fragment whose delta the result carries, and
    // the one a weights_delta blob covers (-1: none).
    int fragments = 0;
    int sendFragment = 0;
    int mergeFragment = -1;
    double share = 0; // this worker's part of the step's samples; 0: not given
    // DPO on every weight: the reference's log-probabilities of each sample's chosen and
    // rejected answer, two a sample in the order of `indices`; empty otherwise.
    std::vector<float> referenceLogps;
};
struct Result {
    int64_t step = 0;
    int64_t samples = 0;
    double lossSum = 0;
    int64_t correct = 0;
    int64_t counted = 0; // what `correct` is out of: samples, target positions or labels
    double computeMs = 0;
    uint64_t tensorsBlob = 0;
    int64_t weightsVersion = 0;
    int64_t memoryCap = 0;
    int64_t earlyBytes = 0; // bytes of the result sent while the backward pass still ran
    // Preference tuning: the pairs, and TRL's five figures summed over them (PairFigures).
    int64_t pairs = 0;
    std::vector<double> pairSums;
};
struct Control {
    enum class Action { None, Pause, Resume, Stop };
    Action action = Action::None;
};
struct Bye {
    QString reason;
    // From a coordinator: the run goes on without this worker for now, and the worker connects
    // again to join it later.
    bool again = false;
};
// Filler bytes are not kept: only their count travels in and out of these.
struct Ping {
    uint64_t nonce = 0;
    uint32_t echoBytes = 0;    // how much filler the Pong should carry back
    uint32_t paddingBytes = 0; // how much filler this one carries
};
struct Pong {
    uint64_t nonce = 0;
    uint32_t paddingBytes = 0;
};
struct WorkError {
    int64_t step = 0;
    QString message;
};

struct PairRequest {
    QByteArray commitment;
    QString displayName;
};
struct PairNonce {
    QByteArray nonce;
    QString displayName;
};
struct PairReveal {
    QByteArray nonce;
};
struct PairDecision {
    bool accepted = false;
};

struct Invite {
    quint16 port = 0;
    QString runId;
};
struct Unpaired {};

// A sharded run's link (engine/shard/shardlink.h): the dialing machine's first message, and the
// answer of the one that admits it.
struct ShardJoin {
    QString runId;
    QByteArray token;
};
struct ShardWelcome {};
// Over such a link, a step's bytes (engine/shard/shardnode.h), each in a Tensors blob: a worker's
// gradients for the range the link's other end owns, and that owner's weights after the step.
struct ShardGrads {
    int64_t step = 0;
    uint64_t blob = 0;
};
struct ShardWeights {
    int64_t step = 0;
    uint64_t blob = 0;
};
// An owner's sums for a span of its range, for the coordinator's log (tandem.proto).
struct ShardSum {
    int64_t step = 0;
    uint64_t blob = 0;
    int64_t from = 0;
    int64_t to = 0;
    double lr = 0;
    QByteArray present;
};

// The control of a sharded run, between the coordinator and each member (tandem.proto says what
// each field means).
struct ShardSetup {
    struct Peer {
        QString deviceId;
        QString host;
        quint16 port = 0;
        bool holdsOnly = false; // it takes no weights: it computes nothing
    };
    struct Span {
        int64_t begin = 0;
        int64_t end = 0;
        QString owner;
    };
    QString runId;
    QByteArray token;
    QList<Peer> members;
    QList<Span> ranges;
    int64_t firstStep = 0;
    uint64_t mastersBlob = 0; // the range's weights, then its optimizer's state (resumed)
    int64_t optimizerSteps = 0;
    bool backup = false; // the owners send the coordinator their sums (ShardSum)
    // The owners step with local-SGD's outer optimizer at this momentum (outerStepOptimizer),
    // not the run's own.
    bool outerStep = false;
    double outerMomentum = 0;
    // A link between two members that carries nothing this long is lost (the run's worker
    // timeout; 0: the member's own default, ShardPart::kLinkTimeoutMs).
    int linkTimeoutMs = 0;
    // Only a test of the links to the members (tandem.proto): answered by a Probed report.
    bool probe = false;
    // Streaming local-SGD's fragments: step s exchanges fragment s mod `fragments` (1: all).
    int fragments = 1;
};
struct ShardReport {
    enum class Kind { Ready = 1, Held = 2, Refused = 3, Updated = 4, Lost = 5, Probed = 6 };
    Kind kind = Kind::Ready;
    int64_t step = 0;
    QString worker;
    QString why;
    // Updated: every byte this machine has sent and received on the run's links so far, to the
    // coordinator and to the other members.
    uint64_t sent = 0;
    uint64_t received = 0;
};
struct ShardClose {
    int64_t step = 0;
    double lr = 0;
    QList<std::pair<QString, double>> counted;
};

struct ShardSave {};
struct ShardState {
    int64_t optimizerSteps = 0;
    uint64_t blob = 0;
};

// Blob parts are not messages: they travel as raw frames (framing.h).
using Message = std::variant<Hello, Reject, RunSpec, Ready, DataRequest, DataOffer, Assign, Result,
                             Control, Bye, Ping, Pong, WorkError, PairRequest, PairNonce,
                             PairReveal, PairDecision, Invite, BaseRequest, BasePart, Unpaired,
                             ShardJoin, ShardWelcome, ShardGrads, ShardWeights, ShardSetup,
                             ShardReport, ShardClose, ShardSave, ShardState, ShardSum>;

// Serialises one message (without the frame's length prefix).
QByteArray encode(const Message& m);
// Parses one frame's payload. Fails on anything protobuf cannot parse, an empty envelope, or
// fields outside their ranges; never aborts.
Expected<Message> decode(const QByteArray& payload);

QString messageName(const Message& m);

// A UDP announcement (discovery). Datagrams are small and never trusted.
constexpr qsizetype kMaxAnnouncementBytes = 8192;
struct Announcement {
    uint32_t protocolVersion = kProtocolVersion;
    QString deviceId;
    QString displayName;
    QString os;
    QString appVersion;
    QList<DeviceInfo> devices;
    quint16 tcpPort = 0;
    bool query = false;
};
QByteArray encodeAnnouncement(const Announcement& a);
Expected<Announcement> decodeAnnouncement(const QByteArray& datagram);

} // namespace tandem::wire
