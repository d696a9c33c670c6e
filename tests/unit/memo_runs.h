// Runs of small networks in packet mode, with fast-forward, or with memoization, for the memo tests
// (test_memo_replay.cpp, test_memo_follow.cpp).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "net_fixtures.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/memo/memoizer.h"

namespace wh::test {

inline constexpr Time kPacketTime = 83 * kNs;  // one 1,048-B packet at 100 Gb/s, whole ns

/// The reference ring runs' config of `cc` ("dcqcn" or "hpcc"); `qcn` false: no ECN marks, so
/// DCQCN stays at line rate and packet mode is a pure function of the event order.
inline SimConfig config(const std::string& cc = "dcqcn", bool qcn = false) {
  SimConfig c = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_" + cc + ".txt");
  c.enable_qcn = qcn;
  return c;
}

enum class Mode { Packet, FastForward, Memo };

struct Outcome {
  std::vector<Time> fct;  // per flow id, ps
  SkipStats stats;
  MemoStats memo;
  uint64_t patterns_built = 0;  // Memoizer::patterns_built
};

inline Outcome run(const std::vector<FlowSpec>& flows, Mode mode, const FlowSpec* injected = nullptr, Time inject_at = -1,
                   bool skip_back = true, const SimConfig& cfg = config(), double theta = 0.05, bool fast_forward = true,
                   double verify = 0, const Topology& topo = star(6),
                   uint64_t parallel_min_flows = WormholeSettings{}.parallel_min_flows) {
  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.add_flows(flows);
  std::unique_ptr<Injector> inj;
  if (injected) {
    inj = std::make_unique<Injector>(net, *injected, inject_at);
    net.set_client(inj.get());
  }
  WormholeSettings ws;
  ws.enabled = true;
  ws.window = 500;  // 500 µs windows: a period converges 500 µs after it starts
  ws.skip_back = skip_back;
  ws.theta = theta;
  ws.fast_forward = fast_forward;
  ws.verify = verify;
  ws.parallel_min_flows = parallel_min_flows;
  std::unique_ptr<FastForward> ff;
  if (mode != Mode::Packet) ff = std::make_unique<FastForward>(net, ws, 1 * kSec);
  MemoDb db;
  std::unique_ptr<Memoizer> memo;
  if (mode == Mode::Memo) memo = std::make_unique<Memoizer>(net, *ff, db, 1, ws.memo_rate_quantum_bps);
  net.run(1 * kSec);
  Outcome o;
  for (uint32_t id = 0; id < net.flow_count(); ++id) o.fct.push_back(net.record(id).finished() ? net.record(id).finish - net.record(id).start : -1);
  if (ff) o.stats = ff->stats();
  if (memo) o.memo = memo->stats(), o.patterns_built = memo->patterns_built();
  return o;
}

/// Expects every flow of `got` to end within two packet times (kPacketTime, ps) of packet mode's `pkt`.
inline void expect_fcts_within_two_packets(const Outcome& got, const Outcome& pkt) {
  for (size_t i = 0; i < pkt.fct.size(); ++i)
    EXPECT_LE(std::abs(got.fct[i] - pkt.fct[i]), 2 * kPacketTime) << "flow " << i << ": packet mode " << pkt.fct[i];
}

}  // namespace wh::test
