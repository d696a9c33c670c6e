// gather_to_root_in_chunks (wormhole/partition/engine.h) under mpiexec with 2 and 3 ranks (plain
// main, exit 0 = pass): rank r holds 5r + 1 values (r = 1 then holds more than two rounds, rank 0
// one value), streamed in rounds of 3 a rank (3 × ranks in all); rank 0 must take every value once, in (round, rank, index)
// order, holding one round at a time; the other ranks take nothing.
#include <mpi.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "wormhole/partition/engine.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto count = [](int r) { return static_cast<size_t>(5 * r + 1); };
  std::vector<uint64_t> mine(count(rank));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = uint64_t(rank) * 1000 + i;  // rank r's i-th value
  std::vector<uint64_t> taken;
  wh::gather_to_root_in_chunks<uint64_t>(
      MPI_COMM_WORLD, mine.size(), [&](const auto& give) { for (uint64_t v : mine) give(v); }, 3 * size_t(size),
      [&](uint64_t v) { taken.push_back(v); });
  // Rounds of 3: round k has values 3k .. 3k+2 of each rank that still has them.
  std::vector<uint64_t> expected;
  if (rank == 0)
    for (size_t k = 0; 3 * k < count(size - 1); ++k)
      for (int r = 0; r < size; ++r)
        for (size_t i = 3 * k; i < 3 * k + 3 && i < count(r); ++i) expected.push_back(uint64_t(r) * 1000 + i);
  int failed = taken != expected;
  if (failed) std::fprintf(stderr, "rank %d: FAIL: took %zu values, expected %zu, or in another order\n", rank, taken.size(), expected.size());
  // The last rank's source fails after 4 of its 6 values: it takes part in every round left and gets
  // the error back; the others run through; rank 0 takes what it sent in full rounds before (3: the
  // fourth was waiting for its round).
  taken.clear();
  bool threw = false;
  try {
    wh::gather_to_root_in_chunks<uint64_t>(
        MPI_COMM_WORLD, 6,
        [&](const auto& give) {
          for (uint64_t i = 0; i < 6; ++i) {
            if (rank == size - 1 && i == 4) throw std::runtime_error("unreadable");
            give(uint64_t(rank) * 1000 + i);
          }
        },
        3 * size_t(size), [&](uint64_t v) { taken.push_back(v); });
  } catch (const std::runtime_error&) {
    threw = true;
  }
  if (threw != (rank == size - 1)) std::fprintf(stderr, "rank %d: FAIL: threw %d\n", rank, threw), failed = 1;
  if (rank == 0 && taken.size() != 6 * size_t(size) - 3)
    std::fprintf(stderr, "rank 0: FAIL: took %zu values after a failure, expected %zu\n", taken.size(), 6 * size_t(size) - 3), failed = 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
