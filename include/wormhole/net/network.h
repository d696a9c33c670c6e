// The packet-level network model's event side: it dispatches the kernel's events and acts on what the
// switch and NIC models decide on the fabric's state (packets on wires, PFC frames, flows' starts and
// ends, the CC). Semantics: docs/network-model.md; the pieces: docs/architecture.md.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "wormhole/config/sim_config.h"
#include "wormhole/core/interrupt.h"
#include "wormhole/core/kernel.h"
#include "wormhole/core/prefetch.h"
#include "wormhole/net/cc.h"
#include "wormhole/net/client_clock.h"
#include "wormhole/net/fabric.h"
#include "wormhole/net/pint.h"
#include "wormhole/net/flow.h"
#include "wormhole/net/flow_spec.h"
#include "wormhole/net/flow_table.h"
#include "wormhole/net/island.h"
#include "wormhole/net/nic_model.h"
#include "wormhole/net/port.h"
#include "wormhole/net/probe.h"
#include "wormhole/net/results.h"
#include "wormhole/net/run_ledger.h"
#include "wormhole/net/routing.h"
#include "wormhole/net/skip_hooks.h"
#include "wormhole/net/switch_model.h"
#include "wormhole/net/topology.h"

namespace wh {

/// Event kinds of the network model.
enum EventKind : uint16_t {
  kTxDone = 0,     ///< a port finished serializing its packet (owner: port)
  kArrive = 1,     ///< the head of a port's wire reaches the peer (owner: port)
  kWake = 2,       ///< host NIC pacing retry (owner: port; valid if its time is wake_at)
  kFlowStart = 3,  ///< start the flows of one start time (owner: global)
  kTimer = 4,      ///< timer slot `aux` of a flow: 0-2 CC, 3 RTO (owner: flow)
  kLinkDown = 5,   ///< LINK_DOWN (owner: global)
  kQpStart = 6,    ///< create the QP of flow `target` (scheduled by kFlowStart at its own instant)
  kInject = 7,     ///< create every flow injected so far (starting the replayed ones), then start flow `target` unless replayed (inject_flow)
  kClient = 8,     ///< an EventClient's event (target and aux are the client's)
  kBypass = 9,     ///< control packet `target` passing a frozen port reaches pool[target].in_port
  kHeld = 10,      ///< held packet slot `target` is delivered (valid if its time is the slot's due)
  kReplay = 11,    ///< the island hooks' replay slot `target` is due (IslandHooks::replay_due)
};

/// A packet crossing a cut link in a distributed run (partition/engine.h). The sending rank
/// transmits it as usual but, instead of putting it on its copy of `port`'s wire, ships it; the
/// receiving rank puts it on its copy with the same arrival time and cause, so the arrival event
/// gets the key it gets in one process (EventOrder::Portable). Plain bytes (sent with MPI).
struct CrossPacket {
  Time arrive = 0;   ///< ps: when the packet reaches the far end of `port`'s link
  Cause cause;       ///< the arrival event's cause (its transmission start)
  uint32_t port = 0; ///< the egress port it left from (global index); its peer is on the receiving rank
  uint32_t to_rank : 31;  ///< the rank of the peer's node
  uint32_t bypass : 1;    ///< it passed a frozen port (Network::bypass): a kBypass event, not the wire
  Packet pkt;
};

/// A data packet retransmitted after a timeout that a receiver acknowledged although it already held
/// the whole flow, on a rank that does not run the flow's sender (see Network::late_acks()).
struct LateAck {
  uint32_t flow = 0;
  Time at = 0;  ///< ps
};

/// Timer events carry (epoch & kTimerEpochMask) << 2 | slot in their aux field.
constexpr uint16_t kTimerEpochMask = 0x3fff;

/// The whole simulated network of one process: a Fabric (wired from the topology, its switches set up
/// from the settings; routes built on first use), the SwitchModel and NicModel deciding on it, and the
/// kernel whose events this class dispatches. Flows are added with add_flows() and start at their
/// start times; run() advances the kernel.
class Network final : public CcHost {
 public:
  Network(const Network&) = delete;  // its models refer to its fabric and flow table
  Network& operator=(const Network&) = delete;
  /// Keeps of `cfg` only its NetParams (with `cc`'s INT sizes). Throws InputError (naming the config
  /// file) if a link rate has no entry in the ECN maps, or LINK_DOWN names nodes that are not linked,
  /// and (naming the topology) if it has more ports than the event order can tell apart. With
  /// `ports_by_rank`, no port's state is made until set_distribution() makes the rank's own (a
  /// distributed run, or a network only partitioned); otherwise every port's is made now.
  Network(const SimConfig& cfg, const Topology& topo, std::unique_ptr<CongestionControl> cc, bool ports_by_rank = false);

  /// Registers flows (sorted by start time) and schedules their starts. Returns the first id.
  /// Throws InputError(`source`, flow line) for a flow whose hosts no path joins.
  uint32_t add_flows(const std::vector<FlowSpec>& flows, const std::string& source = "flows");
  /// Starts a flow at the current time from inside the run — what a workload driver does when a
  /// flow's predecessors finish (e.g. from NetObserver::flow_finished). Returns its id at once;
  /// the flow itself is created by an event of its own at this instant (spec.start is ignored).
  /// A flow whose hosts no path joins never gets a NIC and is reported as unfinished.
  uint32_t inject_flow(const FlowSpec& spec);
  /// Runs until the queue is empty, `until` (ps) is passed, or stop() is called.
  void run(Time until);
  void set_observer(NetObserver* o) { observer_ = o; }
  /// Hands each finished flow's record to `sink` when its QP state is released (nothing refers to the
  /// flow any more) and forgets its FlowInfo: the run keeps 16 B of it (FlowTable), and flow_info()
  /// and record() of it are no longer available. Flows still held at the end are read with record().
  /// Set before the run. In a distributed run (set_distribution first) a flow is forgotten only once
  /// its finish can no longer be undone and the controller's tick has let go of it
  /// (retire_committed()), on every rank; `sink` gets the records of the flows this rank sends.
  /// Throws std::logic_error when keeping finished state.
  void retire_flows_to(FlowSink* sink) {
    if (sink && keep_finished_)
      throw std::logic_error("retire_flows_to: a run keeping finished state keeps its flows");
    sink_ = sink;
  }
  /// Schedules EventClient::client_event(target, aux) at `at` (ps, >= client_now()). `on_time`:
  /// the event calls into the network (inject_flow) and is scheduled at least the client lookahead
  /// ahead (ClientClock::lookahead); in a distributed run it runs in the network's time on every
  /// rank, the client's other events run in the client's lagging time (run_client).
  void schedule_client(Time at, uint32_t target, uint16_t aux = 0, bool on_time = false);
  void set_client(EventClient* c) {
    client_ = c;
    sync_journaling();
  }
  /// The time of the client's running event (ps): the network's now, or in a distributed run the
  /// client's own clock while run_client() runs it.
  Time client_now() const {
    return clock_.running() ? clock_.now() : end_override_ >= 0 ? end_override_ : kernel_.now();
  }
  /// The client's own time in a distributed run (idle in one process).
  ClientClock& client_clock() { return clock_; }
  const ClientClock& client_clock() const { return clock_; }
  /// Events still pending: the kernel's and the client's; after a distributed run, over every rank.
  size_t pending_events() const {
    return pending_override_ != SIZE_MAX ? pending_override_ : kernel_.pending() + clock_.kernel().pending();
  }
  /// Ends the run after the running event (a workload's last GPU finished).
  void stop();
  /// Ends the run after the running event as signal `sig` (SIGINT, SIGTERM; > 0) asks: stop_signal()
  /// is then `sig`. A distributed run's engine calls it on every rank at the same window edge, once
  /// any rank has seen the signal: each rank's own progress tick does not stop it (ranks see a
  /// signal at different points).
  void stop_by_signal(int sig) { stopped_ = true, stop_signal_ = sig; }

  // --- observers that change nothing (monitors and the packet trace, src/io/monitors.cpp) ---
  /// Attaches `h` (nullptr: none); its first sample is due at `first` (ps). In a distributed run each
  /// rank's hook reads only the ports of its own nodes.
  void set_sampler(SampleHook* h, Time first) {
    sampler_ = h;
    sample_due_ = h ? first : kTimeMax;
  }
  /// Takes the samples due up to `t` (ps) now. Only where every event before `t` has run and none at or
  /// after it: a distributed run's window starts (partition/engine.h, WindowHook).
  void sample_until(Time t) {
    if (sampler_ && t >= sample_due_) sample_due_ = sampler_->sample(t);
  }
  /// Attaches `t` (nullptr: none) for the nodes it traces (PacketTrace::traces).
  void set_packet_trace(PacketTrace* t) {
    tracer_ = t;
    traced_.assign(fab_.nodes.size(), 0);
    if (t)
      for (uint32_t n = 0; n < fab_.nodes.size(); ++n) traced_[n] = t->traces(n);
  }

  // --- fast-forward support (skip.cpp; used by src/ffwd) ---
  /// Attaches a fast-forward controller (nullptr: packet mode, bit-identical to no controller).
  void set_skip_hooks(SkipHooks* h) { skip_ = h; }

  // Islands and replayed flows (src/net/island.cpp; the collective memo uses them).
  void set_island_hooks(IslandHooks* h) { islands_ = h; }
  /// Whether started flow `id` belongs to a collective the collective memo simulates exactly
  /// (IslandHooks::simulated_exactly): fast-forward and memoization leave it to packet simulation.
  bool simulated_exactly(uint32_t id) const { return islands_ && islands_->simulated_exactly(id); }
  /// The fast-forward controller's estimated error of what it credited flow `id`, bytes (0 without
  /// one; SkipHooks::estimated_error_bytes).
  double estimated_error_bytes(uint32_t id) const { return skip_ ? skip_->estimated_error_bytes(id) : 0.0; }
  /// The island (wormhole/net/island.h) of the switches (or direct host links) joining the host pairs
  /// (a, b), both ways, or false (in `why`, a reason) when a pair has no path or more than one, or an
  /// NVSwitch of the paths links to a switch off them. Fabric switches with links off the paths make it
  /// open (Island::open).
  bool find_island(const std::vector<std::pair<uint32_t, uint32_t>>& pairs, Island& out, std::string& why);
  /// Whether every port of the island is quiet now: no packet queued, on a wire or held, no
  /// transmission, pause, ingress byte, pacing retry, freeze, or QP with bytes to send; its switches'
  /// shared buffers empty (a sub-island's switches carry other traffic: their buffers are not looked at).
  bool island_quiet(const Island& is) const;
  /// The sub-island of `whole` (a closed island) that `hosts` (some of its hosts) use: its switches,
  /// the switch ports facing those hosts and their own island ports, in `whole`'s order; shared = true.
  Island sub_island(const Island& whole, const std::vector<uint32_t>& hosts) const;
  /// Switch `sw`'s highest shared-buffer use (bytes) since the last call; the peak restarts from the
  /// use now.
  uint64_t take_shared_peak(uint32_t sw);
  /// Whether a shared-buffer use of `bound` bytes at switch `sw`, plus one full packet (or the resume
  /// offset, if larger) of slack, stays below every one of its ports' PFC thresholds at that use
  /// (SwitchModel::pfc_threshold_at), and no port of it has a PAUSE pending or headroom in use: traffic
  /// using at most `bound` bytes of it never pauses nor drops, whatever else is in the buffer within
  /// that bound.
  bool below_pfc_thresholds(uint32_t sw, uint64_t bound) const;
  /// Which kinds of island traffic from host `a` to host `b` (or its ACKs) can enter: kIslandNvSwitch
  /// when some NIC `a` uses towards `b`, or `b` towards `a`, links to an NVSwitch, kIslandFabric when
  /// one links to another switch (0: direct host links only).
  uint8_t island_kinds(uint32_t a, uint32_t b);
  /// Appends to `key` what decides how traffic runs on the island from a quiet state: per switch its
  /// MMU sizes, per port its peer (as an island position), rate, delay, error rate, ECN and PFC
  /// settings, round-robin positions and finished QPs waiting to be compacted.
  void island_signature(const Island& is, std::string& key) const;
  /// The state a collective leaves behind on port `p` (see IslandPortState).
  IslandPortState port_state(uint32_t p) const;
  /// Puts on port `p` what a replayed collective would have left there: the switch's last class served
  /// `rr_last`, the NIC's round-robin position `rr_qp` and its finished QPs `qps` (flow ids), and adds
  /// the bytes it sent to the counters (`tx_delta` for INT, `sent_delta` for monitors).
  void set_port_state(uint32_t p, uint8_t rr_last, uint32_t rr_qp, std::vector<uint32_t> qps, uint64_t tx_delta,
                      uint64_t sent_delta);
  /// Injects flow `spec` as inject_flow() does (same id, source port and standalone FCT), but it is
  /// replayed: it never gets a QP or sends a packet; finish_replayed() ends it.
  uint32_t replay_flow(const FlowSpec& spec);
  /// Ends replayed flow `id` now, as the last ACK would: the observer hears of it. `skipped` (ps) and
  /// `skipped_bytes`: what fast-forward credited the flow it replays (a pattern recorded with skips),
  /// reported in its record.
  void finish_replayed(uint32_t id, Time skipped = 0, uint64_t skipped_bytes = 0);
  /// Schedules IslandHooks::replay_due(slot) at `at` (ps, >= now).
  /// Throws std::logic_error for a time in the past (a corrupt pattern).
  void schedule_replay(Time at, uint32_t slot) {
    if (at < kernel_.now()) throw std::logic_error("a replay scheduled in the past");
    kernel_.schedule(at, kReplay, slot);
  }
  /// Calls SkipHooks::on_tick() at `at` (ps, > now), before every event at that instant: a kernel
  /// barrier (Kernel::set_barrier), which a distributed run holds at a window edge.
  void schedule_skip_tick(Time at) { kernel_.set_barrier(at); }
  /// The egress ports flow `id`'s data packets leave from, in path order: its NIC, then each
  /// switch's ECMP choice (the same hash the switches use). Empty for a flow without a NIC.
  std::vector<uint32_t> data_path(uint32_t id) const;
  /// data_path() into `path` (cleared first): no allocation once `path` has grown.
  void data_path(uint32_t id, std::vector<uint32_t>& path) const;
  /// The switch egress ports flow `id`'s ACKs (and NACKs) leave from, in path order, with the hash
  /// the switches apply to the ACK's swapped header. At switches an ACK travels in its flow's own
  /// priority class, so it waits behind the data queued there: a flow's RTT, and a windowed flow's
  /// throughput, depend on these queues (the receiver's NIC, where ACKs have strict priority, is
  /// not among them). Empty for a flow without a route.
  std::vector<uint32_t> ack_path(uint32_t id) const;
  /// Whether `ports` can be frozen for `flows` (sorted): false if a data packet of another flow
  /// is queued on them or on their wires (a stale retransmission, a route LINK_DOWN changed).
  bool can_freeze(const std::vector<uint32_t>& ports, const std::vector<uint32_t>& flows) const;
  /// Moves a partition in time by `delta` ps (positive: a fast-forward begins; negative: a
  /// skip-back): every pending event of `ports` and of `flows`' timers moves by delta, as do the
  /// absolute times they keep (pacing, RTO, NACK timer, INT and send timestamps of their packets,
  /// HPCC's INT records, packets held for them), so that relative to each other nothing changes;
  /// the flows' clock offset grows by delta. Packets of `flows` elsewhere (ACKs on other links)
  /// are behind by delta and are held that long when they reach a host. The ports' queues and
  /// buffer occupancy stay as they are (frozen). With `frozen_until` > now the ports are frozen
  /// until then: control packets of other flows queued on them leave them (they pass at line rate
  /// without queueing; those already on a wire keep their arrival time), and later ones pass.
  /// Preconditions: every pending event moved stays >= now; `flows` (sorted) are the flows whose
  /// data paths use `ports`; can_freeze() when freezing.
  void shift(const std::vector<uint32_t>& ports, const std::vector<uint32_t>& flows, Time delta, Time frozen_until);
  /// Credits `bytes` of payload (whole packets) to flow `id` for `time` ps skipped: they are
  /// never sent. Negative values un-credit (skip-back). The flow's end must stay past snd_nxt.
  void credit(uint32_t id, int64_t bytes, Time time);
  /// Restores CC snapshot `s` (of another QP) into flow `id` as of time `at` (ps, ≥ now): a memo
  /// replay's end state. wh::restore_cc, except that HPCC-PINT keeps the flow's own ACK-sampling
  /// stream: flows replayed from one snapshot must not sample in lockstep.
  void restore_flow_cc(uint32_t id, const CcSnapshot& s, Time at) {
    Flow& f = flows_.state(id);
    const auto* pint = std::get_if<HpccPintState>(&f.cc);
    const Rng own = pint ? pint->rng : Rng();
    const bool had_pint = pint != nullptr;
    restore_cc(id, f, s, *this, at);
    if (auto* p = std::get_if<HpccPintState>(&f.cc); p && had_pint) p->rng = own;
  }
  /// The QP state of running flow `id`. Throws std::logic_error if the flow has none: not started yet,
  /// finished and released, or replayed by the collective memo (what outlives a flow is flow_info(),
  /// until it is retired to a FlowSink).
  const Flow& flow(uint32_t id) const {
    if (!flows_.live(id))
      throw std::logic_error("flow " + std::to_string(id) + " has no QP state (not started, released, or replayed)");
    return flows_.state(id);
  }
  /// Keeps every flow's QP state to the end of the run, for inspecting finished flows' final CC and
  /// sender state (tests, debugging); it costs 672 B a flow. Off: a finished flow's state is freed.
  /// A replayed flow has none to keep.
  void keep_finished_state(bool on) {
    if (on && sink_) throw std::logic_error("keep_finished_state: flows are retired to a FlowSink");
    keep_finished_ = on;
  }
  /// What the run keeps of flow `id` until its record goes out (FlowInfo). Throws std::logic_error for a
  /// retired flow (retire_flows_to).
  const FlowInfo& flow_info(uint32_t id) const {
    if (flows_.retired(id)) throw std::logic_error("flow " + std::to_string(id) + " was retired: its record went out");
    return flows_.info(id);
  }
  /// Whether flow `id` has finished (retired flows have).
  bool flow_finished(uint32_t id) const { return flows_.finished(id); }
  /// Whether flow `id`'s record went to the FlowSink and the network forgot it (retire_flows_to).
  bool flow_retired(uint32_t id) const { return flows_.retired(id); }
  /// Whether flow `id` has QP state now (started, and not released).
  bool flow_live(uint32_t id) const { return flows_.live(id); }
  /// Flows whose FlowInfo is held now (created and not retired).
  size_t held_flows() const { return flows_.held_count(); }
  /// Chunks of 2^14 flow-table entries given back so far (release_retired_entries).
  size_t released_entry_chunks() const { return flows_.released_entry_chunks(); }
  /// Flows created so far (ids 0 .. flow_count() - 1), and their bytes.
  size_t flow_count() const { return flows_.size(); }
  uint64_t flow_bytes() const { return flows_.total_bytes(); }
  /// The running flows' bytes, for the progress line's share done (a scan of the running flows: call
  /// it every few seconds, not per event). A flow's bytes done are those Wormhole credited it (skipped or
  /// replayed: never sent, known on every rank) and those acknowledged of the rest of its stream (snd_una,
  /// known on its sender's rank only).
  struct RunningBytes {
    uint64_t credited = 0;     ///< bytes credited to the running flows (started, not finished), all ranks'
    uint64_t stream = 0;       ///< bytes of their streams (size less credited), all ranks'
    uint64_t local_stream = 0; ///< of those, the streams of the flows whose sender this process runs (all in one process)
    uint64_t local_acked = 0;  ///< bytes acknowledged so far of those streams (snd_una)
    /// Bytes done of the running flows: exact in one process; over ranks, the acknowledged share of the
    /// local flows' streams applied to the others' (0 while this rank runs none of them).
    double done() const {
      return double(credited) +
             (local_stream ? double(local_acked) * double(stream) / double(local_stream) : 0.0);
    }
  };
  /// Over the running flows with ids that `select` accepts (all of them when it is empty). `select`
  /// must not add or release flows.
  RunningBytes running_bytes(const std::function<bool(uint32_t)>& select = {}) const {
    RunningBytes r;
    flows_.for_each_live([&](uint32_t id, const Flow& f) {
      if (flows_.finished(id) || (select && !select(id))) return;
      const uint64_t stream = f.size - std::min(f.size, f.skipped_bytes);
      r.credited += f.size - stream, r.stream += stream;
      if (owns_node(f.src)) r.local_stream += stream, r.local_acked += std::min(f.snd_una, stream);
    });
    return r;
  }
  /// Flows holding QP state now, and at most at once so far.
  size_t live_flows() const { return flows_.live_count(); }
  size_t peak_live_flows() const { return flows_.peak_live(); }
  /// The parameters the model reads (taken from the settings at construction).
  const NetParams& params() const { return fab_.params; }
  /// The run's congestion control (one instance serves every flow).
  const CongestionControl& cc() const { return *cc_; }
  /// The time LINK_DOWN happens (ps), or -1 if none is configured or it is past.
  Time link_down_time() const;
  /// The start time of the next flow added with add_flows that has not started yet, or -1.
  Time next_flow_start() const;
  /// Control packets that passed a frozen port, and packets held for a frozen flow, so far.
  uint64_t packets_bypassed() const { return ledger_.bypassed; }
  uint64_t packets_held() const { return ledger_.held; }
  /// Ports a freeze has emptied of other flows' packets so far (shift). Every rank of a distributed run
  /// empties every port of a partition it freezes, its own or not, so the count numbers the work done
  /// at a barrier alike on every rank: the packet trace orders a barrier's records by it.
  uint64_t ports_evacuated() const { return evacuated_; }
  /// Events a fast-forward left behind, found stale and dropped when their time came.
  uint64_t events_discarded() const { return ledger_.discarded; }

  // --- distributed runs (partition/engine.h) ---
  /// Makes this network one rank's share of a distributed run: it executes only the events of the
  /// nodes with node_rank[n] == rank (ports by their node; an arrival by the receiving node; a
  /// flow's timers and QP by its source, the receiver's ACK NIC by its destination); flow starts
  /// run everywhere. Packets sent over a cut link go to outbox() instead of the local wire. Makes the
  /// state of the rank's own ports (all ports are made already unless the network was built with
  /// `ports_by_rank`). Results are those of one process in EventOrder::Portable, which this sets.
  /// Throws InputError (naming the config) for what a distributed run cannot do yet: LINK_DOWN
  /// (it rewires every rank's QPs in one event), and an observer/Wormhole are checked by the engine.
  void set_distribution(std::vector<uint32_t> node_rank, uint32_t rank);
  /// Whether this rank runs node `n` (always true in one process).
  bool owns_node(uint32_t n) const { return node_rank_.empty() || node_rank_[n] == rank_; }
  /// Whether this network is one rank's share of a distributed run (set_distribution).
  bool distributed() const { return !node_rank_.empty(); }
  /// The ledger journals when a lagging client may stop inside a window: a distributed run with a client.
  void sync_journaling() { ledger_.set_journaling(client_ && distributed()); }
  /// Packets sent over cut links since the last take (in execution order).
  std::vector<CrossPacket>& outbox() { return outbox_; }
  /// Queues a packet another rank sent over a cut link onto the local copy of its wire.
  /// Precondition: c.arrive >= now.
  void accept(const CrossPacket& c);
  /// Flows this rank finished since the last take, with the events that finished them (the
  /// observer hears of them only through deliver(), on every rank, in the run's order).
  std::vector<Completion>& completions() { return completions_; }
  /// Hands every rank's completions of a window (sorted by Completion::before) to the observer: at
  /// once, or with a client, as events of the client's time that run_client() delivers in order.
  void deliver(const std::vector<Completion>& all);
  /// Runs the client's events (and delivered completions) up to `until` (ps) in the client's own
  /// time, which lags the network's by up to one window: the client reacts to a completion with
  /// events in its own time, and reaches the network only through on-time events at least the
  /// client lookahead later. Returns false once the client called stop().
  /// On-time client events scheduled less than ClientClock::lookahead() ahead throw std::logic_error.
  bool run_client(Time until);
  /// Starts a window: what truncate_after_stop() may have to undo is recorded from here.
  void begin_window();
  /// Gives back what only running needs, once a finished run's results are gathered: the flow table's
  /// storage (FlowTable::release_all: flow_count() stays, every flow reads as finished; flow(id),
  /// flow_info(id), record(id) and data_path(id) may not be called, and a flow added throws
  /// std::logic_error) and the pending events (Kernel::release_queue). The network may not run again.
  /// A distributed rank calls it before writing the results, so that their buffers take the place of
  /// the run's state rather than adding to it.
  void release_run_state() {
    flows_.release_all();
    kernel_.release_queue();
  }
  /// After a window the client ran through without stopping (its finishes stand): retires, with a
  /// FlowSink (retire_flows_to), the flows whose completions were delivered before it and, with a
  /// skip controller, whose finish a tick has since handled; a flow still holding QP state waits.
  /// Throws what the FlowSink throws (OutputError: its file cannot be written).
  void retire_committed();
  /// Gives back the flow-table entries of chunks whose flows were all retired and that no pending
  /// event (a stale timer) or allocated packet (a late duplicate, an ACK) refers to any more
  /// (FlowTable::release_entries): 16 B a flow, so a run's memory follows its running flows, not
  /// every flow it made. In a distributed run `agree` makes every rank's verdict one (by chunk, 1 =
  /// may go; an MPI_MIN over the ranks), since a packet another rank holds may still cross a cut
  /// link; call it at a window edge, on every rank (release_entries_due()). One process calls it on
  /// its own every 65,536 events once a few chunks wait (on_tick).
  void release_retired_entries(const std::function<void(std::vector<uint8_t>&)>& agree = {});
  /// Whether a distributed run's window edge should call release_retired_entries(): the same answer
  /// on every rank (it counts the finishes every rank hears alike, deliver()); true once per
  /// release period of finishes (2^17 unless set_release_period() said otherwise).
  bool release_entries_due();
  /// Finishes between two release_entries_due() (> 0; tests make it small).
  void set_release_period(uint64_t finishes) { release_period_ = finishes; }
  /// Undoes what this rank counted after the client's stop (ClientClock::stop_event(); precondition: the
  /// client stopped) in its last window, which the network ran before the client stopped: events, ECN
  /// marks, drops, RTOs, flows finished or injected after it, the peak queue; the run's end becomes the
  /// stopping event's time.
  void truncate_after_stop();
  /// After a distributed run: the run's last event time (ps, over all ranks and the client) and the
  /// events pending anywhere, as one process would see them at its end.
  void set_run_end(Time last_event, size_t pending) { end_override_ = last_event, pending_override_ = pending; }
  /// ps: the time of the last event this rank ran, network or client (a distributed run's end is
  /// the latest over the ranks).
  Time last_event_time() const { return std::max(kernel_.now(), clock_.now()); }
  /// Receiver side: retransmitted duplicates of complete flows acknowledged on this rank while the
  /// flow's sender runs on another. One process drops them if the sender has finished by then; a
  /// distributed run cannot know that in time, so the caller compares them with the finish times
  /// and reports any that differ (none in a lossless run: only RTO retransmissions make them).
  const std::vector<LateAck>& late_acks() const { return late_acks_; }
  /// The event at which the peak switch queue (RunStats::max_queue_bytes) was first reached.
  const Event& max_queue_event() const { return ledger_.max_queue_event; }

  // --- results and inspection ---
  /// Flow `id`'s identity and outcome (from its state while it has one).
  FlowRecord record(uint32_t id) const;
  RunStats stats() const;
  /// The set-up warning of switch ports whose PFC headroom cannot make PFC lossless (Fabric::headroom_warning).
  std::string headroom_warning() const { return fab_.headroom_warning(); }
  Kernel& kernel() { return kernel_; }
  const Kernel& kernel() const { return kernel_; }
  /// The ports' state: every port in one process; in a distributed run a rank's own (the far ends of
  /// its cut links are cut wires: fabric().cut_wires).
  const PortArray& ports() const { return fab_.ports; }
  /// How every port is wired.
  const std::vector<PortLink>& links() const { return fab_.links; }
  const std::vector<Node>& nodes() const { return fab_.nodes; }
  /// The fabric's data (nodes, ports, routes, parameters) and the switch model acting on it.
  const Fabric& fabric() const { return fab_; }
  /// The network's packets (tests seed it with a packet still on its way).
  PacketPool& packet_pool() { return fab_.pool; }
  const SwitchModel& switch_model() const { return switch_; }
  /// The routes (built on first use: by add_flows, run or this call).
  Routing& routing();
  uint64_t flows_finished() const { return ledger_.flows_finished; }

  // --- CcHost ---
  Time now() const override { return kernel_.now(); }
  void set_timer(uint32_t id, Flow& f, int slot, Time at) override;
  void set_rate(uint32_t id, Flow& f, uint64_t rate_bps, bool retime) override;

  // --- kernel handler interface ---
  void handle(const Event& e);
  /// Starts loading what the next few events of the bucket being drained will read, so that their
  /// cache misses overlap this event's work (at 1,024 GPUs the ports and packets are tens of MB and a
  /// hop's loads would otherwise miss one after another): a pipeline over EventQueue::ahead, each
  /// stage reading only what the stage before it fetched. Only a hint: no state changes.
  void prefetch(const EventQueue& q) const;
  void on_tick();
  /// False after stop(), or once a SIGINT / SIGTERM has been seen (wormhole/core/interrupt.h): the run
  /// ends after this event.
  bool keep_running() const { return !stopped_; }
  /// Whether a SIGINT / SIGTERM ended the run before its end.
  bool stopped_by_signal() const { return stop_signal_ != 0; }
  /// The signal that stopped the run before its end (0: none): on every rank of a distributed run alike.
  int stop_signal() const { return stop_signal_; }
  /// The kernel's barrier: the fast-forward controller's tick.
  void at_barrier() {
    if (kernel_.now() >= sample_due_) sample_due_ = sampler_->sample(kernel_.now());
    if (!skip_) return;
    // The controller lets go of the flows that finished before its tick (not of any finishing during it).
    tick_done_.swap(finished_held_);
    skip_->on_tick();
    for (uint32_t id : tick_done_) release_done_flow(id);
    tick_done_.clear();
    if (sink_ && distributed()) {  // the controller has let go of the flows finished in committed windows
      ticked_.insert(ticked_.end(), committed_.begin(), committed_.end());
      committed_.clear();
    }
  }


 private:
  // flows (network.cpp, host.cpp)
  void start_flow(uint32_t id);
  /// A finished flow's state is released now, or, with a skip controller, after its next tick
  /// (at_barrier), which is when it stops referring to the flow.
  void finished_with(uint32_t id) {
    if (keep_finished_) return;
    if (skip_) finished_held_.push_back(id);
    else release_done_flow(id);
  }
  /// Releases finished flow `id`'s state, or keeps it until its NIC compacts it (NicModel::hold_until_dropped).
  void release_done_flow(uint32_t id);
  /// Frees finished flow `id`'s QP state; with a FlowSink, hands over its record and retires it.
  void release_state(uint32_t id) {
    flows_.release(id);
    retire_to_sink(id);
  }
  /// With a FlowSink, hands finished flow `id`'s record over and retires it (precondition: !live(id)).
  /// A distributed run retires its flows at window edges instead (retire_committed()).
  void retire_to_sink(uint32_t id) {
    if (sink_ && node_rank_.empty()) retire_to_sink(id, record(id));
  }
  /// The same with its record `r` = record(id) at hand.
  void retire_to_sink(uint32_t id, const FlowRecord& r) {
    if (sink_ && node_rank_.empty()) {
      sink_->flow_retired(r);
      flows_.retire(id);
    }
  }
  /// The fields data_path() and ack_path() need, from the state while the flow has one.
  struct PathView {
    uint32_t src, dst, nic, rx_nic;
    uint16_t sport, dport;
  };
  PathView path_view(uint32_t id) const;
  void start_replayed(uint32_t id);  ///< a replayed flow's start: its NICs and bound in its FlowInfo, no QP state
  /// What every flow's start sets: started, its NICs, line rate and base RTT; returns its path's metrics.
  const PathMetrics& begin_flow(uint32_t id, Flow& f);
  uint32_t inject(const FlowSpec& spec, bool replayed);  ///< inject_flow / replay_flow
  FlowInfo make_flow(const FlowSpec& s);  ///< identity fields and the reference's source port
  bool set_ideal_fct(FlowInfo& f);        ///< standalone FCT; false if no path joins the hosts
  /// The true ideal FCT of flow `id` (ps) on its path (NICs assigned): docs/network-model.md §5.1.
  Time lower_bound_fct(uint32_t id) const;
  void materialize_injected();
  void schedule_next_start();  ///< the start event of the next pending start time, if none is pending
  void link_down();
  bool owns(const Event& e) const;           ///< distributed: does this rank execute `e`?
  /// Distributed: the cut wire on which the packets port `sender` transmits arrive here, where `sender`
  /// is another rank's and its link's near end this rank's; nullptr otherwise (in one process always).
  CutWire* inbound_cut_wire(uint32_t sender) {
    const uint32_t slot = cut_wire_slot(sender);
    return slot == UINT32_MAX ? nullptr : &fab_.cut_wires[slot];
  }
  const CutWire* inbound_cut_wire(uint32_t sender) const {
    const uint32_t slot = cut_wire_slot(sender);
    return slot == UINT32_MAX ? nullptr : &fab_.cut_wires[slot];
  }
  uint32_t cut_wire_slot(uint32_t sender) const {
    if (node_rank_.empty() || node_rank_[fab_.links[sender].node] == rank_) return UINT32_MAX;
    const uint32_t near = fab_.links[sender].peer;
    return node_rank_[fab_.links[near].node] == rank_ ? fab_.ports[near].cut_wire : UINT32_MAX;
  }
  bool counted_elsewhere(const Event& e) const;  ///< distributed: run here but counted by another rank
  // links (network.cpp)
  void transmit(uint32_t port, uint32_t pkt);
  void on_arrive(uint32_t port);
  void on_arrive_cut(CutWire& w);  ///< on_arrive for a cut wire here (distributed run)
  /// Packet `pkt` reaches `port`; `checked`: it passed the link's loss draw already (released
  /// after waiting for a pull-back).
  void receive(uint32_t port, uint32_t pkt, bool checked = false);
  void handle_pfc_frame(uint32_t port, const Packet& p);
  /// Keeps the port's PFC-paused time (Port::paused_total) after its paused classes changed.
  void note_paused(uint32_t port);
  using DropCause = RunLedger::DropCause;
  static constexpr DropCause kDropBuffer = RunLedger::kDropBuffer, kDropLoss = RunLedger::kDropLoss,
                             kDropLinkDown = RunLedger::kDropLinkDown;
  /// Drops packet `pkt` at `port` (UINT32_MAX: unknown) for `cause`.
  void drop(uint32_t pkt, DropCause cause = kDropLinkDown, uint32_t port = UINT32_MAX) {
    if (tracer_ && port != UINT32_MAX) trace(TraceEvent::Drop, port, pkt, 0, cause);
    fab_.pool.release(pkt);
    ledger_.drop(cause);
  }
  /// The packet trace's event of `pkt` at `port`, if its node is traced.
  void trace(TraceEvent ev, uint32_t port, uint32_t pkt, uint64_t qlen, uint8_t cause = 0) {
    if (traced_[fab_.ports[port].node]) tracer_->event(kernel_.now(), ev, port, fab_.pool[pkt], qlen, cause);
  }
  // switches (switch.cpp)
  void switch_receive(uint32_t in_port, uint32_t pkt);
  void switch_send(uint32_t port);
  /// A packet was queued on switch port `port`: send now if idle, else make sure it is woken.
  void kick(uint32_t port);
  /// Returns a departing (or dropped) packet's bytes to its ingress accounting; may send RESUME.
  void release_ingress(uint32_t pkt, uint32_t cls);
  void send_pfc(uint32_t in_port, uint32_t cls, bool pause);
  // hosts (host.cpp)
  void nic_send(uint32_t port);
  void host_receive(uint32_t port, uint32_t pkt);
  void receive_data(uint32_t port, uint32_t pkt);
  void receive_ack(uint32_t pkt);
  void flow_done(uint32_t id);
  void on_timer(uint32_t id, int slot);
  void on_rto(uint32_t id);
  // fast-forward (skip.cpp)
  static uint16_t timer_aux(const Flow& f, int slot) {
    return static_cast<uint16_t>(((f.epoch & kTimerEpochMask) << 2) | slot);
  }
  static int timer_slot(uint16_t aux) { return aux & 3; }
  static uint16_t timer_epoch(uint16_t aux) { return aux >> 2; }
  /// Sends control packet `pkt` past frozen port `port` without touching its queues: it reaches the
  /// peer after the serialization of the `ahead` bytes queued before it in its class (the frozen
  /// partition's standing queue, which an ACK of another flow waits behind in packet mode: a
  /// windowed flow's throughput depends on it), its own, and the link delay.
  void bypass(uint32_t port, uint32_t pkt, uint64_t ahead);
  /// Holds `pkt` (arriving at `port` now, a port of a switch if `at_switch`) if its flow's clock
  /// moved since the packet was last in step with it (checked at hosts, and at switches while a
  /// partition is frozen); returns whether it did.
  bool hold_if_owed(uint32_t port, uint32_t pkt, bool at_switch);
  /// An interrupt: data packet or PFC frame `pkt`, arriving at `port` now, needs `frozen` (a frozen
  /// port). Tells the controller (SkipHooks::touched) and holds the packet until the partition is
  /// pulled back at the controller's next tick (the kernel barrier) or its skip ends, whichever is
  /// first; it then arrives at `port` as if just received. Decisions at ticks only are what lets
  /// a partition spanning ranks be pulled back on every rank at once (partition/README.md).
  void hold_for_pull_back(uint32_t port, uint32_t pkt, uint32_t frozen);
  uint32_t hold(uint32_t port, uint32_t pkt, Time due, bool interrupt);  ///< a held slot, its kHeld scheduled
  /// `c` with packet `pkt`'s identity (flow, seq, type, arrival port; a PFC frame's port and class)
  /// mixed into its parent in portable order: the cause of an event owned by a rank-local slot
  /// (kHeld, kBypass), which must not tie with another's key.
  Cause packet_cause(Cause c, uint32_t pkt) const;
  void deliver_held(uint32_t slot, Time at, uint16_t gen);
  /// Moves the packets of `port` that do not belong to the flows `members` (sorted) off it.
  void evacuate(uint32_t port, const std::vector<uint32_t>& members);
  /// The packets on `wire` (toward port `receiver`) of flows not among `members` (sorted) leave it and
  /// arrive when they would have.
  void evacuate_wire(Ring<WireSlot>& wire, uint32_t receiver, const std::vector<uint32_t>& members);
  /// shift() for a cut wire here, whose sending port is another rank's: its epoch, packets and arrival.
  void shift_cut_wire(CutWire& w, const std::vector<uint32_t>& flows, Time delta, bool freezing);

  Kernel kernel_;
  std::unique_ptr<CongestionControl> cc_;
  Fabric fab_;  // nodes, ports, routes, packets, parameters
  FlowTable flows_;
  // release_retired_entries(): one process scans once this many chunks wait (a scan reads every
  // pending event and packet); a distributed run at the first edge after each release period of
  // finishes heard.
  static constexpr size_t kReleaseBatch = 8;
  size_t release_scan_at_ = kReleaseBatch;
  uint64_t release_period_ = uint64_t{1} << 17, finishes_heard_ = 0, release_due_seen_ = 0;
  SwitchModel switch_;
  NicModel nic_;
  std::vector<uint32_t> nic_dropped_;    // nic_send: finished QPs the NIC let go of
  bool keep_finished_ = false;
  std::vector<uint32_t> finished_held_;  // finished flows whose state waits for the controller's tick
  std::vector<uint32_t> tick_done_;      // at_barrier: those the running tick lets go of
  std::vector<uint32_t> start_order_;   // flow ids in start-time order (pending starts)
  size_t next_start_ = 0;
  std::vector<FlowSpec> injected_;  // flows injected during the current instant, not yet created
  bool start_pending_ = false;
  NetObserver* observer_ = nullptr;
  FlowSink* sink_ = nullptr;
  EventClient* client_ = nullptr;
  bool stopped_ = false;
  int stop_signal_ = 0;  // the signal that set stopped_ (0: none)
  RunLedger ledger_{kernel_};  // the run's counts; journaled in a distributed run with a client
  std::unordered_map<uint64_t, uint32_t> sport_next_;  // (src << 32 | dst) -> next source port
  // distributed run
  std::vector<uint32_t> node_rank_;  // empty: one process
  uint32_t rank_ = 0;
  std::vector<CrossPacket> outbox_;
  std::vector<LateAck> late_acks_;
  std::vector<Completion> completions_;
  // Flows to retire (with a FlowSink), and their finishes (ps): delivered since the last committed
  // window; committed, waiting for the controller's tick; ticked, to retire at the next commit.
  struct Done {
    uint32_t id;
    Time finish;
  };
  std::vector<Done> delivered_, committed_, ticked_;
  ClientClock clock_;  // the client's lagging time (distributed run with a client)
  struct CreditUndo {
    uint32_t id;
    int64_t bytes;
    Time time;
  };
  std::vector<CreditUndo> credit_undo_;  // the window's fast-forward credits (Network::credit)
  void notify_flow_started(uint32_t id);  // SkipHooks::flow_started, marked in the ledger's journal
  Time end_override_ = -1;
  size_t pending_override_ = SIZE_MAX;
  // monitors and the packet trace
  SampleHook* sampler_ = nullptr;
  Time sample_due_ = kTimeMax;  // the sampler's next instant
  PacketTrace* tracer_ = nullptr;
  std::vector<uint8_t> traced_;  // by node
  // fast-forward
  SkipHooks* skip_ = nullptr;
  IslandHooks* islands_ = nullptr;
  // What a replayed flow of one (src, dst, size) gets alike (start_replayed): its true ideal FCT (ps)
  // and, where no hash of its ports chooses them (one NIC each way), its NICs.
  struct ReplayPair {
    Time min_fct = 0;
    uint32_t nic = UINT32_MAX, rx_nic = UINT32_MAX;
    bool fixed_nics = false;
  };
  std::map<std::pair<uint64_t, uint64_t>, ReplayPair> replay_pairs_;  // ((src, dst), size) ->
  std::vector<uint8_t> replay_injected_;  // per pending injected flow: replayed (1) or not (0)
  Time freeze_horizon_ = 0;  // no port is frozen at or after this time (ps)
  bool shifted_ = false;     // some partition has moved: packets may be behind their flow's clock
  struct Held {
    uint32_t pkt = 0, port = 0;
    Time arrived = 0, due = -1;  // due -1: free slot
    uint16_t gen = 0;            // carried by its kHeld event: re-timing leaves the old one stale
    bool interrupt = false;      // an interrupt waiting for its pull-back (its clock is not the partition's)
    Cause cause;                 // of its kHeld event: a re-timing keeps it (moved), so its key is rank-independent
    // Its partition's clock moved by delta ps. `arrived` stays: at delivery the packet's times move
    // by due - arrived, the whole hold, this shift included.
    void shift_times(Time delta) {
      due += delta;
      cause.origin += delta;
    }
  };
  static_assert(sizeof(Held) == 56, "a Held field was added or removed: decide whether Held::shift_times() moves it");
  std::vector<Held> held_;
  uint64_t evacuated_ = 0;  // evacuate() calls
  std::vector<uint32_t> free_held_;
};

static_assert(PrefetchingHandler<Network>, "the kernel would not call Network::prefetch");

// Inline: the kernel's loop calls it per event. Each stage reads only lines that the stage before it
// fetched for the same event, one event earlier, so that its own loads do not miss. (A fourth stage
// for the packet at the head of a switch's queue, measured at 1,024 GPUs, gained nothing: the work of
// the extra stages ate what the switch saved.)
inline void Network::prefetch(const EventQueue& q) const {
  const auto line = [](const void* base, size_t offset = 0) { prefetch_line(static_cast<const char*>(base) + offset); };
  const size_t ports = fab_.ports.size();
  // Two events ahead: the target port's first line, and its wire (arrival) or its queues (end of
  // transmission).
  if (const Event* e = q.ahead(2); e && e->target < ports) {
    const Port* p = fab_.ports.address(e->target);
    if (e->kind == kArrive) {
      line(p);
      line(p, offsetof(Port, wire));
    } else if (e->kind == kTxDone) {
      line(p);
      line(p, offsetof(Port, queue_bytes));
      line(p, offsetof(Port, queue));
    }
  }
  // One ahead: an arrival's wire slot, and the port that receives the packet.
  if (const Event* e = q.ahead(1); e && e->kind == kArrive && e->target < ports) {
    const Port* p = fab_.ports.address(e->target);
    if (!p->wire.empty()) line(&p->wire.front().pkt);  // a 40-B slot's index may sit in the next line
    if (p->peer < ports) {
      const Port* r = fab_.ports.address(p->peer);
      line(r);
      line(r, offsetof(Port, error_rate));
    }
  }
  // The next event: the arriving packet.
  if (const Event* e = q.ahead(0); e && e->kind == kArrive && e->target < ports) {
    const Port* p = fab_.ports.address(e->target);
    if (!p->wire.empty() && p->wire.front().pkt < fab_.pool.capacity()) line(fab_.pool.address(p->wire.front().pkt));
  }
}

}  // namespace wh
