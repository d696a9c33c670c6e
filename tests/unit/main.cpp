// Test entry point: MPI is initialised only when tests run, not during gtest discovery
// (gtest_discover_tests runs the binary with --gtest_list_tests at build time).
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
