// The Wormhole fast-forward controller: network partitions, rate-based steady-state detection
// and fast-forwarding with skip-back (the Wormhole paper: partitions, steady-state detection and fast-forwarding).
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "wormhole/core/chunked.h"
#include "wormhole/ffwd/coupling.h"
#include "wormhole/ffwd/partitions.h"
#include "wormhole/ffwd/period_observer.h"
#include "wormhole/ffwd/rate_window.h"
#include "wormhole/config/wormhole_settings.h"
#include "wormhole/ffwd/skip_stats.h"
#include "wormhole/ffwd/verify.h"
#include "wormhole/net/network.h"

namespace wh {

/// What the ranks of a distributed run combine at a tick (partition/engine.h implements it with
/// MPI collectives). Every rank calls the same methods in the same order with vectors of the same
/// length (the partitions are alike everywhere), so each call is one collective.
class TickExchange {
 public:
  virtual ~TickExchange() = default;
  /// Partition ids: every rank's appended to `pids` (any order; the caller sorts).
  virtual void merge(std::vector<uint32_t>& pids) = 0;
  /// Element-wise sum over ranks; each value is measured by one rank, the others give 0, so the
  /// sum is that value exactly.
  virtual void sum(std::span<double> v) = 0;
  /// sum() over rows of figures, e.g. one row per flow: `Row` is a struct whose members are all
  /// double (named figures instead of offsets into a flat vector).
  template <class Row>
  void sum_rows(std::vector<Row>& rows) {
    static_assert(std::is_trivially_copyable_v<Row> && sizeof(Row) % sizeof(double) == 0,
                  "a row of figures is a struct of doubles");
    std::vector<double> flat(rows.size() * (sizeof(Row) / sizeof(double)));
    if (flat.empty()) return;
    std::memcpy(flat.data(), rows.data(), flat.size() * sizeof(double));
    sum(flat);
    std::memcpy(static_cast<void*>(rows.data()), flat.data(), flat.size() * sizeof(double));
  }
  /// Element-wise AND over ranks (1/0).
  virtual void all(std::vector<uint8_t>& v) = 0;
  /// Every rank's bytes, concatenated in rank order.
  virtual void gather(std::vector<uint8_t>& bytes) = 0;
};

/// Attaches itself to `net` (Network::set_skip_hooks) and detaches on destruction.
///
/// Partitions (PartitionSet) are the connected components of active flows over the egress ports
/// of their data paths and the switch egress ports their ACKs take where some active flow's data
/// leaves (QueueCoupling); NACKs, CNPs and PFC frames do not join them. Every flow's CC rate
/// is sampled every `sample_interval` (lazily: a rate holds until the CC changes it, so a run of
/// equal samples costs O(1)); any membership change resets the partition's windows. A partition is
/// first checked after its line-rate window (line_rate_window_samples of its flows: their own time
/// scale, at most the setting's l), then at every sample interval — or, while a flow's window cannot
/// yet be judged (below line rate and not full, see window_samples), when it can —
/// on oneTBB threads (the outcome depends on nothing but the samples); a partition whose flows are all steady is
/// fast-forwarded by ΔT = the time to the earliest known interrupt: the next flow start of the
/// flow file, LINK_DOWN, the end of the run, and each flow's estimated completion less a guard of
/// one base RTT at its rate plus one packet, so that its end is simulated packet by packet.
/// Each flow is credited whole packets of goodput R̂ × ΔT, R̂ = payload bytes acknowledged since a
/// checkpoint half to three quarters of the partition's line-rate window ago / the time between the ACKs that bound them (no
/// calibration factor as in the paper's artifact: the goodput already excludes headers, ACK
/// interleaving and pauses). An interrupt nobody announced pulls the partition back and un-credits
/// the difference: a flow started by a dependency at once (every rank of a distributed run starts
/// every flow), a data packet or PFC frame reaching a frozen port at the next tick (the packet waits
/// for it, Network::hold_for_pull_back; at most one sample interval).
///
/// Ticks are kernel barriers at multiples of `sample_interval`, before every event of that instant,
/// and flows that finished since the last tick leave their partitions at it. So every decision
/// falls on an event every rank runs, or on a tick, which a distributed run holds at a window edge
/// with the ranks' flow data exchanged there (partition/README.md): the outcome does not depend
/// on the rank count.
///
/// With a PeriodObserver that finds replays (the memoizer), a partition whose period just started
/// is looked up at the next tick (on oneTBB threads from parallel_min_flows flows); a hit is replayed as a skip of the
/// period's remaining duration crediting its recorded bytes, after which the flows' CC states are
/// those recorded at convergence and the partition is fast-forwarded at once with the recorded
/// goodput, as if it had been found steady. A replay in which a flow would come within its guard of
/// its end is cut short there (the period's first part, its bytes in proportion to the time; refused
/// when that is shorter than a sample interval); a replay pulled back by an interrupt likewise credits
/// its bytes in proportion to the time kept.
class FastForward final : public SkipHooks {
 public:
  /// `run_end` (ps) bounds every skip (the run's stop time).
  FastForward(Network& net, const WormholeSettings& settings, Time run_end);
  ~FastForward() override;
  FastForward(const FastForward&) = delete;
  FastForward& operator=(const FastForward&) = delete;

  const SkipStats& stats() const { return stats_; }
  /// Chunks of the per-flow track index allocated now (the rest given back with the flow table's).
  size_t track_chunks_held() const { return track_of_.held_chunks(); }
  /// Warnings about settings that cannot work on a network whose largest base RTT is `max_rtt`
  /// (ps) under a CC named `cc` whose update period is `cc_period` (ps,
  /// CongestionControl::update_period): a window shorter than two round trips, and one shorter
  /// than the CC's period (which the controller then lengthens, see window_samples).
  static std::vector<std::string> warnings(const WormholeSettings& s, Time max_rtt, const std::string& cc = "",
                                           Time cc_period = 0);
  /// The steady-state window in samples: the setting l, or more when l × sample_interval is
  /// shorter than the CC's update period `cc_period` (ps) — then just over that period, so that a
  /// window always spans one of the CC's own updates (a flat rate over less may be a CC waiting
  /// for its timer, not a steady state). (The controller judges a flow whose every sample since its
  /// window began is its line rate sooner, see line_rate_window_samples: no timer holds its rate.)
  static uint64_t window_samples(const WormholeSettings& s, Time cc_period);
  /// The samples a flow that sent at its line rate `line_rate_bps` (bit/s) in every sample needs
  /// before it is judged, for a base RTT `base_rtt` (ps) and data packets of `payload` bytes: with
  /// s.line_rate_window, the larger of 4 × ⌈2 RTTs / interval⌉ (each quarter window, the span between
  /// goodput checkpoints, holds the two round trips of ACKs a rate estimate needs) and
  /// ⌈4 × 8 × payload / (s.error_bound × rate) / interval⌉ (one packet is at most half the error bound
  /// of the goodput over half the window), at most s.window; without it (or with a rate of 0),
  /// s.window. A check that finds the goodput moving more than that between the two halves of its
  /// span lengthens the window (lengthen).
  /// At least 1. Such a flow's rate can move only on congestion feedback (a CNP, an ECN echo, INT),
  /// which a window of a few RTTs shows: CCs on an 8-µs, 400-Gb/s path react within tens of µs,
  /// where the paper's l = 2000 at 1 µs waits 2 ms and never sees a shorter flow.
  static uint64_t line_rate_window_samples(const WormholeSettings& s, Time base_rtt, uint64_t line_rate_bps,
                                           double payload);
  /// The window in samples this controller uses (window_samples of its settings and CC).
  uint64_t window() const { return window_; }
  /// The time between rate samples and ticks, ps.
  Time sample_interval() const { return s_.sample_interval; }
  /// A flow's end game, bytes: a base RTT and two sample intervals at its line rate plus two packets.
  /// A flow with less left is not held as a follower, and a leader's flow with less left at a tick
  /// releases its followers — held flows cannot end, so the leader's and the followers' last packets
  /// are both simulated. By then the leader has more than a follower's guard (a base RTT at line rate
  /// and a packet) left, so the follower can take all the leader sent. Read on the sender's rank only.
  double end_game(const Flow& f) const {
    return double(f.max_rate_bps) / 8.0 / double(kSec) * double(f.base_rtt + 2 * s_.sample_interval) +
           2.0 * net_.params().payload;
  }
  /// Whether flow `f` (on its sender's rank) lasts, even at line rate, from now to `check` (ps)
  /// and its end game beyond: what holding its partition as a follower until `check` needs.
  bool lasts(const Flow& f, Time check) const {
    return double(f.bytes_left()) >=
           end_game(f) + double(f.max_rate_bps) / 8.0 * double(check - net_.now()) / double(kSec);
  }

  /// Bytes active flow `id` may still be credited before its guard at line rate, as measured for every
  /// rank alike when it was held as a follower (Track::left).
  double credit_room(uint32_t id) const { return tracks_[track_of_[id]].left; }
  /// The report written into the results (stats, timeline, the network's bypass/hold counters,
  /// the verify samples completed so far).
  SkipReport report() const;
  /// At the end of the run: ends the verify samples still running (cut) and completes them. A
  /// collective in a distributed run: every rank calls it once, at the same point.
  void finish_verification();
  const std::vector<PartitionSample>& timeline() const { return timeline_; }
  /// How many times a flow's window and goodput were restarted for a reset of its partition (a
  /// cost, not an outcome: a track read between two resets is restarted once, one not read is not).
  uint64_t track_restarts() const { return track_restarts_; }
  const PartitionSet& partitions() const { return parts_; }
  /// The reset of partition `pid` its current period started with (a number that grows with every
  /// reset; a memoizer's record of the period keeps it for period_start). Throws std::out_of_range for
  /// an id that never named a partition.
  uint64_t period_epoch(uint32_t pid) const { return part_state_.at(pid).epoch; }
  /// Active flow `id`'s snd_nxt (bytes) and CC rate (bit/s) when the period of reset `epoch` of its
  /// partition started: kept just before they first moved after it (copy on write: a reset copies
  /// nothing), else the values now. Kept only while a period observer is set (memoization reads them;
  /// without one every packet would pay for the copy). Meaningful on the flow's sender's rank only. A flow that ended
  /// since (its period's record is void: the partition changed) gives its values now. Precondition:
  /// the flow has QP state (Network::flow).
  std::pair<uint64_t, uint64_t> period_start(uint32_t id, uint64_t epoch) const;
  /// Verify mode's samples (settings.verify; empty when off).
  const Verifier& verifier() const { return verifier_; }
  /// Active flow `id`'s goodput estimate at the last steady check of its partition, bytes/ps
  /// (0: none yet).
  double goodput(uint32_t id) const {
    const Track& t = tracks_[track_of_[id]];
    return current(t) ? t.goodput : 0;
  }
  /// Flow `id`'s goodput trend at its last check, 1/ps (0: none), and where it holds exactly, ps.
  double trend(uint32_t id) const {
    const Track& t = tracks_[track_of_[id]];
    return current(t) ? t.trend : 0;
  }
  Time trend_at(uint32_t id) const { return tracks_[track_of_[id]].trend_at; }
  /// Tells `o` (nullptr: nobody) when unsteady periods start and converge (a memoizer).
  void set_period_observer(PeriodObserver* o) { period_observer_ = o; }
  /// A distributed run's ranks, met at every tick (nullptr: one process). Every rank keeps the same
  /// partitions; what only a flow's or port's rank knows is combined through `x`.
  void set_exchange(TickExchange* x) { exchange_ = x; }
  TickExchange* exchange() const { return exchange_; }

  // SkipHooks
  void flow_started(uint32_t id) override;
  void flow_finished(uint32_t id) override;
  void rate_changed(uint32_t id, uint64_t old_rate_bps, uint64_t new_rate_bps) override;
  void sending(uint32_t id) override {
    // A period's start values are read by memoization only (period_start): without it, nothing to keep.
    if (period_observer_ && id < track_of_.size() && track_of_[id] != kNoTrack) keep_period_start(id, track_of_[id]);
  }
  void touched(uint32_t port) override;
  void routes_changed() override;
  void on_tick() override;
  uint32_t mark() override;
  void rewind(uint32_t m) override;
  void flows_forgotten(uint32_t first, uint32_t count) override;
  double estimated_error_bytes(uint32_t id) const override {
    return id < track_of_.size() && track_of_[id] != kNoTrack ? tracks_[track_of_[id]].err_bytes : 0.0;
  }

 private:
  struct Track {                  // one active flow
    RateWindow window;
    uint64_t next_grid = 0;       // first grid point not yet sampled
    Time next_sample_at = 0;      // its time, ps
    Time rose_at = -1;            // ps: the last time its CC raised its rate (-1: never)
    struct Mark { Time t; uint64_t acked; };  // a goodput checkpoint: when snd_una last moved, snd_una
    Mark marks[3] = {};           // the last checkpoints, oldest first
    uint8_t n_marks = 0;
    double goodput = 0;           // bytes/ps since the oldest checkpoint (at the last check)
    double trend = 0;             // |d goodput / dt| / goodput, 1/ps, between the checkpoints' spans (0: unknown)
    double grain = 0;             // judged over a line-rate window shorter than l: |g2 − g1| / 2g of its spans (else 0)
    Time trend_at = 0;            // ps: the middle of the goodput's span (where the estimate holds exactly)
    double est_rel = 0;           // the current skip's estimated relative error of its credit
    double left = 0;              // bytes it may still skip before its guard (at the last check)
    int64_t credited = 0;         // bytes credited by the current skip
    double err_bytes = 0;         // its share of stats_.estimated_error_bytes: Σ est_rel × credited of its skips
    double skip_rate = 0;         // bytes/ps the current skip credits (a skip-back keeps rate × time kept)
    uint32_t hops = 0;            // data-path length (for the event estimate)
    uint32_t active_pos = 0;      // index in active_
    bool distrusted = false;      // never skipped (nor replayed): a verified fast-forward of its partition failed the
                                  // bound, or the collective memo simulates it exactly (Network::simulated_exactly)
    // The partition and its reset (Part::epoch) the window and goodput fields above were last
    // restarted for: a reset restarts its flows' tracks when they are next read (track()).
    uint32_t part = 0;
    uint64_t epoch = 0;           // 0: never restarted
  };
  // An active flow's snd_nxt and rate as they were when the period of reset `epoch` of partition
  // `part` began (kept before they first moved after it: keep_period_start); epoch 0: none kept.
  // Apart from its Track, in a dense array by track slot: every data packet a NIC sends reads it
  // (the Track's line was a cache miss a packet: 1.6 % of a MoE run's samples, perf).
  struct PeriodStart {
    uint64_t epoch = 0;
    uint32_t part = 0;
    uint64_t sent = 0, rate = 0;
  };
  struct Part {                   // one partition's fast-forward state
    Time due = 0;                 // first check time (all windows full)
    uint64_t lr_window = 1;       // samples its flows need at line rate (line_rate_window_samples, largest; lengthen)
    uint64_t reset_k = 0;         // the sample grid point of its last reset
    Time checkpoint = 0;          // next goodput checkpoint (every quarter window from the middle of the first)
    bool skipping = false;
    Time skip_start = 0, skip_end = 0;  // the skip's shift is skip_end − skip_start
    bool converged = false;       // a check found it steady since its windows were reset
    bool lookup_queued = false;   // its period started since the last tick: in lookup_queue_, ask the memoizer
    bool replaying = false;       // the current skip replays a memoized period
    bool following = false;       // the current skip holds it while a leader simulates its pattern (hold)
    uint64_t pattern = 0;         // which (Replay::pattern), while replaying
    bool interrupted = false;     // in interrupted_: pulled back at the next tick (and not replayed at it)
    int64_t verifying = -1;       // the verify sample simulating the skip or replay it would take (-1: none)
    // Its last reset (a run-wide count, from 1). Changed too when it loses a flow or is merged into
    // another: a flow alone in its partition that is rerouted into another one, or the flows of a
    // partition merged away, would otherwise find their tracks current.
    uint64_t epoch = 0;
    bool window_pending = true;   // lr_window, due and checkpoint are still to be set for the last reset (settled)
  };
  /// Active flow `id`'s track, restarted first if its partition was reset since it was last read.
  /// A partition of a few thousand short flows (an all-to-all across the fabric) changes its
  /// membership at every flow's start and end: restarting every track at each reset made each
  /// change cost the whole partition (3 % of a MoE run's samples by perf, more in cache misses).
  /// Before flow `id`'s snd_nxt or rate moves: if its partition was reset since the values were last
  /// kept (or it left that partition), they are its period's start values: keep them.
  void keep_period_start(uint32_t id, uint32_t slot) {
    const PeriodStart& k = period_starts_[slot];
    if (k.epoch != 0 && part_state_[k.part].epoch == k.epoch) return;
    keep_period_start_slow(id, slot);
  }
  void keep_period_start_slow(uint32_t id, uint32_t slot);
  Track& track(uint32_t id) {
    Track& t = tracks_[track_of_[id]];
    if (!current(t)) restart(id, t);
    return t;
  }
  /// Whether no reset of the partition that `t`'s flow was last restarted for came since (a flow
  /// that left a partition finds it reset or gone: either changes its epoch).
  bool current(const Track& t) const { return t.epoch != 0 && part_state_[t.part].epoch == t.epoch; }
  /// What a reset does to a track (the window and goodput anew from the reset's grid point), for
  /// the partition flow `id` is in now. Throws std::logic_error if the flow is in no partition (an
  /// active flow always is: a bug).
  void restart(uint32_t id, Track& t);
  /// Partition `pid`'s state with its line-rate window, first check and first goodput checkpoint set
  /// for its last reset: set only when read, so that a run of resets between two ticks costs one.
  Part& settled(uint32_t pid);
  /// Removes flow `id` from its partition (PartitionSet::remove_flow): the partitions to reset.
  std::vector<uint32_t> leave_partition(uint32_t id);
  /// Adds flow `id` on `ports` (PartitionSet::add_flow), merging the partitions there: the one to reset.
  uint32_t join_partition(uint32_t id, const std::vector<uint32_t>& ports);
  /// Moves active flow `id` to the partitions of its ports now (QueueCoupling::ports), if they
  /// changed: its old partition may split, the ones it joins merge; all of them start anew.
  void refresh_ports(uint32_t id);
  void sample_until(uint32_t id, Track& t, uint64_t rate_bps, Time now);
  void reset(uint32_t pid);
  /// After a check of `pid` judged over a line-rate window shorter than l: `full` (a flow below line
  /// rate, or every flow outlasting l samples after the reset) makes it l, puts its checkpoints back
  /// on l's grid and raises `wait` (samples) to l's end; else a goodput that moved more than half the
  /// error bound between the halves of its span (its grain) makes it `grow` samples (the largest its
  /// flows asked: as much longer as the grain is above half the bound), at least twice what it was and
  /// at most l, and raises `wait` to half of it. Whether it lengthened the window (the partition is
  /// then not judged at this check).
  bool lengthen(uint32_t pid, bool full, double grow, double& wait);
  /// A goodput checkpoint of every flow of `pid` (at its last ACK instant; none within two RTTs of its last).
  void take_marks(uint32_t pid);
  /// The longest line-rate window: the setting l.
  uint64_t line_rate_window_cap() const { return std::max<uint64_t>(s_.window, 1); }
  /// A skip that ran its course; a replay's end goes on to fast-forward if `may_continue`.
  void end_skip(uint32_t pid, bool may_continue);
  void skip_back(uint32_t pid);          ///< an early interrupt
  void settle(const std::vector<uint32_t>& pids);  ///< end or pull back skips before membership changes
  void pull_back_interrupted();          ///< the interrupts since the last tick (touched)
  void remove_finished();                ///< the flows finished since the last tick (flow_finished)
  /// The skip `pid` may take now (ps, whole ns; 0: none): up to the earliest known interrupt, from
  /// its flows' goodput and bytes left at the last check (Track::left), and no longer than keeps
  /// each flow's estimated error within the error bound (see skip_error).
  Time skip_length(uint32_t pid);
  void skip(uint32_t pid, Time dt);      ///< fast-forwards `pid` by `dt` ps, crediting its goodput
  void count_contended(uint32_t pid);    ///< stats_.contended_decisions
  /// Whether two flows of `pid` send data through one egress port (`at_a_switch`: one switch egress
  /// port, where a partition is judged over the full window l), by their data paths (alike on every rank).
  bool flows_meet(uint32_t pid, bool at_a_switch) const;
  bool continue_replay(uint32_t pid);    ///< a replay's end goes on to fast-forward, if it may
  bool owned(uint32_t id) const { return !net_.distributed() || net_.owns_node(net_.flow_info(id).src); }  ///< this rank runs its sender
  void lookups();                        ///< replays for the partitions whose period just started
  /// Replays `r` on `pid` for `dt` ps (whole ns, at most the period's remaining duration: less cuts it
  /// short, crediting each flow's recorded bytes in proportion to the time); false, with nothing done,
  /// if dt is not in (0, that duration] or a known interrupt (a flow file's next start, LINK_DOWN, the
  /// run's end) comes first.
  bool try_replay(uint32_t pid, const Replay& r, Time dt);
  /// Partitions whose period nobody recorded yet but which start like one being simulated now
  /// (`missed`: looked up at this tick, no replay): held until that leader's period ends.
  void follow(const std::vector<uint32_t>& missed);
  /// Freezes `pid` with nothing credited until the earliest known interrupt, on the tick grid (false:
  /// that is sooner than `at_least` ps, the leader's first check, or a tick).
  bool hold(uint32_t pid, Time at_least);
  /// Ends held follower `pid`'s hold: its flows resume at `resume` (now, or the next whole ns) credited
  /// `r.bytes` (each kept one guard from its end: Track::left), with the CC states `r.cc` as of
  /// `resume` if `restore_cc` (a tick's only: none when empty).
  void unhold(uint32_t pid, const Replay& r, Time resume, bool restore_cc);
  /// A held follower disturbed or at its hold's end: resumes now from its leader's last state.
  void release_early(uint32_t pid);
  /// The followers the observer releases at this tick (their leaders converged or stopped).
  void release_followers();
  /// Credits `packets` whole packets to flow `id` for a skip of `dt` ps at `rate` bytes/ps (what a
  /// pull-back keeps per ps), with the statistics.
  void credit_skip(uint32_t id, Track& t, uint64_t packets, double rate, Time dt, bool replay);
  void begin_skip(uint32_t pid, Time dt, bool replay);  ///< marks `pid` frozen from now for `dt` ps
  /// The guard left to packet-level simulation at a flow's end: one base RTT at `rate` (bytes/ps)
  /// plus one packet, bytes.
  double guard(const Flow& f, double rate) const;
  /// Bytes flow `f` may still skip at `rate` (bytes/ps) before its guard (may be < 0). Read on the
  /// rank of its sender only.
  double room(const Flow& f, double rate) const { return double(f.end_seq() - f.snd_nxt) - guard(f, rate); }
  /// Verify mode: simulates the skip (or replay) of `pid` that would last `dt` ps instead, as a sample.
  void begin_verify(uint32_t pid, VerifySample::Kind kind, Time dt, std::vector<double> rate);
  /// Verify mode: `pid`'s sample runs on at this tick (its flows' progress counters read here).
  void tick_verify(uint32_t pid);
  /// Ends `pid`'s verify sample: at its planned end (`cut` false, at the first tick at or after it), or at
  /// its last tick (`cut` true: its flows changed before the tick that closes its span).
  void end_verify(uint32_t pid, bool cut);
  /// The verify samples completed at this tick: failed ones keep their flows (fast-forward) or
  /// pattern (replay) from being accelerated again.
  void close_verified();
  bool distrusted(uint32_t pid);   ///< whether a flow of `pid` is never to be skipped (Track::distrusted)
  /// The estimated relative error of crediting flow `t` its goodput for a skip of `dt` ps from now:
  /// the goodput's linear trend carried from the middle of its span to the middle of the skip.
  double skip_error(const Track& t, Time dt) const;
  void ensure_tick();
  void record_timeline();
  Part& part(uint32_t pid);

  struct Arena;                                   // the oneTBB arena of the steady checks and memo lookups
  Network& net_;
  WormholeSettings s_;
  std::unique_ptr<Arena> arena_;
  Time run_end_;
  PartitionSet parts_;
  QueueCoupling coupling_;                         // each flow's partition ports
  std::vector<Part> part_state_;
  std::vector<Track> tracks_;                     // pooled: windows keep their memory
  std::vector<PeriodStart> period_starts_;        // by tracks_ slot
  uint64_t distrusted_active_ = 0;                // active flows whose Track::distrusted is set
  std::vector<uint32_t> free_tracks_;
  // flow id -> tracks_ slot (kNoTrack: not active). A dense vector, not a map: HPCC changes a
  // flow's rate on every ACK, and the lookup is on that path.
  static constexpr uint32_t kNoTrack = UINT32_MAX;
  struct TrackSlot {  // defaults to kNoTrack: what the ids of a given-back chunk read
    uint32_t slot = kNoTrack;
    TrackSlot() = default;
    TrackSlot(uint32_t s) : slot(s) {}  // NOLINT: a slot number stands for itself
    operator uint32_t() const { return slot; }
  };
  // By flow id, 4 B a flow, in the flow table's chunks: a chunk goes when the flow table gives its
  // entries back (flows_forgotten).
  ReleasableChunks<TrackSlot, FlowTable::kEntryBits> track_of_;
  std::vector<uint8_t> forgotten_;  // by chunk: given back by the flow table before track_of_ reached it
  void grow_tracks_to(uint32_t id);  // track_of_ covers `id` (forgotten chunks added given back)
  std::vector<uint32_t> active_;                  // active flow ids, unordered (LINK_DOWN walks them)
  PeriodObserver* period_observer_ = nullptr;
  TickExchange* exchange_ = nullptr;
  uint64_t epochs_ = 0;                            // resets so far (Part::epoch)
  uint64_t track_restarts_ = 0;
  std::vector<uint32_t> lookup_queue_;            // partitions whose period started since the last tick
  std::vector<uint32_t> interrupted_;             // partitions touched since the last tick
  std::vector<uint32_t> finished_;                // flows finished since the last tick, in the run's order
  bool tick_pending_ = false;
  uint32_t skipping_now_ = 0;
  SkipStats stats_;
  std::vector<SkipStats> marks_;                   // mark(): the statistics then (cleared at ticks)
  std::vector<PartitionSample> timeline_;
  uint64_t window_;                                // samples per steady-state window (window_samples)
  bool timed_increase_;                            // the CC raises rates on a timer (update_period > 0)
  Verifier verifier_;
  std::map<size_t, uint64_t> verified_patterns_;  // replay sample -> Replay::pattern (to reject it)
};

}  // namespace wh
