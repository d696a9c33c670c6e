// DistributedEngine (wormhole/partition/engine.h) under mpiexec with 2 and 3 ranks (plain main, exit 0 =
// pass): a 6-to-1 incast on a star, cut over the ranks, with each rank's finished flows retired to a
// FlowResults. Every flow must have left every rank by the end (none held), the records of the flows a
// rank sends must be exactly those flows, and their finishes those of one process. Then 32,773 small flows:
// the ranks give back the same chunks of flow-table entries while the run goes, and keep one that a packet
// on another rank still refers to.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../unit/net_fixtures.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/flow_results.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/partition/engine.h"

using namespace wh;

namespace {

// The switch (node 7) and host 0 on rank 0, the senders 1-6 spread over the ranks; cut links of 1 us.
RankMap incast_map(int size) {
  RankMap map;
  map.ranks = static_cast<uint32_t>(size);
  map.rank_of.assign(8, 0);
  for (uint32_t h = 1; h <= 6; ++h) map.rank_of[h] = h % static_cast<uint32_t>(size);
  for (uint32_t h = 0; h < 7; ++h) map.edge_cut += map.rank_of[h] != 0;
  map.lookahead_ps = 1 * kUs;
  return map;
}

// Runs `net` to its end over the ranks of `map`, this rank's finished flows retired to `mine`.
void run_distributed(Network& net, const RankMap& map, FlowResults& mine) {
  DistributedEngine engine(net, MPI_COMM_WORLD, map);
  mine.hold_some();
  net.retire_flows_to(&mine);
  engine.run(kTimeMax);
}

int check() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SimConfig cfg = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  cfg.portable_order = true;
  const Topology topo = test::star(7);
  std::vector<FlowSpec> flows;
  for (uint32_t h = 1; h <= 6; ++h) flows.push_back(test::flow(h, 0, 200'000 * h));

  Network one(cfg, topo, make_cc(cfg, nullptr));
  one.add_flows(flows);
  one.run(kTimeMax);

  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.add_flows(flows);
  const RankMap map = incast_map(size);
  FlowResults mine;
  run_distributed(net, map, mine);

  int failed = 0;
  if (net.held_flows() != 0) std::fprintf(stderr, "rank %d: FAIL: %zu flows still held\n", rank, net.held_flows()), failed = 1;
  std::vector<uint32_t> ids, want;
  for (uint32_t id = 0; id < net.flow_count(); ++id)
    if (map.rank_of[flows[id].src] == static_cast<uint32_t>(rank)) want.push_back(id);
  mine.for_each([&](const FlowRecord& r) {
    ids.push_back(r.id);
    if (r.finish != one.record(r.id).finish)
      std::fprintf(stderr, "rank %d: FAIL: flow %u finished at %lld, one process %lld\n", rank, r.id,
                   static_cast<long long>(r.finish), static_cast<long long>(one.record(r.id).finish)), failed = 1;
  });
  if (ids != want) std::fprintf(stderr, "rank %d: FAIL: %zu records for %zu flows sent\n", rank, ids.size(), want.size()), failed = 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}

// Two chunks of one-packet flows and a few more, from the 6 senders to host 0 one every 0.1 us (80 Gb/s
// into host 0's 100-Gb/s link): the ranks give back the flow-table entries of the flows that finished
// long enough ago, all the same chunks, during the run; the finishes are those of one process.
int check_entries_given_back() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  SimConfig cfg = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  cfg.portable_order = true;
  cfg.rto_us = 200;  // a finished flow's RTO event stays pending until it is due: 10 ms by default, longer than this run
  const Topology topo = test::star(7);
  std::vector<FlowSpec> flows;
  for (uint32_t k = 0; k < 2 * FlowTable::kEntryChunk + 5; ++k)
    flows.push_back(test::flow(1 + k % 6, 0, 1000, static_cast<Time>(k) * 100'000));
  Network one(cfg, topo, make_cc(cfg, nullptr));
  one.add_flows(flows);
  one.run(kTimeMax);

  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.add_flows(flows);
  net.set_release_period(4096);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  FlowResults mine;
  run_distributed(net, incast_map(size), mine);
  int failed = 0;
  // Given back during the run (nothing retires once the last window ran): the first chunk at least.
  const auto released = static_cast<unsigned long>(net.released_entry_chunks());
  unsigned long most = released, least = released;
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
  if (released < 1 || most != least)
    std::fprintf(stderr, "rank %d: FAIL: %lu entry chunks given back (%lu to %lu over the ranks)\n", rank, released, least, most), failed = 1;
  // The ranks agree: a packet of flow 16,385 that one rank still holds (a late duplicate) keeps that
  // flow's chunk on every rank; once it is gone, every rank gives the chunk back.
  auto agree = [](std::vector<uint8_t>& v) {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT8_T, MPI_MIN, MPI_COMM_WORLD);
  };
  PacketPool& pool = net.packet_pool();
  uint32_t late = 0;
  if (rank == size - 1) {
    late = pool.alloc();
    pool[late].type = PktType::Data, pool[late].flow = FlowTable::kEntryChunk + 1;
  }
  net.release_retired_entries(agree);
  if (net.released_entry_chunks() != released)
    std::fprintf(stderr, "rank %d: FAIL: a chunk another rank's packet refers to was given back\n", rank), failed = 1;
  if (rank == size - 1) pool.release(late);
  net.release_retired_entries(agree);
  if (net.released_entry_chunks() != released + 1)
    std::fprintf(stderr, "rank %d: FAIL: %zu entry chunks given back at the end, not %lu\n", rank, net.released_entry_chunks(), released + 1), failed = 1;
  size_t records = 0, differ = 0;
  mine.for_each([&](const FlowRecord& r) {
    ++records;
    differ += r.finish != one.record(r.id).finish;
  });
  if (differ) std::fprintf(stderr, "rank %d: FAIL: %zu finishes differ from one process's\n", rank, differ), failed = 1;
  unsigned long all = records;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (all != flows.size()) std::fprintf(stderr, "rank %d: FAIL: %lu records for %zu flows\n", rank, all, flows.size()), failed = 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int failed = check() | check_entries_given_back();  // the engines' MPI types are freed before MPI_Finalize
  MPI_Finalize();
  return failed;
}
