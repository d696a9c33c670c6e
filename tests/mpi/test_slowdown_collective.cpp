// slowdown_stats_collective (wormhole/io/slowdown_collective.h) under mpiexec with 2 and 3 ranks (plain
// main, exit 0 = pass): every field equals slowdown_stats() of one process over the same records, bit
// for bit, when rank r holds the flows with id % ranks == r — with ties among the figures, flows that
// did not finish or never started, a rank holding none, and no finished flow at all.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "wormhole/io/slowdown_collective.h"

using namespace wh;

namespace {

// 997 flows: FCTs from a few values (ties), every 13th unfinished, every 101st never started.
std::vector<FlowRecord> flows(bool any_finished) {
  std::vector<FlowRecord> v;
  for (uint32_t id = 0; id < 997; ++id) {
    FlowRecord r;
    r.id = id;
    r.start = Time(id) * 1000 * kNs;
    r.finish = !any_finished || id % 13 == 5 ? -1 : r.start + Time((id * 7919) % 211 + 3) * kUs;
    r.ideal_fct_ns = 3000 + (id * 31) % 17;
    r.min_fct_ns = id % 101 == 7 ? 0 : 2900 + (id * 17) % 23;
    v.push_back(r);
  }
  return v;
}

bool same(const SlowdownStats& a, const SlowdownStats& b) {
  return a.finished == b.finished && a.total == b.total && std::memcmp(&a.mean, &b.mean, sizeof(double) * 9) == 0;
}

// Rank r holds ids with id % holders == r (holders <= ranks: the others hold none).
int check(const std::vector<FlowRecord>& all_records, int holders, const char* what) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  FlowResults mine, all(all_records);
  mine.hold_some();
  for (const FlowRecord& r : all_records)
    if (static_cast<int>(r.id % holders) == rank) mine.add(r);
  const SlowdownStats got = slowdown_stats_collective(MPI_COMM_WORLD, mine, rank == 0 ? &all : nullptr);
  const SlowdownStats want = slowdown_stats(all_records);
  const bool ok = same(got, want);  // on every rank
  if (!ok)
    std::fprintf(stderr, "rank %d: FAIL (%s): p50 %.17g/%.17g p99 %.17g/%.17g max %.17g/%.17g fct_p99 %.17g/%.17g mean %.17g/%.17g\n",
                 rank, what, got.p50, want.p50, got.p99, want.p99, got.max, want.max, got.fct_p99_us, want.fct_p99_us,
                 got.mean, want.mean);
  return !ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int failed = 0;
  failed |= check(flows(true), size, "every rank holds flows");
  failed |= check(flows(true), size - 1 > 0 ? size - 1 : 1, "the last rank holds none");
  failed |= check(flows(false), size, "no flow finished");
  if (slowdown_stats(flows(true)).p99 == slowdown_stats(flows(true)).p50) failed |= 1;  // the figures spread
  // A rank that failed before (its records could not be read): every rank throws, none is left waiting.
  {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    FlowResults mine, all(flows(true));
    mine.hold_some();
    bool threw = false;
    try {
      slowdown_stats_collective(MPI_COMM_WORLD, mine, rank == 0 ? &all : nullptr, rank == size - 1);
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()).find("rank " + std::to_string(size - 1)) != std::string::npos;
    }
    if (!threw) std::fprintf(stderr, "rank %d: FAIL: no error naming rank %d\n", rank, size - 1), failed |= 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
