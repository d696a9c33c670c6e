// One rank's share of a distributed run (partition/engine.h): which events it runs, packets that
// cross cut links, completions shared at window edges, and the client's lagging time.
#include <algorithm>
#include <stdexcept>

#include "wormhole/core/input_error.h"
#include "wormhole/net/network.h"

namespace wh {

void Network::set_distribution(std::vector<uint32_t> node_rank, uint32_t rank) {
  if (fab_.params.link_down_us > 0) {
    const auto& [file, line] = fab_.params.link_down_origin;
    throw InputError(file, line, "LINK_DOWN is not supported by a distributed run (it re-routes every rank's QPs at once)",
                     "run it in one process, or set LINK_DOWN 0 0 0");
  }
  node_rank_ = std::move(node_rank);
  rank_ = rank;
  sync_journaling();
  kernel_.set_order(EventOrder::Portable);
  clock_.kernel().set_order(EventOrder::Portable);
  // The rank's own ports, and the far end of each cut link as a cut wire: packets from another rank
  // arrive on it here (accept), and their arrival events run here.
  for (uint32_t p = 0; p < fab_.links.size(); ++p) {
    const PortLink& l = fab_.links[p];
    if (node_rank_[l.node] != rank_) continue;
    fab_.make_port(p);
    if (node_rank_[fab_.links[l.peer].node] == rank_) continue;
    fab_.ports[p].cut = true;
    fab_.ports[p].cut_wire = uint32_t(fab_.cut_wires.size());
    fab_.cut_wires.push_back({.wire = {}, .sender = l.peer, .receiver = p, .epoch = 0});
  }
}

bool Network::owns(const Event& e) const {
  switch (e.kind) {
    case kTxDone:
    case kWake: return node_rank_[fab_.links[e.target].node] == rank_;
    case kArrive: return node_rank_[fab_.links[fab_.links[e.target].peer].node] == rank_;
    case kTimer:
      return flows_.retired(e.target) ? flows_.retired_local(e.target) : node_rank_[flows_.info(e.target).src] == rank_;
    // Flow starts, QP starts, injections and on-time client events run everywhere: every rank keeps
    // the same flow table (each creates the QPs of its own hosts) and the same Wormhole partitions.
    default: return true;
  }
}

bool Network::counted_elsewhere(const Event& e) const {
  switch (e.kind) {
    case kFlowStart:
    case kClient: return rank_ != 0;
    case kQpStart:
    case kInject:  // not in flows_ yet if it is the first injection of its instant
      return !owns_node(e.target < flows_.size() ? flows_.info(e.target).src : injected_[e.target - flows_.size()].src);
    default: return false;
  }
}

void Network::accept(const CrossPacket& c) {
  if (c.arrive <= kernel_.now() && kernel_.events_executed() > 0)
    throw std::logic_error("a packet from another rank arrived in this rank's past (a window longer than the lookahead)");
  const uint32_t pkt = fab_.pool.alloc();
  fab_.pool[pkt] = c.pkt;
  if (c.bypass) return kernel_.schedule(c.arrive, kBypass, pkt, 0, c.cause);
  CutWire* w = inbound_cut_wire(c.port);
  if (!w) throw std::logic_error("a packet from another rank came over a link that is not cut here");
  const bool idle_wire = w->wire.empty();
  w->wire.push({c.arrive, c.cause, pkt});
  if (idle_wire) kernel_.schedule(c.arrive, kArrive, c.port, w->epoch, c.cause);
}

void Network::schedule_client(Time at, uint32_t target, uint16_t aux, bool on_time) {
  Kernel& from = clock_.running() ? clock_.kernel() : kernel_;
  const Cause c = from.client_cause();
  const bool lagging = client_ && !node_rank_.empty();
  if (lagging && on_time && at < from.now() + clock_.lookahead())
    throw std::logic_error("an on-time client event was scheduled less than the client lookahead ahead");
  if (at < from.now()) throw std::logic_error("a client event was scheduled in the past");
  (lagging && !on_time ? clock_.kernel() : kernel_).schedule(at, kClient, target, aux, c);
}

void Network::stop() {
  // In a distributed run only the client's time may stop the run: every rank runs the client, so
  // every rank stops at the same point; a stop from one rank's network event would stop it alone.
  if (!node_rank_.empty() && client_ && !clock_.running())
    throw std::logic_error("a distributed run was stopped outside the client's time");
  stopped_ = true;
  if (clock_.running()) clock_.note_stop();
}

void Network::deliver(const std::vector<Completion>& all) {
  // The controller hears of every rank's finishes, in the run's order; it acts on them at its next
  // tick, which is never inside a window (FastForward::flow_finished).
  finishes_heard_ += all.size();  // the same on every rank: release_entries_due()
  if (skip_)
    for (const Completion& c : all) skip_->flow_finished(c.rec.id);
  // Another rank's flow: this rank held its receiver's state (or only its start); it is done with it
  // now, as the sender's rank was at the finish (stale duplicates arriving later are dropped, as one
  // process drops them once the flow has finished).
  for (const Completion& c : all)
    if (!owns_node(c.rec.src) && c.rec.id < flows_.size() && flows_.live(c.rec.id) && !flows_.finished(c.rec.id)) {
      flows_.set_finish(c.rec.id, c.rec.finish);
      finished_with(c.rec.id);
    }
  if (sink_)
    for (const Completion& c : all)
      if (c.rec.id < flows_.size()) delivered_.push_back({c.rec.id, c.rec.finish});
  if (!client_) {
    if (observer_)
      for (const Completion& c : all) observer_->flow_finished(c.rec);
    return;
  }
  clock_.queue(all);
}

bool Network::run_client(Time until) {
  clock_.run(until, client_, observer_, stopped_);
  return !stopped_;
}

void Network::retire_committed() {
  if (!sink_) return;
  // Without a controller nothing refers to a delivered flow after its window; with one, its tick
  // removes the flow from its partitions first (FastForward::remove_finished reads its path).
  committed_.insert(committed_.end(), delivered_.begin(), delivered_.end());
  delivered_.clear();
  std::vector<Done>& ready = skip_ ? ticked_ : committed_;
  size_t kept = 0;
  for (const Done& d : ready) {
    if (flows_.live(d.id)) {  // its state waits for a tick or its NIC (release_done_flow)
      ready[kept++] = d;
      continue;
    }
    // Another rank's flow this rank held no state of never had its finish set here.
    if (flows_.finish(d.id) < 0) flows_.set_finish(d.id, d.finish);
    const bool local = owns_node(flows_.info(d.id).src);
    if (local) sink_->flow_retired(record(d.id));
    flows_.retire(d.id, local);
  }
  ready.resize(kept);
}

void Network::begin_window() {
  ledger_.begin_window();
  credit_undo_.clear();
}

void Network::truncate_after_stop() {
  const Event& x = clock_.stop_event();
  size_t keep_flows = flows_.size();
  bool rewound = false;
  for (const RunLedger::Entry& u : ledger_.take_back_after(clock_)) {
    switch (u.what) {
      case RunLedger::kFinish: flows_.set_finish(u.arg, -1); break;
      case RunLedger::kInject: keep_flows = std::min<size_t>(keep_flows, u.arg); break;
      case RunLedger::kCredit: {
        const CreditUndo& c = credit_undo_[u.arg];
        // The flow's state, or what it left in its FlowInfo if it finished and was released.
        uint64_t& bytes = flows_.live(c.id) ? flows_.state(c.id).skipped_bytes : flows_.info(c.id).skipped_bytes;
        Time& time = flows_.live(c.id) ? flows_.state(c.id).skipped_time : flows_.info(c.id).skipped_time;
        bytes = static_cast<uint64_t>(static_cast<int64_t>(bytes) - c.bytes);
        time -= c.time;
        break;
      }
      case RunLedger::kSkipHook:  // the first after x: the controller as it was then
        if (!rewound) skip_->rewind(u.arg), rewound = true;
        break;
      default: break;  // the ledger's own counts, taken back there
    }
  }
  flows_.truncate(keep_flows);  // flows injected after x: one process never created them
  end_override_ = x.time;
}

}  // namespace wh
