// The distributed engine's window loop and reductions (see engine.h).
#include "wormhole/partition/engine.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "wormhole/core/input_error.h"
#include "wormhole/core/interrupt.h"

namespace wh {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

DistributedEngine::DistributedEngine(Network& net, MPI_Comm comm, const RankMap& map, Time client_lookahead)
    : net_(net), comm_(comm) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  // First, before any check a rank could fail alone: every rank computed its map itself (METIS, or a --rank-map file it read): they must agree, or
  // the ranks would run different cuts and wait for each other for ever.
  uint64_t digest[2] = {map.ranks, 0};
  for (uint32_t r : map.rank_of) digest[0] = (digest[0] ^ r) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  digest[1] = ~digest[0];
  MPI_Allreduce(MPI_IN_PLACE, digest, 2, MPI_UINT64_T, MPI_MAX, comm);
  if (digest[1] != ~digest[0])
    throw InputError("command line", 0,
                     "the ranks computed different rank maps (different METIS builds, or different --rank-map files "
                     "on different nodes)",
                     "give every rank the same wormhole build and the same --rank-map file");
  if (map.ranks != static_cast<uint32_t>(size_))
    throw InputError("command line", 0,
                     "the rank map has " + std::to_string(map.ranks) + " ranks but " + std::to_string(size_) +
                         " were started",
                     "start as many ranks as the map has (mpirun -np " + std::to_string(map.ranks) + ")");
  if (map.edge_cut > 0 && map.lookahead_ps <= 0)
    throw InputError("command line", 0,
                     "a link of zero delay is cut between ranks: the lookahead is 0, so no rank could run ahead",
                     "give the topology's links a delay, or use a rank map that keeps that link inside one rank");
  if (client_lookahead <= 0)
    throw InputError("command line", 0,
                     "the workload's send latency is 0: a flow starts the instant it is released, so no rank could "
                     "run ahead of the others",
                     "give the workload a send latency (SimAI's AS_SEND_LAT, e.g. 6 us), or run it in one process");
  lookahead_ = std::min(map.edge_cut > 0 ? map.lookahead_ps : kTimeMax, client_lookahead);
  net_.set_distribution(map.rank_of, static_cast<uint32_t>(rank_));
  net_.kernel().set_hold_barriers(false);  // held in run(), between windows
  net_.client_clock().set_lookahead(client_lookahead);
}

void DistributedEngine::run(Time until) {
  Kernel& k = net_.kernel();
  net_.routing();  // as one process does even if no window runs (maxRtt, maxBdp)
  for (;;) {
    auto t0 = Clock::now();
    // Peeked without moving the calendar: packets may still arrive before this rank's next event.
    // With a window hook, its count rides along (negated: one MPI_MIN gives both the earliest time
    // and the largest count), so the monitors add no collective to a window; so does a signal any
    // rank has seen (negated too), and every rank stops at this edge.
    int64_t mine[3] = {std::min(k.queue().next_time(), net_.client_clock().next_event()),
                       hook_ ? -static_cast<int64_t>(hook_->pending()) : 0, -static_cast<int64_t>(interrupt_signal())};
    int64_t got[3] = {0, 0, 0};
    MPI_Allreduce(mine, got, 3, MPI_INT64_T, MPI_MIN, comm_);
    const int64_t start = got[0];
    times_.wait_s += since(t0);
    if (got[2] < 0) {  // Network::stop_signal() then says which, on every rank
      net_.stop_by_signal(static_cast<int>(-got[2]));
      break;
    }
    if (start == kTimeMax || start > until) break;
    const Time barrier = k.barrier();  // the same on every rank
    if (hook_) {
      t0 = Clock::now();
      hook_->window_start(barrier != kTimeMax && start >= barrier ? barrier : start, static_cast<uint64_t>(-got[1]));
      times_.comm_s += since(t0);
    }
    if (barrier != kTimeMax && start >= barrier) {
      t0 = Clock::now();
      k.run_barrier(net_);
      times_.compute_s += since(t0);
      // Freezing moved other flows' control packets off its ports, some over cut links: they reach
      // the far end one lookahead after the tick, maybe inside the next window, so they go now.
      exchange();
      continue;
    }
    Time end = lookahead_ > until - start ? until : start + lookahead_ - 1;
    if (barrier != kTimeMax) end = std::min(end, barrier - 1);
    t0 = Clock::now();
    net_.begin_window();
    net_.run(end);
    // A tick set inside the window (a flow started) ended it there: the client must not run past it
    // either (one process runs the tick before the client's events of that instant and later).
    if (k.barrier() <= end) end = k.barrier() - 1;
    times_.compute_s += since(t0);
    ++times_.windows;
    exchange();
    t0 = Clock::now();
    const bool go_on = net_.run_client(end);
    times_.compute_s += since(t0);
    if (!go_on) {
      net_.truncate_after_stop();
      stopped_ = true;
      break;
    }
    net_.retire_committed();  // the window's finishes stand now
    // Nothing is in flight between ranks at an edge: every packet is in some rank's pool.
    if (net_.release_entries_due())
      net_.release_retired_entries([this](std::vector<uint8_t>& may_go) {
        // A chunk a rank per flow id: every rank makes the same flows, so the same count (else the
        // reduction would mix chunks, or hang).
        uint64_t n[2] = {may_go.size(), ~uint64_t{may_go.size()}};
        MPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_UINT64_T, MPI_MAX, comm_);
        if (n[0] != ~n[1]) throw std::logic_error("the ranks hold different numbers of flows at a window edge");
        all(may_go);
      });
  }
  // The run's end as one process sees it: its last event over every rank and the client, and
  // whether anything is left anywhere (a workload's watchdog tells a hang from a stop by that).
  if (!stopped_) {
    int64_t last = net_.last_event_time();
    MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT64_T, MPI_MAX, comm_);
    uint64_t pending = net_.kernel().pending() + (rank_ == 0 ? net_.client_clock().kernel().pending() : 0);  // the client: once
    MPI_Allreduce(MPI_IN_PLACE, &pending, 1, MPI_UINT64_T, MPI_SUM, comm_);
    net_.set_run_end(last, net_.stopped_by_signal() ? std::max<uint64_t>(pending, 1) : pending);  // a signal: not run dry
  } else {
    net_.set_run_end(net_.client_clock().stop_event().time, 1);  // stopped, not run dry
  }
  times_.events = net_.stats().events;
}

void DistributedEngine::exchange() {
  auto t0 = Clock::now();
  std::vector<CrossPacket>& out = net_.outbox();
  times_.packets_sent += out.size();
  std::vector<int> send_counts(size_, 0), recv_counts(size_, 0), send_displs(size_, 0), recv_displs(size_, 0);
  for (const CrossPacket& c : out) ++send_counts[c.to_rank];
  // Each rank also says how many flows it finished, to everyone: (packets for r, completions) pairs.
  std::vector<int> pairs(2 * size_), got(2 * size_);
  for (int r = 0; r < size_; ++r) pairs[2 * r] = send_counts[r], pairs[2 * r + 1] = static_cast<int>(net_.completions().size());
  for (int r = 1; r < size_; ++r) send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
  // Grouped by destination rank; within a rank in sending order, so each wire stays FIFO.
  send_.resize(out.size());
  std::vector<int> fill = send_displs;
  for (const CrossPacket& c : out) send_[fill[c.to_rank]++] = c;
  out.clear();
  times_.comm_s += since(t0);
  // The first collective after a window: where a rank that finished its events early waits.
  t0 = Clock::now();
  MPI_Alltoall(pairs.data(), 2, MPI_INT, got.data(), 2, MPI_INT, comm_);
  times_.wait_s += since(t0);
  t0 = Clock::now();
  for (int r = 0; r < size_; ++r) recv_counts[r] = got[2 * r];
  int total = 0;
  for (int r = 0; r < size_; ++r) recv_displs[r] = total, total += recv_counts[r];
  recv_.resize(static_cast<size_t>(total));
  MPI_Alltoallv(send_.data(), send_counts.data(), send_displs.data(), packet_type_, recv_.data(), recv_counts.data(),
                recv_displs.data(), packet_type_, comm_);
  times_.packets_received += recv_.size();
  for (const CrossPacket& c : recv_) net_.accept(c);

  // Completions: every rank gets all of them, in the run's order.
  std::vector<int> done_counts(size_), done_displs(size_);
  int done_total = 0;
  for (int r = 0; r < size_; ++r) done_counts[r] = got[2 * r + 1], done_displs[r] = done_total, done_total += done_counts[r];
  if (done_total == 0) {
    times_.comm_s += since(t0);
    return;
  }
  std::vector<Completion>& mine = net_.completions();
  done_.resize(static_cast<size_t>(done_total));
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), completion_type_, done_.data(), done_counts.data(),
                 done_displs.data(), completion_type_, comm_);
  mine.clear();
  // Stable: the completions of one event keep the order they happened in.
  std::stable_sort(done_.begin(), done_.end(), [](const Completion& a, const Completion& b) { return a.before(b); });
  times_.comm_s += since(t0);
  net_.deliver(done_);
}

void DistributedEngine::merge(std::vector<uint32_t>& pids) { pids = gather_to_all(comm_, pids); }

void DistributedEngine::sum(std::span<double> v) {
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, comm_);
}

void DistributedEngine::all(std::vector<uint8_t>& v) {
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT8_T, MPI_MIN, comm_);
}

void DistributedEngine::gather(std::vector<uint8_t>& bytes) { bytes = gather_to_all(comm_, bytes); }

RunStats reduce_stats(MPI_Comm comm, const Network& net) {
  RunStats s = net.stats();
  uint64_t sums[9] = {s.events,        s.packets_dropped, s.ecn_marks,
                      s.retransmit_timeouts, s.drops_buffer, s.drops_loss,
                      s.drops_link_down, s.retransmitted_packets, s.retransmitted_bytes};
  MPI_Allreduce(MPI_IN_PLACE, sums, 9, MPI_UINT64_T, MPI_SUM, comm);
  s.events = sums[0], s.packets_dropped = sums[1], s.ecn_marks = sums[2], s.retransmit_timeouts = sums[3];
  s.drops_buffer = sums[4], s.drops_loss = sums[5], s.drops_link_down = sums[6];
  s.retransmitted_packets = sums[7], s.retransmitted_bytes = sums[8];
  int64_t latest[2] = {s.sim_end, s.last_finish};
  MPI_Allreduce(MPI_IN_PLACE, latest, 2, MPI_INT64_T, MPI_MAX, comm);
  s.sim_end = latest[0], s.last_finish = latest[1];
  // The peak queue: the largest, and among equal peaks the first reached in event order — the
  // port one process reports (it keeps the first to exceed the running maximum).
  struct Peak {
    uint64_t bytes;
    Event at;
    uint32_t node, iface;
  };
  const Peak mine{s.max_queue_bytes, net.max_queue_event(), s.max_queue_node, s.max_queue_if};
  const std::vector<Peak> all = gather_to_all(comm, std::vector<Peak>{mine});
  Peak best = all[0];
  for (const Peak& p : all)
    if (p.bytes > best.bytes || (p.bytes == best.bytes && p.bytes > 0 && p.at.before(best.at))) best = p;
  s.max_queue_bytes = best.bytes, s.max_queue_node = best.node, s.max_queue_if = best.iface;
  return s;
}

}  // namespace wh
