// The one file that sees the generated protobuf types.

#include "wire/messages.h"

#include "tandem.pb.h"

#include <algorithm>
#include <cmath>

namespace tandem::wire {

namespace {

// Strings and repeated fields a peer sends are bounded here, after protobuf has parsed the
// frame (itself bounded by the frame cap).
constexpr int kMaxText = 4096;
constexpr int kMaxDevices = 64;
constexpr int kMaxTensors = 1 << 16;
constexpr int kMaxRank = 16;

QString text(const std::string& s) {
    return QString::fromUtf8(s.data(), qsizetype(std::min<size_t>(s.size(), kMaxText)));
}
std::string str(const QString& s) {
    return s.toStdString();
}
std::string bytes(const QByteArray& b) {
    return std::string(b.constData(), size_t(b.size()));
}

void devToPb(const DeviceInfo& d, ::tandem::pb::Device* o) {
    o->set_kind(str(deviceKindName(d.kind)));
    o->set_index(d.index);
    o->set_name(str(d.name));
    o->set_memory_bytes(d.memoryBytes);
    o->set_capability(str(d.capability));
    o->set_cores(d.cores);
    o->set_torch_version(str(d.torchVersion));
    o->set_mixed_precision(d.mixedPrecision);
}

DeviceInfo devFromPb(const ::tandem::pb::Device& o) {
    DeviceInfo d;
    // A kind this version does not know (a later peer's) is taken for the CPU: the link still
    // works, and nothing here puts work on a device it cannot name.
    if (!deviceKindFromName(text(o.kind()), &d.kind))
        d.kind = DeviceKind::Cpu;
    d.index = o.index();
    d.name = text(o.name());
    d.memoryBytes = o.memory_bytes();
    d.capability = text(o.capability());
    d.cores = o.cores();
    d.torchVersion = text(o.torch_version());
    d.mixedPrecision = o.mixed_precision();
    return d;
}

void metaToPb(const TensorMeta& m, ::tandem::pb::TensorMeta* o) {
    o->set_name(str(m.name));
    for (int64_t s : m.shape)
        o->add_shape(s);
    o->set_dtype(str(m.dtype));
}

Expected<TensorMeta> metaFromPb(const ::tandem::pb::TensorMeta& o) {
    TensorMeta m;
    m.name = text(o.name());
    m.dtype = text(o.dtype());
    if (o.shape_size() > kMaxRank)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("tensor %1 has rank %2").arg(m.name).arg(o.shape_size()));
    for (int64_t s : o.shape()) {
        if (s < 0)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("tensor %1 has a negative dimension").arg(m.name));
        m.shape.push_back(s);
    }
    return m;
}

constexpr int kMaxPairBytes = 64; // commitments and nonces are 32 bytes
constexpr int kMaxShardMembers = 1024;

struct Encoder {
    ::tandem::pb::Envelope& e;
    void operator()(const Hello& m) {
        auto* o = e.mutable_hello();
        o->set_protocol_version(m.protocolVersion);
        o->set_app_version(str(m.appVersion));
        o->set_torch_version(str(m.torchVersion));
        o->set_device_id(str(m.deviceId));
        o->set_display_name(str(m.displayName));
        o->set_role(str(m.role));
        for (const DeviceInfo& d : m.devices)
            devToPb(d, o->add_devices());
        o->set_holds_only(m.holdsOnly);
    }
    void operator()(const Reject& m) {
        auto* o = e.mutable_reject();
        o->set_code(uint32_t(m.code));
        o->set_message(str(m.message));
    }
    void operator()(const RunSpec& m) {
        auto* o = e.mutable_run_spec();
        o->set_run_id(str(m.runId));
        auto* s = o->mutable_settings();
        s->set_optimizer(str(nameOf(m.settings.optimizer)));
        s->set_momentum(m.settings.momentum);
        s->set_weight_decay(m.settings.weightDecay);
        s->set_precision(str(nameOf(m.settings.precision)));
        s->set_loss(str(nameOf(m.settings.loss)));
        s->set_beta(m.settings.beta);
        o->set_model_blob(m.modelBlob);
        o->set_schema_hash(str(m.schemaHash));
        o->set_dataset_spec(str(m.datasetSpec));
        o->set_dataset_hash(str(m.datasetHash));
        o->set_mode(str(nameOf(m.mode)));
        o->set_wire_dtype(str(nameOf(m.wire)));
        for (const TensorMeta& t : m.params)
            metaToPb(t, o->add_params());
        for (const TensorMeta& t : m.buffers)
            metaToPb(t, o->add_buffers());
        o->set_train_samples(m.trainSamples);
        if (m.outerWire)
            o->set_outer_wire(str(nameOf(*m.outerWire)));
        o->set_base_manifest(m.baseManifest.toStdString());
        o->set_base_hash(str(m.baseHash));
        o->set_sharded(m.sharded);
        o->set_fragments(m.fragments);
    }
    void operator()(const Ready& m) {
        auto* o = e.mutable_ready();
        o->set_schema_hash(str(m.schemaHash));
        devToPb(m.device, o->mutable_device());
        o->set_max_batch(m.maxBatch);
        o->set_precision(str(m.precision));
        o->set_precision_note(str(m.precisionNote));
        o->set_shard_port(m.shardPort);
        o->set_holds_only(m.holdsOnly);
    }
    void operator()(const DataRequest& m) {
        e.mutable_data_request()->set_dataset_hash(str(m.datasetHash));
    }
    void operator()(const DataOffer& m) {
        auto* o = e.mutable_data_offer();
        o->set_blob(m.blob);
        o->set_train_tokens_blob(m.trainTokensBlob);
        o->set_test_tokens_blob(m.testTokensBlob);
    }
    void operator()(const Assign& m) {
        auto* o = e.mutable_assign();
        o->set_step(m.step);
        o->mutable_indices()->Reserve(int(m.indices.size()));
        for (int64_t i : m.indices)
            o->add_indices(i);
        o->set_seed(m.seed);
        o->set_weights_blob(m.weightsBlob);
        o->set_weights_version(m.weightsVersion);
        o->set_inner_steps(m.innerSteps);
        o->set_lr(m.lr);
        o->set_weights_delta(m.weightsDelta);
        o->set_fragments(m.fragments);
        o->set_send_fragment(m.sendFragment);
        o->set_merge_fragment(m.mergeFragment + 1);
        o->set_share(m.share);
        o->mutable_reference_logps()->Reserve(int(m.referenceLogps.size()));
        for (float v : m.referenceLogps)
            o->add_reference_logps(v);
    }
    void operator()(const Result& m) {
        auto* o = e.mutable_result();
        o->set_step(m.step);
        o->set_samples(m.samples);
        o->set_loss_sum(m.lossSum);
        o->set_correct(m.correct);
        o->set_counted(m.counted);
        o->set_compute_ms(m.computeMs);
        o->set_tensors_blob(m.tensorsBlob);
        o->set_weights_version(m.weightsVersion);
        o->set_memory_cap(m.memoryCap);
        o->set_early_bytes(m.earlyBytes);
        o->set_pairs(m.pairs);
        for (double v : m.pairSums)
            o->add_pair_sums(v);
    }
    void operator()(const Control& m) {
        ::tandem::pb::Control_Action a = ::tandem::pb::Control_Action_NONE;
        switch (m.action) {
        case Control::Action::None:
            break;
        case Control::Action::Pause:
            a = ::tandem::pb::Control_Action_PAUSE;
            break;
        case Control::Action::Resume:
            a = ::tandem::pb::Control_Action_RESUME;
            break;
        case Control::Action::Stop:
            a = ::tandem::pb::Control_Action_STOP;
            break;
        }
        e.mutable_control()->set_action(a);
    }
    void operator()(const Bye& m) {
        e.mutable_bye()->set_reason(str(m.reason));
        e.mutable_bye()->set_again(m.again);
    }
    void operator()(const Ping& m) {
        auto* p = e.mutable_ping();
        p->set_nonce(m.nonce);
        p->set_echo_bytes(m.echoBytes);
        if (m.paddingBytes > 0)
            p->set_padding(std::string(m.paddingBytes, '\0'));
    }
    void operator()(const Pong& m) {
        e.mutable_pong()->set_nonce(m.nonce);
        if (m.paddingBytes > 0)
            e.mutable_pong()->set_padding(std::string(m.paddingBytes, '\0'));
    }
    void operator()(const PairRequest& m) {
        auto* o = e.mutable_pair_request();
        o->set_commitment(bytes(m.commitment));
        o->set_display_name(str(m.displayName));
    }
    void operator()(const PairNonce& m) {
        auto* o = e.mutable_pair_nonce();
        o->set_nonce(bytes(m.nonce));
        o->set_display_name(str(m.displayName));
    }
    void operator()(const PairReveal& m) { e.mutable_pair_reveal()->set_nonce(bytes(m.nonce)); }
    void operator()(const PairDecision& m) { e.mutable_pair_decision()->set_accepted(m.accepted); }
    void operator()(const BaseRequest& m) {
        e.mutable_base_request()->set_base_hash(str(m.baseHash));
        e.mutable_base_request()->set_part(m.part);
    }
    void operator()(const BasePart& m) {
        e.mutable_base_part()->set_part(m.part);
        e.mutable_base_part()->set_blob(m.blob);
    }
    void operator()(const Invite& m) {
        e.mutable_invite()->set_port(m.port);
        e.mutable_invite()->set_run_id(str(m.runId));
    }
    void operator()(const Unpaired&) { e.mutable_unpaired(); }
    void operator()(const ShardJoin& m) {
        e.mutable_shard_join()->set_run_id(str(m.runId));
        e.mutable_shard_join()->set_token(m.token.toStdString());
    }
    void operator()(const ShardWelcome&) { e.mutable_shard_welcome(); }
    void operator()(const ShardGrads& m) {
        e.mutable_shard_grads()->set_step(m.step);
        e.mutable_shard_grads()->set_blob(m.blob);
    }
    void operator()(const ShardWeights& m) {
        e.mutable_shard_weights()->set_step(m.step);
        e.mutable_shard_weights()->set_blob(m.blob);
    }
    void operator()(const ShardSum& m) {
        auto* o = e.mutable_shard_sum();
        o->set_step(m.step);
        o->set_blob(m.blob);
        o->set_from(m.from);
        o->set_to(m.to);
        o->set_lr(m.lr);
        o->set_present(m.present.toStdString());
    }
    void operator()(const ShardSetup& m) {
        auto* o = e.mutable_shard_setup();
        o->set_run_id(str(m.runId));
        o->set_token(m.token.toStdString());
        for (const ShardSetup::Peer& p : m.members) {
            auto* q = o->add_members();
            q->set_device_id(str(p.deviceId));
            q->set_host(str(p.host));
            q->set_port(p.port);
            q->set_holds_only(p.holdsOnly);
        }
        for (const ShardSetup::Span& r : m.ranges) {
            auto* q = o->add_ranges();
            q->set_begin(r.begin);
            q->set_end(r.end);
            q->set_owner(str(r.owner));
        }
        o->set_first_step(m.firstStep);
        o->set_masters_blob(m.mastersBlob);
        o->set_optimizer_steps(m.optimizerSteps);
        o->set_backup(m.backup);
        o->set_outer_step(m.outerStep);
        o->set_outer_momentum(m.outerMomentum);
        o->set_link_timeout_ms(quint32(std::max(0, m.linkTimeoutMs)));
        o->set_probe(m.probe);
        o->set_fragments(m.fragments);
    }
    void operator()(const ShardSave&) { e.mutable_shard_save(); }
    void operator()(const ShardState& m) {
        e.mutable_shard_state()->set_optimizer_steps(m.optimizerSteps);
        e.mutable_shard_state()->set_blob(m.blob);
    }
    void operator()(const ShardReport& m) {
        auto* o = e.mutable_shard_report();
        o->set_kind(::tandem::pb::ShardReport::Kind(int(m.kind)));
        o->set_step(m.step);
        o->set_worker(str(m.worker));
        o->set_why(str(m.why));
        o->set_sent(m.sent);
        o->set_received(m.received);
    }
    void operator()(const ShardClose& m) {
        auto* o = e.mutable_shard_close();
        o->set_step(m.step);
        o->set_lr(m.lr);
        for (const auto& [worker, weight] : m.counted) {
            auto* c = o->add_counted();
            c->set_worker(str(worker));
            c->set_weight(weight);
        }
    }
    void operator()(const WorkError& m) {
        auto* o = e.mutable_work_error();
        o->set_step(m.step);
        o->set_message(str(m.message));
    }
};

Error corrupt(const QString& what) {
    return makeError(ErrorCode::Corrupt, what);
}

// One of the run's choices by its name. A name this version does not know (a later release's
// optimizer, say) is refused, naming it: a worker computes with the run's settings or not at all.
template <typename E> Status named(const std::string& name, E& out, const char* what) {
    if (auto v = parse<E>(text(name))) {
        out = *v;
        return success();
    }
    return makeError(ErrorCode::Incompatible,
                     QStringLiteral("the run's %1 is \"%2\", which Tandem %3 does not know (it "
                                    "knows %4); install the same Tandem version on every machine")
                         .arg(QLatin1String(what), text(name).left(40),
                              QStringLiteral(TANDEM_VERSION), choices<E>()));
}

// A run spec's typed fields: its settings, mode and wire formats.
Status readRunChoices(const ::tandem::pb::RunSpec& o, RunSpec& m) {
    const auto& s = o.settings();
    m.settings.momentum = s.momentum();
    m.settings.weightDecay = s.weight_decay();
    // Absent (0) from a coordinator that trains no preference objective.
    if (s.beta() > 0)
        m.settings.beta = s.beta();
    for (Status st : {named(s.optimizer(), m.settings.optimizer, "optimizer"),
                      named(s.precision(), m.settings.precision, "precision"),
                      named(s.loss(), m.settings.loss, "loss"), named(o.mode(), m.mode, "mode"),
                      named(o.wire_dtype(), m.wire, "wire format")})
        if (!st)
            return st;
    if (!o.outer_wire().empty()) {
        OuterWire w{};
        if (Status st = named(o.outer_wire(), w, "outer wire format"); !st)
            return st;
        m.outerWire = w;
    }
    return success();
}

} // namespace

QByteArray encode(const Message& m) {
    ::tandem::pb::Envelope e;
    std::visit(Encoder{e}, m);
    std::string out;
    e.SerializeToString(&out);
    return QByteArray(out.data(), qsizetype(out.size()));
}

namespace {
// protobuf logs every string field that is not valid UTF-8 to stderr as it refuses the
// message; a peer could fill a node's log that way. The refusal itself is what matters, and
// it comes back as an error value.
void quietProtobuf() {
    static const bool done = [] {
        google::protobuf::SetLogHandler(nullptr);
        return true;
    }();
    (void)done;
}
} // namespace

Expected<Message> decode(const QByteArray& payload) {
    quietProtobuf();
    ::tandem::pb::Envelope e;
    if (!e.ParseFromArray(payload.constData(), int(payload.size())))
        return corrupt(QStringLiteral("a message could not be parsed"));
    switch (e.body_case()) {
    case ::tandem::pb::Envelope::kHello: {
        const auto& o = e.hello();
        Hello m;
        m.protocolVersion = o.protocol_version();
        m.appVersion = text(o.app_version());
        m.torchVersion = text(o.torch_version());
        m.deviceId = text(o.device_id());
        m.displayName = text(o.display_name());
        m.role = text(o.role());
        if (o.devices_size() > kMaxDevices)
            return corrupt(QStringLiteral("a hello lists %1 devices").arg(o.devices_size()));
        for (const auto& d : o.devices())
            m.devices << devFromPb(d);
        m.holdsOnly = o.holds_only();
        return Message(m);
    }
    case ::tandem::pb::Envelope::kReject: {
        Reject m;
        m.code = RejectCode(e.reject().code());
        m.message = text(e.reject().message());
        return Message(m);
    }
    case ::tandem::pb::Envelope::kRunSpec: {
        const auto& o = e.run_spec();
        RunSpec m;
        m.runId = text(o.run_id());
        if (Status st = readRunChoices(o, m); !st)
            return st.error();
        m.modelBlob = o.model_blob();
        m.schemaHash = text(o.schema_hash());
        m.datasetSpec = text(o.dataset_spec());
        m.datasetHash = text(o.dataset_hash());
        if (o.params_size() > kMaxTensors || o.buffers_size() > kMaxTensors)
            return corrupt(QStringLiteral("a run spec lists too many tensors"));
        for (const auto& t : o.params()) {
            auto tm = metaFromPb(t);
            if (!tm)
                return tm.error();
            m.params << *tm;
        }
        for (const auto& t : o.buffers()) {
            auto tm = metaFromPb(t);
            if (!tm)
                return tm.error();
            m.buffers << *tm;
        }
        m.trainSamples = o.train_samples();
        if (m.trainSamples < 0)
            return corrupt(QStringLiteral("a run spec claims a negative sample count"));
        m.baseManifest = QByteArray::fromStdString(o.base_manifest());
        m.baseHash = text(o.base_hash()).left(128);
        if (m.baseManifest.isEmpty() != m.baseHash.isEmpty())
            return corrupt(QStringLiteral("a run spec has a base without its hash, or a hash "
                                          "without its base"));
        m.sharded = o.sharded();
        // Absent (a coordinator before the field): the whole model each round.
        m.fragments = std::max(1, o.fragments());
        if (m.fragments > 4096)
            return corrupt(QStringLiteral("a run spec cuts the model in %1 fragments; at most 4096")
                               .arg(o.fragments()));
        return Message(m);
    }
    case ::tandem::pb::Envelope::kReady: {
        Ready m;
        m.schemaHash = text(e.ready().schema_hash());
        m.device = devFromPb(e.ready().device());
        m.maxBatch = std::max<int64_t>(0, e.ready().max_batch());
        m.precision = text(e.ready().precision());
        m.precisionNote = text(e.ready().precision_note());
        if (e.ready().shard_port() > 65535)
            return corrupt(QStringLiteral("a worker's ready message names an impossible port"));
        m.shardPort = quint16(e.ready().shard_port());
        m.holdsOnly = e.ready().holds_only();
        return Message(m);
    }
    case ::tandem::pb::Envelope::kDataRequest:
        return Message(DataRequest{text(e.data_request().dataset_hash())});
    case ::tandem::pb::Envelope::kDataOffer:
        return Message(DataOffer{e.data_offer().blob(), e.data_offer().train_tokens_blob(),
                                 e.data_offer().test_tokens_blob()});
    case ::tandem::pb::Envelope::kAssign: {
        const auto& o = e.assign();
        Assign m;
        m.step = o.step();
        m.indices.assign(o.indices().begin(), o.indices().end());
        m.seed = o.seed();
        m.weightsBlob = o.weights_blob();
        m.weightsVersion = o.weights_version();
        m.innerSteps = o.inner_steps();
        m.lr = o.lr();
        m.weightsDelta = o.weights_delta();
        m.fragments = o.fragments();
        m.sendFragment = o.send_fragment();
        m.mergeFragment = o.merge_fragment() - 1;
        // Shown only: anything outside [0, 1] (NaN included) is "not given".
        m.share = o.share() >= 0 && o.share() <= 1 ? o.share() : 0;
        if (m.step < 0 || m.innerSteps < 0 || m.innerSteps > 100000)
            return corrupt(QStringLiteral("an assignment has an invalid step or step count"));
        if (m.fragments < 0 || m.fragments > 4096 || m.sendFragment < 0 ||
            m.sendFragment >= std::max(1, m.fragments) || m.mergeFragment < -1 ||
            m.mergeFragment >= std::max(1, m.fragments))
            return corrupt(QStringLiteral("an assignment names a fragment that does not exist"));
        m.referenceLogps.assign(o.reference_logps().begin(), o.reference_logps().end());
        if (!m.referenceLogps.empty() && m.referenceLogps.size() != 2 * m.indices.size())
            return corrupt(
                QStringLiteral("an assignment's reference figures are not two a sample"));
        for (float v : m.referenceLogps)
            if (!(v <= 0) || !std::isfinite(v)) // log-probabilities: finite and at most 0
                return corrupt(QStringLiteral("an assignment's reference figures are not "
                                              "log-probabilities"));
        return Message(m);
    }
    case ::tandem::pb::Envelope::kResult: {
        const auto& o = e.result();
        Result m;
        m.step = o.step();
        m.samples = o.samples();
        m.lossSum = o.loss_sum();
        m.correct = o.correct();
        m.counted = o.counted();
        m.computeMs = o.compute_ms();
        m.tensorsBlob = o.tensors_blob();
        m.weightsVersion = o.weights_version();
        m.memoryCap = std::max<int64_t>(0, o.memory_cap());
        m.earlyBytes = std::max<int64_t>(0, o.early_bytes());
        m.pairs = o.pairs();
        // Five figures where there are pairs (engine/training.h's PairFigures), else none.
        constexpr int kPairFigures = 5;
        if (o.pair_sums_size() != (m.pairs > 0 ? kPairFigures : 0) || m.pairs < 0 ||
            m.pairs > m.samples)
            return corrupt(QStringLiteral("a result has impossible preference figures"));
        m.pairSums.assign(o.pair_sums().begin(), o.pair_sums().end());
        if (m.samples < 0 || m.correct < 0 || m.counted < 0 || m.correct > m.counted ||
            !(m.computeMs >= 0))
            return corrupt(QStringLiteral("a result has impossible counts"));
        return Message(m);
    }
    case ::tandem::pb::Envelope::kControl: {
        Control m;
        switch (e.control().action()) {
        case ::tandem::pb::Control_Action_PAUSE:
            m.action = Control::Action::Pause;
            break;
        case ::tandem::pb::Control_Action_RESUME:
            m.action = Control::Action::Resume;
            break;
        case ::tandem::pb::Control_Action_STOP:
            m.action = Control::Action::Stop;
            break;
        default:
            m.action = Control::Action::None;
            break;
        }
        return Message(m);
    }
    case ::tandem::pb::Envelope::kBye:
        return Message(Bye{text(e.bye().reason()), e.bye().again()});
    case ::tandem::pb::Envelope::kPing:
        return Message(
            Ping{e.ping().nonce(), e.ping().echo_bytes(), uint32_t(e.ping().padding().size())});
    case ::tandem::pb::Envelope::kPong:
        return Message(Pong{e.pong().nonce(), uint32_t(e.pong().padding().size())});
    case ::tandem::pb::Envelope::kWorkError:
        return Message(WorkError{e.work_error().step(), text(e.work_error().message())});
    case ::tandem::pb::Envelope::kPairRequest: {
        const auto& o = e.pair_request();
        if (o.commitment().size() > kMaxPairBytes)
            return corrupt(QStringLiteral("a pairing commitment is too long"));
        return Message(PairRequest{QByteArray::fromStdString(o.commitment()),
                                   text(o.display_name()).left(128)});
    }
    case ::tandem::pb::Envelope::kPairNonce: {
        const auto& o = e.pair_nonce();
        if (o.nonce().size() > kMaxPairBytes)
            return corrupt(QStringLiteral("a pairing nonce is too long"));
        return Message(
            PairNonce{QByteArray::fromStdString(o.nonce()), text(o.display_name()).left(128)});
    }
    case ::tandem::pb::Envelope::kPairReveal: {
        if (e.pair_reveal().nonce().size() > kMaxPairBytes)
            return corrupt(QStringLiteral("a pairing nonce is too long"));
        return Message(PairReveal{QByteArray::fromStdString(e.pair_reveal().nonce())});
    }
    case ::tandem::pb::Envelope::kPairDecision:
        return Message(PairDecision{e.pair_decision().accepted()});
    case ::tandem::pb::Envelope::kInvite:
        if (e.invite().port() == 0 || e.invite().port() > 65535)
            return corrupt(QStringLiteral("an invitation without a valid port"));
        return Message(Invite{quint16(e.invite().port()), text(e.invite().run_id()).left(128)});
    case ::tandem::pb::Envelope::kBaseRequest:
        return Message(
            BaseRequest{text(e.base_request().base_hash()).left(128), e.base_request().part()});
    case ::tandem::pb::Envelope::kBasePart:
        return Message(BasePart{e.base_part().part(), e.base_part().blob()});
    case ::tandem::pb::Envelope::kUnpaired:
        return Message(Unpaired{});
    case ::tandem::pb::Envelope::kShardJoin:
        if (e.shard_join().token().size() > kMaxPairBytes)
            return corrupt(QStringLiteral("a run's token is too long"));
        return Message(ShardJoin{text(e.shard_join().run_id()).left(128),
                                 QByteArray::fromStdString(e.shard_join().token())});
    case ::tandem::pb::Envelope::kShardWelcome:
        return Message(ShardWelcome{});
    case ::tandem::pb::Envelope::kShardGrads:
        if (e.shard_grads().step() < 0)
            return corrupt(QStringLiteral("gradients for a step before the first"));
        return Message(ShardGrads{e.shard_grads().step(), e.shard_grads().blob()});
    case ::tandem::pb::Envelope::kShardWeights:
        if (e.shard_weights().step() < 0)
            return corrupt(QStringLiteral("weights for a step before the first"));
        return Message(ShardWeights{e.shard_weights().step(), e.shard_weights().blob()});
    case ::tandem::pb::Envelope::kShardSum: {
        const auto& o = e.shard_sum();
        if (o.step() < 0 || o.from() < 0 || o.to() <= o.from() || !std::isfinite(o.lr()) ||
            o.present().size() > size_t(o.to() - o.from()))
            return corrupt(QStringLiteral("a range's sums have an impossible step, span or "
                                          "learning rate"));
        return Message(ShardSum{o.step(), o.blob(), o.from(), o.to(), o.lr(),
                                QByteArray::fromStdString(o.present())});
    }
    case ::tandem::pb::Envelope::kShardSetup: {
        const auto& o = e.shard_setup();
        if (o.token().size() > kMaxPairBytes)
            return corrupt(QStringLiteral("a run's token is too long"));
        if (o.members_size() > kMaxShardMembers || o.ranges_size() > kMaxShardMembers)
            return corrupt(QStringLiteral("a sharded run lists too many machines"));
        ShardSetup m;
        m.runId = text(o.run_id()).left(128);
        m.token = QByteArray::fromStdString(o.token());
        for (const auto& p : o.members()) {
            if (p.port() > 65535)
                return corrupt(QStringLiteral("a sharded run names an impossible port"));
            m.members << ShardSetup::Peer{text(p.device_id()).left(128), text(p.host()).left(256),
                                          quint16(p.port()), p.holds_only()};
        }
        int64_t next = 0;
        for (const auto& r : o.ranges()) {
            // The ranges cover the values in order, each at least one value long.
            if (r.begin() != next || r.end() <= r.begin())
                return corrupt(QStringLiteral("a sharded run's ranges do not follow each other"));
            next = r.end();
            m.ranges << ShardSetup::Span{r.begin(), r.end(), text(r.owner()).left(128)};
        }
        m.firstStep = o.first_step();
        if (m.firstStep < 0)
            return corrupt(QStringLiteral("a sharded run starts before its first step"));
        m.mastersBlob = o.masters_blob();
        m.optimizerSteps = o.optimizer_steps();
        m.backup = o.backup();
        m.outerStep = o.outer_step();
        m.outerMomentum = o.outer_momentum();
        // At most a day, as the run's own worker timeout.
        if (o.link_timeout_ms() > 86400u * 1000u)
            return corrupt(QStringLiteral("a sharded run's link timeout is %1 ms; at most a day")
                               .arg(o.link_timeout_ms()));
        m.linkTimeoutMs = int(o.link_timeout_ms());
        m.probe = o.probe();
        m.fragments = std::max(1, int(o.fragments()));
        if (o.fragments() > 4096)
            return corrupt(QStringLiteral("a sharded run cut into %1 fragments; at most 4096")
                               .arg(o.fragments()));
        if (m.optimizerSteps < 0)
            return corrupt(
                QStringLiteral("a range's optimizer state claims a negative step count"));
        if (!(m.outerMomentum >= 0 && m.outerMomentum < 1))
            return corrupt(QStringLiteral("a sharded run's outer momentum is %1; it lies in [0, 1)")
                               .arg(m.outerMomentum));
        return Message(m);
    }
    case ::tandem::pb::Envelope::kShardReport: {
        const auto& o = e.shard_report();
        if (o.kind() < 1 || o.kind() > 6 || o.step() < 0)
            return corrupt(QStringLiteral("a shard report of no known kind, or for a step before "
                                          "the first"));
        return Message(ShardReport{ShardReport::Kind(int(o.kind())), o.step(),
                                   text(o.worker()).left(128), text(o.why()).left(1024), o.sent(),
                                   o.received()});
    }
    case ::tandem::pb::Envelope::kShardClose: {
        const auto& o = e.shard_close();
        if (o.step() < 0 || !std::isfinite(o.lr()) || o.counted_size() > kMaxShardMembers)
            return corrupt(QStringLiteral("a step's close has an impossible step, learning rate "
                                          "or list of workers"));
        ShardClose m;
        m.step = o.step();
        m.lr = o.lr();
        for (const auto& c : o.counted()) {
            if (!std::isfinite(c.weight()) || c.weight() < 0)
                return corrupt(QStringLiteral("a step's close weights a worker impossibly"));
            m.counted << std::pair{text(c.worker()).left(128), c.weight()};
        }
        return Message(m);
    }
    case ::tandem::pb::Envelope::kShardSave:
        return Message(ShardSave{});
    case ::tandem::pb::Envelope::kShardState:
        if (e.shard_state().optimizer_steps() < 0)
            return corrupt(
                QStringLiteral("a range's optimizer state claims a negative step count"));
        return Message(ShardState{e.shard_state().optimizer_steps(), e.shard_state().blob()});
    case ::tandem::pb::Envelope::BODY_NOT_SET:
        break;
    }
    return corrupt(QStringLiteral("an empty or unknown message"));
}

QByteArray encodeAnnouncement(const Announcement& a) {
    ::tandem::pb::Announcement o;
    o.set_protocol_version(a.protocolVersion);
    o.set_device_id(str(a.deviceId));
    o.set_display_name(str(a.displayName));
    o.set_os(str(a.os));
    o.set_app_version(str(a.appVersion));
    for (const DeviceInfo& d : a.devices)
        devToPb(d, o.add_devices());
    o.set_tcp_port(a.tcpPort);
    o.set_query(a.query);
    std::string out;
    o.SerializeToString(&out);
    return QByteArray("TDMA") + QByteArray(out.data(), qsizetype(out.size()));
}

Expected<Announcement> decodeAnnouncement(const QByteArray& datagram) {
    quietProtobuf();
    if (datagram.size() > kMaxAnnouncementBytes || !datagram.startsWith("TDMA"))
        return corrupt(QStringLiteral("not a Tandem announcement"));
    ::tandem::pb::Announcement o;
    if (!o.ParseFromArray(datagram.constData() + 4, int(datagram.size() - 4)))
        return corrupt(QStringLiteral("an announcement could not be parsed"));
    if (o.devices_size() > kMaxDevices || o.tcp_port() > 65535)
        return corrupt(QStringLiteral("an announcement has impossible fields"));
    Announcement a;
    a.protocolVersion = o.protocol_version();
    a.deviceId = text(o.device_id());
    a.displayName = text(o.display_name()).left(128);
    a.os = text(o.os()).left(128);
    a.appVersion = text(o.app_version()).left(64);
    for (const auto& d : o.devices())
        a.devices << devFromPb(d);
    a.tcpPort = quint16(o.tcp_port());
    a.query = o.query();
    return a;
}

QString messageName(const Message& m) {
    static const char* names[] = {
        "Hello",        "Reject",      "RunSpec",     "Ready",      "DataRequest",  "DataOffer",
        "Assign",       "Result",      "Control",     "Bye",        "Ping",         "Pong",
        "WorkError",    "PairRequest", "PairNonce",   "PairReveal", "PairDecision", "Invite",
        "BaseRequest",  "BasePart",    "Unpaired",    "ShardJoin",  "ShardWelcome", "ShardGrads",
        "ShardWeights", "ShardSetup",  "ShardReport", "ShardClose", "ShardSave",    "ShardState",
        "ShardSum"};
    static_assert(std::size(names) == std::variant_size_v<Message>, "a name for every message");
    return QLatin1String(names[m.index()]);
}

QString incompatibility(const QString& myApp, uint32_t peerProtocol, const QString& peerApp,
                        const QString& peerRole) {
    if (peerProtocol == kProtocolVersion)
        return {};
    const QString newer = peerProtocol > kProtocolVersion ? peerApp : myApp;
    return QStringLiteral("this machine runs Tandem %1 (protocol %2) and the %3 runs Tandem %4 "
                          "(protocol %5); they cannot work together. Install Tandem %6 or later "
                          "on both machines.")
        .arg(myApp)
        .arg(kProtocolVersion)
        .arg(peerRole, peerApp.isEmpty() ? QStringLiteral("?") : peerApp)
        .arg(peerProtocol)
        .arg(newer.isEmpty() ? QStringLiteral("?") : newer);
}

} // namespace tandem::wire
