// The collective memo: a collective that runs alone on an island (a TP ring over one server's
// NVSwitch, a DP ring over one rail leaf) is simulated once per distinct pattern and replayed afterwards.
//
// Why a replay is what a simulation would give: no traffic but the collective's own can enter an island
// (wormhole/net/island.h), so when the collective starts on a quiet island, its flows' completions are a
// function of the island (rates, delays, MMU and ECN settings, round-robin positions, finished QPs not
// compacted yet), the collective's flows and the times its members issued it — all in the key, compared
// byte for byte. No random draw is involved: a recording whose ports' generators moved is not kept. A
// replay creates the flows (same ids, source ports, standalone FCTs) but sends no packet; each ends at
// its recorded time, in its recorded order among flows ending at the same instant, and the island is
// left as the recorded run left it. A recording is simulated as the run simulates: where fast-forward
// skipped part of it, the pattern is as exact as those skips (approximate: it keeps what was skipped and
// the skips' estimated error, which its replays report); otherwise it is exact. The Wormhole paper's
// memoization (its §6) keys unsteady periods by their contention graph; this is its special case at the
// grain of a whole collective.
//
// A rail leaf also links to the spines, and a layer's DP AllReduce does not block its GPUs: the next
// layers' may reach the leaf while it runs. The collective runs on the sub-island of the leaf ports facing
// its members (its paths must stay there), and a replay is made only when the driver, following its GPUs'
// programs, finds that none of them can issue traffic onto it before the replay would end (pipelined and
// MICRO programs are not followed: nothing is replayed on a leaf there).
//
// On an NVSwitch shared by several groups (TP 4 on an 8-GPU server) a collective runs on its
// sub-island: the switch ports facing its members and their own ports. Other groups' traffic crosses
// the switch but none of those ports; it touches the collective only through the switch's shared
// buffer, whose use sets every port's PFC threshold. Where neither side's use ever comes near a
// threshold, nothing pauses or drops and the two run as if alone: each such run records the most buffer
// it saw in use, and a replay or recording stands only where its use, the simulated traffic's beside it
// and the replayed patterns' recorded peaks together stay below every threshold of the switch
// (measured over its run; a recording is not kept otherwise, a replay counted as a margin violation).
// Another collective of one of its hosts whose flows can enter an NVSwitch (a DP ring step between two
// GPUs of the server) must not be running when it begins: it could send on the sub-island meanwhile.
//
// Where it can be wrong: a flow of another collective that starts on a replayed island's ports before
// the replay ends runs as if the island were empty (counted as a conflict and warned about). Verify
// mode simulates a fraction of the hits instead and compares every completion (must be identical).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "wormhole/net/network.h"
#include "wormhole/workload/collectives.h"

namespace wh {

/// The distinct (sender, receiver) member-index pairs of plan `cp`'s flows, in (sender, receiver)
/// order: C per member of a ring op (its next on every ring), all R − 1 others for AllToAll; empty for
/// an empty plan. As host pairs, CollectiveMemo::begin's `pairs`.
std::vector<std::pair<uint32_t, uint32_t>> collective_member_pairs(const CollectivePlan& cp);

/// When each member of plan `cp` is done with it (ps, by member index: its last flow's end), were the
/// collective started at `t0` to end as `finish` says (ps after t0, per plan flow, as
/// CollectivePattern::finish); all -1 (not known) when `finish` is null or of another size. What the
/// drivers' look-aheads (CollectiveMemo::begin's `quiet_until`) start from.
std::vector<Time> member_done_times(const CollectivePlan& cp, Time t0, const std::vector<Time>* finish);

/// The bytes of a collective's memo key that its plan and its driver's timing give (CollectiveMemo::begin's
/// `plan_key`): member-relative (ends as member positions, the chunk, each flow's parent), so every group's
/// instance of one collective has the same key, with the send latency (ps) and the priority group its
/// flows are sent in. Every driver keys alike, so a memo file's patterns serve SimAI workloads and Chakra
/// traces of the same collectives. The leading tag changes when what a key means changes, so that a
/// memo file's older patterns are never taken for new ones ("WCM2": flows leaving at one instant start in
/// plan order, not in the members' issue order). About 20 B a flow.
std::string collective_plan_key(const CollectivePlan& cp, Time send_latency, uint32_t priority_group);

/// See the file comment. Installs itself as the network's IslandHooks. One per network; the
/// workload drivers of every job share it.
class CollectiveMemo final : public IslandHooks {
 public:
  /// `verify`: 0 = none; a fraction in (0, 1] = that share of the hits (the first one included; 1 =
  /// all); a whole number > 1 = the first `verify` hits. A pattern a verified hit differs from is not
  /// replayed again: an exact pattern in anything, an approximate one (recorded with skips) in a
  /// completion by more than `error_bound` (a fraction of the completion's time from the first issue;
  /// Wormhole's error bound, 0 when the run does not fast-forward). An approximate pattern is replayed
  /// only where it was recorded under a bound no looser than `error_bound` (so never without
  /// fast-forward); a recording of its key then takes its place. `store`: where patterns are kept (e.g. a
  /// memo file's, for one namespace of settings; it may hold patterns of an earlier run), or nullptr for a
  /// store of its own. Throws std::invalid_argument for a negative `verify` or an `error_bound` not in [0, 1).
  CollectiveMemo(Network& net, double verify, double error_bound,
                 std::unordered_map<std::string, CollectivePattern>* store = nullptr);
  ~CollectiveMemo() override;

  /// A collective whose members have all issued it, none of its flows released yet. `pairs`: its
  /// flows' distinct (source host, destination host); `plan_key`: gives the bytes that identify its
  /// flows (ends as member positions, sizes, dependencies) and the driver's settings that time them,
  /// called only when the collective has an island (about 20 B a flow: not made for the others);
  /// `member_hosts`: host of each member; `issued`: each member's issue time (ps) (the order among
  /// members issuing at one instant is not part of the key: the driver releases the flows leaving at
  /// one instant in plan order); `flows`: its plan's flow count (plan flows are 0..flows-1).
  /// `involved(host, kinds)`: in how many collectives (and other transfers) whose flows can enter an
  /// island of one of `kinds` (Island::kinds) the host has flows not finished, this one included — the
  /// most over those kinds (UINT32_MAX: unknown, e.g. another job's host). `quiet_until(kinds, t0,
  /// finish)`: a time (ps; INT64_MAX: never) before which no other flow of the job can start on the
  /// members' ports of those kinds, were the collective to start at t0 and its plan flows to end at
  /// `finish` (ps after t0; nullptr: not known) — a replay must end before it, and a follower needs
  /// INT64_MAX; on any island (a driver whose rules keep NVSwitch islands quiet, SimAI's blocking TP
  /// collectives, returns INT64_MAX there; a rail leaf's DP collectives may overlap the next layers').
  /// Only whether it comes before the replay's end is read: a driver may return any such time.
  /// Returns a handle >= 0 when the memo replays or records it, -1 when it is left to the network.
  int32_t begin(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                const std::function<const std::string&()>& plan_key,
                const std::vector<uint32_t>& member_hosts, const std::vector<Time>& issued,
                uint32_t flows, const std::function<uint32_t(uint32_t host, uint8_t kinds)>& involved,
                const std::function<Time(uint8_t kinds, Time t0, const std::vector<Time>* finish)>& quiet_until);
  /// The completions (ps after the first issue, per plan flow) of the stored pattern that begin, given
  /// the same arguments now, would replay if its look-ahead (`quiet_until`) allowed it; nullptr where it
  /// would not replay a stored pattern (no island, a busy one, no usable pattern: it would record or
  /// follow). `kinds` (if given) gets the island's kinds (Island::kinds). Counts no offer and claims no
  /// port (it reads the end states still pending, as begin does first): what a driver deciding several
  /// collectives of one instant together asks first (a collective's look-ahead can then take another's end
  /// as its pattern's). In verify mode begin may simulate the hit instead (verifies()). The pointer stays
  /// valid to the run's end (a pattern is never removed; a recording of its key may replace its contents).
  const std::vector<Time>* pattern_for(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                                       const std::function<const std::string&()>& plan_key,
                                       const std::vector<uint32_t>& member_hosts, const std::vector<Time>& issued,
                                       uint32_t flows, const std::function<uint32_t(uint32_t host, uint8_t kinds)>& involved,
                                       uint8_t* kinds = nullptr);
  /// The completions (ps after `*t0`, per plan flow) live handle `h` replays, with its t0 (ps) in `*t0`
  /// (not written when `t0` is null), when it replays a stored pattern or follows a recording that has
  /// ended: when each member's part ends is then known in advance. nullptr for a recording, a follower
  /// of a recording still running (its completions come as that runs), a verifying run and h < 0.
  const std::vector<Time>* replay_timeline(int32_t h, Time* t0) const;
  /// Whether verify mode is on: begin may then simulate a hit instead of replaying it (pattern_for
  /// cannot say which).
  bool verifies() const { return verify_ > 0; }
  /// A collective whose last member issued it after its first flow was released: not offered.
  void count_late_issue() { ++stats_.considered, ++stats_.late_issue; }
  /// Whether handle `h` replays (its flows go through Network::replay_flow).
  bool replaying(int32_t h) const { return runs_.at(static_cast<uint32_t>(h)).replay; }
  /// Plan flow `f` of handle `h` became network flow `id` (just injected or replayed).
  void released(int32_t h, uint32_t f, uint32_t id);
  /// Plan flow `f` of a recording handle finished now (`skipped`: ps of it fast-forwarded,
  /// `skipped_bytes`: payload credited; its record's).
  void finished(int32_t h, uint32_t f, Time skipped, uint64_t skipped_bytes);

  /// Flows its replays have ended so far (for the progress line, among the flows done there: the
  /// stats' replayed_flows counts a replay's flows when it is decided, before they end).
  uint64_t replayed_flows_ended() const { return replayed_ended_; }
  /// Events the replays so far stand for (CollectiveMemoStats::events_replayed), for the progress line.
  uint64_t events_replayed() const { return stats_.events_replayed; }
  /// What the memo did; reads the end states still pending first (call once the run is over).
  const CollectiveMemoStats& stats() {
    finalize_pending(true);
    return stats_;
  }

  // IslandHooks
  void flow_started(uint32_t id, uint32_t nic, uint32_t ack_nic) override;
  void replay_due(uint32_t slot) override;
  bool simulated_exactly(uint32_t id) const override { return exact_.count(id) > 0; }

 private:
  using Entry = CollectivePattern;
  /// What begin decides before the look-ahead: no island, a busy one, or (with the key made) a stored
  /// pattern to replay, a recording to follow (`leader`), a new recording.
  struct Assessment {
    enum Outcome { NotIsland, Busy, Hit, Follow, Record } outcome = NotIsland;
    Island is;
    std::string key;
    Time t0 = 0;
    std::pair<const std::string, Entry>* found = nullptr;  // Hit: the stored pattern
    uint32_t leader = UINT32_MAX;                          // Follow: the recording's run
  };
  Assessment assess(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                    const std::function<const std::string&()>& plan_key, const std::vector<uint32_t>& member_hosts,
                    const std::vector<Time>& issued, uint32_t flows,
                    const std::function<uint32_t(uint32_t host, uint8_t kinds)>& involved);
  struct Run {
    Island island;
    std::string key;
    Time t0 = 0;
    bool replay = false;                  // its flows are replayed (from `entry`, or following a recording)
    bool verifying = false;
    const Entry* entry = nullptr;         // the pattern whose end state a replay leaves (set when known)
    std::vector<uint32_t> net_id;         // per plan flow (UINT32_MAX: not released yet)
    std::unordered_map<uint32_t, uint32_t> plan_of;  // network id -> plan flow (a recording or verifying run's only)
    // Completions, plan flows in order (a replay's timeline; a recording's as they happen).
    std::vector<Time> finish;             // per plan flow: ps after t0 (-1: not yet)
    std::vector<uint32_t> order;
    // A recording's (and its followers') per plan flow: what fast-forward did to it (see
    // CollectivePattern::skips); sized at the first skip (empty: nothing skipped).
    std::vector<FlowSkip> skips;
    uint32_t next = 0;                    // replay: completions done
    uint32_t hops = 1;                    // links a flow crosses (the island's paths' mean)
    Time due = -1;                        // replay: the time of its pending replay event (-1: none)
    // recording
    std::vector<IslandPortState> before;
    std::vector<uint32_t> followers;      // replays of the same pattern that follow it as it runs
    bool disturbed = false, broken = false;
    bool pending = false;                 // its flows are done; the island's end state not read yet
    Time pending_at = 0;                  // since when
    // On a sub-island: its switches' most shared buffer in use by simulated traffic while it ran, and
    // the most the other replays there stood for at once (bytes).
    uint64_t used_peak = 0, replays_peak = 0;
    uint32_t leader = UINT32_MAX;         // a follower's recording
    bool left = false, margin_ok = true;  // off its switches' books (leave_shared) and what that found
  };
  void schedule_next(uint32_t slot);
  /// The island's end state is read when the island is next needed (a collective begins, another flow
  /// starts there) or at the end: the event that ended the last flow may still change it (a NIC
  /// compacts its finished QPs when it next looks for a packet, maybe at that very instant).
  void finalize_pending(bool force = false);
  void end_recording(uint32_t slot);
  void end_replay(uint32_t slot);
  void release_claims(uint32_t slot);
  /// A run on a sub-island starts or ends: its switches' buffer peaks are read into the runs there.
  void enter_shared(uint32_t slot);
  /// Reads the peaks once more and takes the run off its switches; whether its run stood below every
  /// PFC threshold (see the file comment).
  bool leave_shared(uint32_t slot);
  void read_peaks(uint32_t sw);
  /// Reads switch `sw`'s peak into the runs on it.
  void take_peak(uint32_t sw);
  /// Its flows are all done: its island's end state is read later (finalize_pending); a sub-island
  /// run leaves its switches' books now.
  void mark_pending(uint32_t slot);
  /// leave_shared's answer, asked once.
  bool left_shared(uint32_t slot);
  /// The shared-buffer bytes run `slot` stands for without being in the buffer: a replay's recorded peak.
  uint64_t stands_for(uint32_t slot) const;
  bool verify_this_hit();
  /// Ends replayed plan flow `f` of run `slot` now, with what fast-forward did to it in the recording.
  void finish_replayed(uint32_t slot, uint32_t f);
  /// Whether a second simulation `e` of pattern `p` agrees with it (see the constructor).
  bool agrees(const Entry& p, const Entry& e, bool verifying);
  /// Whether stored pattern `p` may be replayed in this run (see the constructor).
  bool replayable(const Entry& p) const {
    // A bound of 0: not known (a file of an earlier build), never replayed.
    return !p.rejected && (!p.approximate() || (p.error_bound > 0 && p.error_bound <= error_bound_));
  }

  Network& net_;
  /// Network ids of the released flows of recording and verifying runs, until they finish.
  std::unordered_set<uint32_t> exact_;
  double verify_;
  double error_bound_;
  uint64_t hits_seen_ = 0;
  std::unordered_map<std::string, Entry> own_store_;
  std::unordered_map<std::string, Entry>& store_;
  std::unordered_map<std::string, uint32_t> recording_;  // key -> the run recording it
  std::vector<Run> runs_;
  std::vector<uint32_t> free_runs_;
  std::vector<uint32_t> pending_;  // runs whose end state is to be read (finalize_pending)
  std::vector<int32_t> claim_;  // per port: the run holding it, -1 = none
  std::unordered_map<uint32_t, std::vector<uint32_t>> on_switch_;  // a shared NVSwitch -> the runs on its sub-islands
  uint64_t replayed_ended_ = 0;  // flows replays have ended (replayed_flows_ended)
  CollectiveMemoStats stats_;
};

}  // namespace wh
