// Test entry point: MPI is initialised only when tests run, not during gtest discovery
// (gtest_discover_tests runs the binary with --gtest_list_tests at build time).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();
  // ctest starts one process per test, two at a time: Open MPI singletons starting together race to
  // create their shared session folder (/tmp/ompi.HOST.UID: "mkdir ... File exists", orte_init fails).
  // Each test process gets a session folder base of its own.
  char base[] = "/tmp/wh_unit_ompi.XXXXXX";
  const bool own = mkdtemp(base) != nullptr;
  if (own) setenv("OMPI_MCA_orte_tmpdir_base", base, 1);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  if (own) {
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
  }
  return rc;
}
