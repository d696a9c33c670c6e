// SpillVector (include/wormhole/core/spill_vector.h): full blocks on disk read back as they were.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "file_fixtures.h"
#include "wormhole/core/input_error.h"
#include "wormhole/core/spill_vector.h"

using namespace wh;

namespace {
struct Row {
  uint32_t a;
  uint64_t b;
};
Row row(size_t i) { return {static_cast<uint32_t>(i * 7), i * i + 3}; }
}  // namespace

TEST(SpillVector, SpilledBlocksReadBackInAnyOrder) {
  const auto dir = test::test_dir("spill_vector");
  SpillVector<Row, 3> v;  // blocks of 8
  for (size_t i = 0; i < 13; ++i) v.push_back(row(i));  // one full block in memory before spilling
  EXPECT_EQ(v.blocks_in_memory(), 2u);
  v.spill_to(dir.string(), "rows");
  EXPECT_EQ(v.blocks_in_memory(), 1u);  // the full one went
  for (size_t i = 13; i < 29; ++i) v.push_back(row(i));  // 3 full blocks on disk, 5 rows in the last
  ASSERT_EQ(v.size(), 29u);
  EXPECT_EQ(v.blocks_in_memory(), 1u);
  EXPECT_THROW(v.spill_to(dir.string(), "rows"), std::logic_error);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 0);  // unlinked at once
  for (size_t i : {28, 0, 17, 7, 8, 23, 24, 3, 16}) {
    SCOPED_TRACE(i);
    EXPECT_EQ(v[i].a, row(i).a);
    EXPECT_EQ(v[i].b, row(i).b);
  }
  const SpillVector<Row, 3> copy = v;  // in memory
  EXPECT_EQ(copy.blocks_in_memory(), 4u);
  for (size_t i = 0; i < 29; ++i) EXPECT_EQ(copy[i].b, row(i).b) << i;
  SpillVector<Row, 3> moved = std::move(v);
  EXPECT_EQ(v.size(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  v.push_back(row(1));
  EXPECT_EQ(v[0].b, row(1).b);
  for (size_t i = 0; i < 29; ++i) EXPECT_EQ(moved[i].b, row(i).b) << i;
}

TEST(SpillVector, AFolderThatCannotHoldTheFileIsAnOutputError) {
  SpillVector<Row, 3> v;
  EXPECT_THROW(v.spill_to("/nonexistent-folder/x", "rows"), OutputError);
}
