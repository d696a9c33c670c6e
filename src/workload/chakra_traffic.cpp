// The expected traffic of a Chakra trace (chakra.h): what a cut of the network over MPI ranks weighs.
#include <algorithm>
#include <map>
#include <tuple>

#include "wormhole/workload/chakra.h"

namespace wh {

std::vector<FlowSpec> expected_traffic(const ChakraTrace& t, const GroupLayout& layout, ZeroChunk zero_chunk) {
  const auto R = static_cast<uint32_t>(t.ranks.size());
  std::vector<uint32_t> everyone(R);
  for (uint32_t r = 0; r < R; ++r) everyone[r] = r;
  // A collective is one instance per (group, k-th of the group at each rank): counted once, at the
  // group's lowest rank. Identical collectives (op, bytes, group) are planned once and counted.
  std::map<std::tuple<int, uint64_t, std::string>, uint64_t> collectives;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes;
  for (uint32_t r = 0; r < R; ++r)
    for (const ChakraNode& n : t.ranks[r]) {
      if (n.kind == ChakraNode::Send && n.bytes > 0 && n.peer != r) bytes[{r, n.peer}] += n.bytes;
      if (n.kind != ChakraNode::Coll || n.bytes == 0) continue;
      const std::vector<uint32_t>& members = n.group.empty() ? everyone : t.groups.at(n.group);
      if (members.size() > 1 && members.front() == r) ++collectives[{static_cast<int>(n.op), n.bytes, n.group}];
    }
  for (const auto& [key, count] : collectives) {
    const auto& [op, size, group] = key;
    const std::vector<uint32_t>& members = group.empty() ? everyone : t.groups.at(group);
    const auto c = static_cast<Collective>(op);
    const uint32_t rings = c == Collective::AllToAll ? 1 : ring_count(layout, members);
    const CollectivePlan p = plan_collective(c, size, members, rings, zero_chunk);
    p.for_each_pair([&](uint32_t i, uint32_t j, uint32_t n) { bytes[{p.members[i], p.members[j]}] += p.chunk * n * count; });
  }
  std::vector<FlowSpec> flows;
  for (const auto& [pair, b] : bytes) {
    FlowSpec f;
    f.src = pair.first;  // rank r runs on GPU r
    f.dst = pair.second;
    f.size_bytes = std::min<uint64_t>(b, UINT32_MAX);
    flows.push_back(f);
  }
  return flows;
}

}  // namespace wh
