// The distributed engine: one Network per MPI rank, each running its own nodes, synchronised
// conservatively in windows of one lookahead (partition/README.md).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <exception>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/net/network.h"
#include "wormhole/partition/rank_map.h"

namespace wh {

/// An MPI datatype of one T sent as its raw bytes (T trivially copyable), freed with this object.
template <class T>
class BytesType {
 public:
  BytesType() {
    static_assert(std::is_trivially_copyable_v<T>);
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~BytesType() { MPI_Type_free(&type_); }
  BytesType(const BytesType&) = delete;
  BytesType& operator=(const BytesType&) = delete;
  operator MPI_Datatype() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// Where one rank's wall-clock time went (seconds) and how much crossed its cut links.
struct RankTimes {
  double compute_s = 0;  ///< running its events (the network's, and the client's)
  double wait_s = 0;     ///< in the synchronising collectives (window start, counts): waiting for the slowest rank
  double comm_s = 0;     ///< exchanging and queueing the packets of cut links and the completions
  uint64_t windows = 0;
  uint64_t packets_sent = 0, packets_received = 0;  ///< over cut links
  uint64_t events = 0;   ///< events this rank executed (its share of RunStats::events)
};

/// Told where each window of a distributed run starts (the monitors: src/cli/monitor_exchange.h).
class WindowHook {
 public:
  virtual ~WindowHook() = default;
  /// A count of this rank's that the engine reduces (the largest over the ranks) with the window's
  /// start time, for no extra collective: the monitors' trace records waiting to be gathered.
  virtual uint64_t pending() const = 0;
  /// Called on every rank at the same point of the run, so it may use collectives: before the events of
  /// the window starting at `t` (ps), or before the barrier at `t` when one is held next. Every event
  /// before `t` has run on every rank and none at or after it. `most`: the largest pending() over the
  /// ranks, read just before.
  virtual void window_start(Time t, uint64_t most) = 0;
};

/// Runs `net` (this rank's share of the network: every port's wiring, its own ports' state;
/// Network::set_distribution) together with the other ranks of `comm`.
///
/// Protocol (partition/README.md §3): every rank starts a window at T = the smallest next-event
/// time over all ranks (MPI_Allreduce), runs its events in [T, T + lookahead), then the packets
/// that left over cut links are exchanged (MPI_Alltoall of counts, MPI_Alltoallv of records) and
/// queued on the receivers' wires. A packet sent at t >= T reaches the far end at
/// t + serialisation + delay >= T + lookahead, so no rank ever receives an event in its past.
/// The flows finished in the window go to every rank (MPI_Allgatherv), and the client (replicated
/// on every rank) runs its events of the window in its own time (Network::run_client): what it
/// sends to the network is at least its lookahead later, so in a later window. When the client
/// stops the run inside a window, what the ranks ran after that point is uncounted.
/// Windows rather than null messages: one collective pair per window, no deadlock reasoning, and
/// the fabrics here have one delay class, so a null-message protocol could not grant more.
/// Same-time events are ordered by EventOrder::Portable keys, which travel with the packets, so
/// the results are those of one process in that order, for any rank count and map.
///
/// Wormhole: the controller's tick is a kernel barrier (Kernel::set_barrier), alike on every rank.
/// Windows end before it; when the next event anywhere is at or after it, every rank holds it
/// between windows (one process holds it before every event of its instant), combining through
/// this engine (TickExchange: MPI_Allgatherv, MPI_Allreduce) what only one rank measured.
class DistributedEngine final : public TickExchange {
 public:
  /// Makes `net` rank `rank of comm`'s share of `map` (Network::set_distribution). Every rank must
  /// pass the same map. `client_lookahead` (ps): how far ahead the network's client (a workload
  /// driver) schedules the events that reach the network (its send latency); windows are no longer
  /// than it. Throws InputError if the lookahead is 0 (a cut link or the client without delay), or if
  /// the map has another number of ranks than `comm`.
  DistributedEngine(Network& net, MPI_Comm comm, const RankMap& map, Time client_lookahead = kTimeMax);

  /// Runs every rank until no event is left anywhere or `until` (ps) is passed. Collective.
  void run(Time until);

  /// Calls `h` (nullptr: none) at every window's start; its time counts as communication.
  void set_window_hook(WindowHook* h) { hook_ = h; }
  int rank() const { return rank_; }
  int ranks() const { return size_; }
  /// ps: the smallest delay of a cut link; kTimeMax when nothing is cut.
  Time lookahead() const { return lookahead_; }
  const RankTimes& times() const { return times_; }
  /// Whether the client stopped the run (then ClientClock::stop_event() says where).
  bool stopped() const { return stopped_; }

  // TickExchange (collective)
  void merge(std::vector<uint32_t>& pids) override;
  void sum(std::span<double> v) override;
  void all(std::vector<uint8_t>& v) override;
  void gather(std::vector<uint8_t>& bytes) override;

 private:
  void exchange();

  Network& net_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  Time lookahead_ = kTimeMax;
  RankTimes times_;
  bool stopped_ = false;
  WindowHook* hook_ = nullptr;
  BytesType<CrossPacket> packet_type_;
  BytesType<Completion> completion_type_;
  std::vector<CrossPacket> send_, recv_;
  std::vector<Completion> done_;
};

/// Gathers every rank's `mine` on rank 0, in rank order (other ranks get an empty vector).
/// Collective; T must be trivially copyable (sent as bytes).
template <class T>
std::vector<T> gather_to_root(MPI_Comm comm, const std::vector<T>& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const BytesType<T> type;
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<T> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, 0, comm);
  return all;
}

/// Streams every rank's `count` elements, which each(give) hands to give(const T&) in order, to rank 0
/// in rounds of at most max(per_round, ranks) elements in all (each rank sends up to max(1, per_round /
/// ranks) a round), calling `take(const T&)` there for each, in (round, rank, index) order, so no rank
/// holds more than a round (a whole gather_to_root of GPT-7B's flow records is 0.3 GB). `take` must not
/// throw (rank 0 would leave the others waiting in the next round): keep a failure and act on it after
/// the call. If `each` throws (or gives more than the rounds every rank takes part in can carry), this
/// rank sends nothing more, takes part in every round left, and the exception is rethrown at the end
/// (on this rank only). Collective; T
/// trivially copyable; `per_round` >= 1. Throws std::invalid_argument on every rank alike for
/// `per_round` = 0.
template <class T, class Each, class Take>
void gather_to_root_in_chunks(MPI_Comm comm, uint64_t count, Each&& each, size_t per_round, Take&& take) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (per_round == 0) throw std::invalid_argument("gather_to_root_in_chunks: per_round must be at least 1");
  const size_t chunk = std::min<size_t>(std::max<size_t>(per_round / size_t(size), 1), INT32_MAX / size_t(size));
  const BytesType<T> type;
  uint64_t rounds = count / chunk + (count % chunk != 0);
  MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_UINT64_T, MPI_MAX, comm);
  std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  std::vector<T> mine, got;
  mine.reserve(static_cast<size_t>(std::min<uint64_t>(count, chunk)));
  uint64_t done = 0;
  const auto round = [&] {
    const int n = static_cast<int>(mine.size());
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    if (rank == 0) {
      int total = 0;  // at most size × chunk <= INT32_MAX
      for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
      got.resize(static_cast<size_t>(total));
    }
    MPI_Gatherv(mine.data(), n, type, got.data(), counts.data(), displs.data(), type, 0, comm);
    for (const T& x : got) take(x);
    mine.clear(), ++done;
  };
  std::exception_ptr failed;
  try {
    each([&](const T& x) {
      if (done == rounds) throw std::logic_error("gather_to_root_in_chunks: more elements than announced");
      mine.push_back(x);
      if (mine.size() == chunk) round();
    });
  } catch (...) {
    failed = std::current_exception();
    mine.clear();
  }
  if (!mine.empty()) round();
  while (done < rounds) round();
  if (failed) std::rethrow_exception(failed);
}

/// Every rank's `mine`, in rank order, on every rank. Collective; T trivially copyable.
template <class T>
std::vector<T> gather_to_all(MPI_Comm comm, const std::vector<T>& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const BytesType<T> type;
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) displs[r] = total, total += counts[r];
  std::vector<T> all(static_cast<size_t>(total));
  MPI_Allgatherv(mine.data(), n, type, all.data(), counts.data(), displs.data(), type, comm);
  return all;
}

/// The whole run's statistics from every rank's (collective; the result on every rank): sums of
/// counts, the latest times, and the peak queue first reached in the run's event order.
RunStats reduce_stats(MPI_Comm comm, const Network& net);

}  // namespace wh
