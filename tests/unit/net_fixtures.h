// Small networks and flows shared by the network-model tests.
#pragma once
#include <cstdint>

#include "wormhole/io/flows.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"

namespace wh::test {

constexpr uint64_t k100G = 100'000'000'000ull;

/// Hosts 0..n-1 on switch n, all links `rate` and 1 µs with drop probability `error_rate`; link i
/// joins host i and the switch, so host i's NIC is port i and the switch's interface to host i is
/// port n + i.
inline Topology star(uint32_t n, uint64_t rate = k100G, double error_rate = 0) {
  Topology t;
  t.num_nodes = n + 1;
  t.is_switch.assign(n + 1, 0);
  t.is_switch[n] = 1;
  for (uint32_t i = 0; i < n; ++i) t.links.push_back(TopoLink{i, n, rate, 1 * kUs, error_rate, 0});
  return t;
}

/// A flow of `size` bytes from host `src` to host `dst` starting at `start` (ps).
inline FlowSpec flow(uint32_t src, uint32_t dst, uint64_t size, Time start = 0) {
  FlowSpec f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size;
  f.start = start;
  return f;
}

/// Injects one flow at a given time, as a workload driver does when a dependency finishes
/// (install with net.set_client).
class Injector final : public EventClient {
 public:
  Injector(Network& net, FlowSpec spec, Time at) : net_(net), spec_(spec) { net_.schedule_client(at, 0); }
  void client_event(uint32_t, uint16_t) override { id = net_.inject_flow(spec_); }
  uint32_t id = UINT32_MAX;

 private:
  Network& net_;
  FlowSpec spec_;
};

}  // namespace wh::test
