// Memo files: write/read round trip, merging two files is their union (isomorphic keys once, hits
// added), corrupt and foreign files are rejected with the file named.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <fstream>
#include <unistd.h>

#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/memo/memo_file.h"

#include "memo_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

class MemoFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wh-memo-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

// A chain A–B–C with A at 30G, and a pair.
const Fcg chain = make_fcg({fl({1, 2}, 30 * kG), fl({2, 3}), fl({3, 4})}, kG);
const Fcg chain_relabelled = make_fcg({fl({9, 8}), fl({8, 7}), fl({7, 6}, 30 * kG)}, kG);  // C', B', A'
const Fcg pair = make_fcg({fl({1, 2}), fl({1, 2})}, kG);

}  // namespace

TEST_F(MemoFile, RoundTrip) {
  MemoDb db;
  db.namespaces = {{11, "CC_MODE 1 ..."}, {12, "CC_MODE 3 ..."}};
  db.store.insert(11, chain, value_for(3, 100), 5 * kUs).first->hits = 4;
  db.store.insert(12, pair, value_for(2, 200), 6 * kUs);
  write_memo_file(path("a.h5"), db);
  const MemoDb back = read_memo_file(path("a.h5"));
  EXPECT_EQ(back.namespaces, db.namespaces);
  ASSERT_EQ(back.store.size(), 2u);
  const auto hit = back.store.lookup(11, chain_relabelled, 1 * kSec);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry->value.bytes, (std::vector<uint64_t>{100, 101, 102}));
  EXPECT_EQ(hit->entry->value.duration, 77 * kUs);
  EXPECT_EQ(hit->entry->value.goodput, (std::vector<double>{0.001, 0.002, 0.003}));
  ASSERT_EQ(hit->entry->value.cc.size(), 3u);
  const auto& d = std::get<DcqcnState>(hit->entry->value.cc[2].cc);
  EXPECT_EQ(d.target_bps, 30 * kG + 2);
  EXPECT_EQ(d.alpha, 0.25);
  EXPECT_FALSE(d.first_cnp);
  EXPECT_EQ(hit->entry->value.cc[2].timer_in[1], 55 * kUs);
  EXPECT_EQ(hit->entry->value.cc[2].timer_in[0], -1);
  EXPECT_EQ(hit->entry->value.cc[2].snd_nxt, 2000u);
  EXPECT_EQ(hit->entry->visible_from, 5 * kUs);
  EXPECT_EQ(hit->entry->hits, 4u);
  EXPECT_EQ(hit->map, (std::vector<uint32_t>{2, 1, 0}));
  EXPECT_FALSE(back.store.lookup(11, pair, 1 * kSec).has_value());
  EXPECT_TRUE(back.store.lookup(12, pair, 1 * kSec).has_value());
}

TEST_F(MemoFile, MergeIsTheUnion) {
  MemoDb a, b;
  a.namespaces = b.namespaces = {{11, "ns eleven"}};
  a.store.insert(11, chain, value_for(3, 100), 0).first->hits = 2;
  a.store.insert(11, pair, value_for(2, 300), 0);
  b.store.insert(11, chain_relabelled, value_for(3, 900), 0).first->hits = 5;  // the same pattern
  const Fcg star3 = make_fcg({fl({1, 2}), fl({1, 3}), fl({1, 4})}, kG);
  b.store.insert(11, star3, value_for(3, 400), 0);
  write_memo_file(path("a.h5"), a);
  write_memo_file(path("b.h5"), b);
  const MemoDb m = merge_memo_files({path("a.h5"), path("b.h5")});
  EXPECT_EQ(m.store.size(), 3u);  // chain once, pair, star
  const auto hit = m.store.lookup(11, chain, 1 * kSec);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entry->hits, 7u);
  EXPECT_EQ(hit->entry->value.bytes[0], 100u);  // the first file's value
  EXPECT_TRUE(m.store.lookup(11, star3, 1 * kSec).has_value());
  EXPECT_TRUE(m.store.lookup(11, pair, 1 * kSec).has_value());
  // Written and read again, the merge is the same.
  write_memo_file(path("m.h5"), m);
  EXPECT_EQ(read_memo_file(path("m.h5")).store.size(), 3u);
}

TEST_F(MemoFile, CorruptAndForeignFilesAreRejected) {
  auto rejected = [&](const std::string& p, const std::string& why) {
    try {
      read_memo_file(p);
      ADD_FAILURE() << p << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), p);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  rejected(path("missing.h5"), "no such memo file");
  std::ofstream(path("text.h5")) << "not hdf5\n";
  rejected(path("text.h5"), "not an HDF5 file");
  // A results file is HDF5, but not a memo file.
  write_hdf5_results(path("results.h5"), std::vector<FlowRecord>{}, {}, RunMetadata{});
  rejected(path("results.h5"), "not a wormhole memo file");
  // A memo file cut short.
  MemoDb db;
  db.namespaces = {{1, "x"}};
  db.store.insert(1, chain, value_for(3, 0), 0);
  write_memo_file(path("whole.h5"), db);
  const auto size = std::filesystem::file_size(path("whole.h5"));
  std::filesystem::copy_file(path("whole.h5"), path("cut.h5"));
  std::filesystem::resize_file(path("cut.h5"), size / 2);
  rejected(path("cut.h5"), "");
  // Two files describing one namespace differently cannot be merged.
  MemoDb other = MemoDb{};
  other.namespaces = {{1, "y"}};
  write_memo_file(path("other.h5"), other);
  EXPECT_THROW(merge_memo_files({path("whole.h5"), path("other.h5")}), InputError);
}

namespace {

/// Ten patterns in two namespaces: chains and stars of 2–6 flows, at rates that make them distinct,
/// with hits, insertion times and one rejected.
MemoDb ten_patterns() {
  MemoDb db;
  db.namespaces = {{11, "ns eleven"}, {12, "ns twelve"}};
  for (uint32_t n = 2; n <= 6; ++n) {
    std::vector<FcgFlow> chain_flows, star_flows;
    for (uint32_t i = 0; i < n; ++i) {
      chain_flows.push_back(fl({i, i + 1}, (10 + n) * kG));
      star_flows.push_back(fl({0, i + 1}, (20 + n) * kG));
    }
    db.store.insert(11, make_fcg(chain_flows, kG), value_for(n, 100 * n), n * kUs).first->hits = n;
    const MemoEntry* s = db.store.insert(n % 2 ? 11 : 12, make_fcg(star_flows, kG), value_for(n, 1000 * n), 2 * n * kUs).first;
    s->rejected = n == 4;
  }
  return db;
}

/// Every entry of `db` as text, in its file order.
std::vector<std::string> rows(const MemoDb& db) {
  std::vector<std::string> out;
  for (const MemoEntry* e : db.store.entries())
    out.push_back(std::to_string(e->ns) + " " + std::to_string(e->key.vertices()) + " " +
                  std::to_string(e->value.bytes.at(0)) + " " + std::to_string(e->visible_from) + " " +
                  std::to_string(e->hits) + " " + std::to_string(e->rejected));
  return out;
}

}  // namespace

TEST_F(MemoFile, ShardsWrittenApartMergeIntoTheWholeStore) {
  // A distributed run's ranks each hold the buckets of their shard and write them to a file of their
  // own; merged, the files are the store one process holds, entry for entry, in its order.
  write_memo_file(path("whole.h5"), ten_patterns());
  const std::vector<std::string> whole = rows(read_memo_file(path("whole.h5")));
  ASSERT_EQ(whole.size(), 10u);
  for (uint32_t ranks : {2u, 3u}) {
    std::vector<std::string> shards;
    std::vector<size_t> held;
    for (uint32_t r = 0; r < ranks; ++r) {
      MemoDb db = ten_patterns();
      db.store.keep_shard(r, ranks);
      held.push_back(db.store.size());
      for (const MemoEntry* e : db.store.entries()) EXPECT_EQ(MemoStore::shard_of(e->ns, e->key, ranks), r);
      // may_hold still answers for the whole store: every rank builds the same patterns.
      for (size_t n = 2; n <= 6; ++n) EXPECT_TRUE(db.store.may_hold(11, n));
      EXPECT_THROW(db.store.entry(99), std::out_of_range);
      shards.push_back(path(("shard" + std::to_string(ranks) + std::to_string(r) + ".h5").c_str()));
      write_memo_file(shards.back(), db);
    }
    EXPECT_EQ(std::accumulate(held.begin(), held.end(), size_t(0)), 10u);
    EXPECT_LT(*std::max_element(held.begin(), held.end()), 10u) << ranks << " ranks: one shard holds all";
    EXPECT_EQ(rows(merge_memo_files(shards)), whole) << ranks << " ranks";
  }
}

// Collective patterns round-trip; one that verify mode rejected is not written (it was, without its mark,
// so a warm start from the file replayed what a verified hit had found wrong).
TEST_F(MemoFile, CollectivePatternsRoundTripWithoutTheRejected) {
  MemoDb db;
  db.namespaces = {{11, "CC_MODE 1 ..."}, {12, "CC_MODE 3 ..."}};
  CollectivePattern p;
  p.finish = {7 * kUs, 5 * kUs};
  p.order = {1, 0};
  p.rr_last = {2};
  p.rr_qp = {1};
  p.qps = {{0}};
  p.tx_delta = {1048};
  p.sent_delta = {1000};
  p.hits = 3;
  CollectivePattern wrong = p;
  wrong.rejected = true;
  db.collectives[11].emplace("key-a", p);
  db.collectives[11].emplace("key-b", wrong);
  db.collectives[12].emplace("key-a", p);
  EXPECT_EQ(db.collective_patterns(), 2u);
  write_memo_file(path("c.h5"), db);
  const MemoDb back = read_memo_file(path("c.h5"));
  EXPECT_EQ(back.collective_patterns(), 2u);
  ASSERT_EQ(back.collectives.at(11).size(), 1u);
  const CollectivePattern& q = back.collectives.at(11).at("key-a");
  EXPECT_EQ(q, p);
  EXPECT_EQ(q.hits, 3u);
  EXPECT_FALSE(q.rejected);
  EXPECT_EQ(back.collectives.at(11).count("key-b"), 0u);
  EXPECT_EQ(back.collectives.at(12).at("key-a"), p);
}
