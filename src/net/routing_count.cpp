// Size of the routing table of a topology before it is built (wormhole/net/routing.h), for the memory
// estimate at set-up: the same components and attachment classes as Routing::build, all links up.
#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "wormhole/net/routing.h"

namespace wh {

namespace {

struct WordsHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 1469598103934665603ull ^ v.size();
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull, h ^= h >> 29;
    return h;
  }
};

uint32_t find(std::vector<uint32_t>& up, uint32_t v) {
  while (up[v] != v) v = up[v] = up[up[v]];
  return v;
}

}  // namespace

uint64_t Routing::count_entries(uint32_t num_nodes, const std::vector<bool>& is_switch,
                                const std::vector<std::pair<uint32_t, uint32_t>>& links) {
  auto sw = [&](uint32_t v) { return v < is_switch.size() && is_switch[v]; };
  // Components of the switch-only graph (union-find), and their sizes.
  std::vector<uint32_t> up(num_nodes);
  std::iota(up.begin(), up.end(), 0u);
  for (auto [a, b] : links)
    if (a < num_nodes && b < num_nodes && sw(a) && sw(b)) up[find(up, a)] = find(up, b);
  std::vector<uint64_t> size(num_nodes, 0), classes(num_nodes, 0);
  for (uint32_t v = 0; v < num_nodes; ++v)
    if (sw(v)) ++size[find(up, v)];
  // Each host's switch neighbours (one per link: parallel links count), CSR.
  std::vector<uint32_t> off(num_nodes + 1, 0);
  for (auto [a, b] : links)
    if (a < num_nodes && b < num_nodes && sw(a) != sw(b)) ++off[(sw(a) ? b : a) + 1];
  std::partial_sum(off.begin(), off.end(), off.begin());
  std::vector<uint32_t> nb(off.back()), fill(off.begin(), off.end() - 1);
  for (auto [a, b] : links)
    if (a < num_nodes && b < num_nodes && sw(a) != sw(b)) nb[fill[sw(a) ? b : a]++] = sw(a) ? a : b;
  // A class is (component root, sorted neighbour multiset within it).
  std::unordered_set<std::vector<uint32_t>, WordsHash> seen;
  std::vector<uint32_t> key;
  for (uint32_t h = 0; h < num_nodes; ++h) {
    auto first = nb.begin() + off[h], last = nb.begin() + off[h + 1];
    std::sort(first, last, [&](uint32_t x, uint32_t y) {
      const uint32_t rx = find(up, x), ry = find(up, y);
      return rx != ry ? rx < ry : x < y;
    });
    for (auto it = first; it != last;) {
      const uint32_t root = find(up, *it);
      key.assign(1, root);
      for (; it != last && find(up, *it) == root; ++it) key.push_back(*it);
      if (seen.insert(key).second) ++classes[root];
    }
  }
  uint64_t entries = 0;
  for (uint32_t v = 0; v < num_nodes; ++v) entries += size[v] * classes[v];
  return entries;
}

}  // namespace wh
