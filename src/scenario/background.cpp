// A scenario's background traffic (background.h): a flow file or a generated Poisson load, and its
// outcome at the end of the run.
#include "wormhole/scenario/background.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include <fmt/core.h>

#include "wormhole/core/input_error.h"
#include "wormhole/io/flows.h"
#include "wormhole/io/poisson_flows.h"

namespace wh {

namespace {

std::string us(Time t) { return fmt::format("{:.3f}", double(t) / kUs); }

/// The sending hosts [background] names, ascending.
std::vector<uint32_t> sending_hosts(const Scenario& s, const SimaiTopology& topo, const std::vector<uint32_t>& busy) {
  const BackgroundSpec& b = s.background;
  const Topology& t = topo.topo;
  std::vector<uint32_t> hosts;
  if (b.hosts == "all") {
    for (uint32_t v = 0; v < t.num_nodes; ++v)
      if (!t.is_switch[v]) hosts.push_back(v);
  } else if (b.hosts == "free") {
    const std::set<uint32_t> taken(busy.begin(), busy.end());
    for (uint32_t g = 0; g < topo.gpus; ++g)
      if (!taken.count(g)) hosts.push_back(g);
    if (hosts.empty())
      throw InputError(s.path, b.hosts_line, "background.hosts = \"free\": every GPU runs the workload or a job",
                       "give the background hosts explicitly (\"all\", \"0-15\" or [ids]), or leave GPUs free");
  } else {
    for (uint32_t v : b.host_ids) {
      if (v >= t.num_nodes || t.is_switch[v])
        throw InputError(s.path, b.hosts_line,
                         fmt::format("background.hosts: node {} is not a host of the topology ({} nodes; hosts are its "
                                     "GPUs 0-{})",
                                     v, t.num_nodes, topo.gpus ? topo.gpus - 1 : 0),
                         "list host (GPU) ids only");
      hosts.push_back(v);
    }
    std::sort(hosts.begin(), hosts.end());
  }
  return hosts;
}

}  // namespace

uint64_t host_link_bps(const Topology& topo, uint32_t host) {
  uint64_t bps = 0;
  for (const TopoLink& l : topo.links)
    if (l.a == host || l.b == host)
      if (!topo.nvswitch(l.a == host ? l.b : l.a)) bps += l.rate_bps;
  return bps;
}

std::string Background::describe() const {
  if (!generated) return fmt::format("background: {} flows from {}", flows.size(), source);
  return fmt::format("background: Poisson load {} of {} hosts' links ({:.1f} Gb/s in all), {} CDF (mean {:.0f} B), "
                     "from {} to {} us, seed {}: {} flows ({:.0f} expected)",
                     load, hosts.size(), double(capacity_bps) / 1e9, cdf, mean_size_bytes, us(begin), us(end), seed,
                     flows.size(), expected_flows);
}

Background make_background(const Scenario& s, const SimaiTopology& topo, const std::vector<uint32_t>& busy,
                           std::vector<std::string>* notes) {
  const BackgroundSpec& b = s.background;
  Background out;
  if (!b.file.empty()) {
    out.source = b.file;
    out.flows = read_flows(b.file, topo.topo, notes);
    if (!out.flows.empty()) {
      const Time shift = b.begin - out.flows.front().start;  // starts are sorted
      for (FlowSpec& f : out.flows) f.start += shift;
    }
    return out;
  }
  if (b.cdf.empty()) return out;
  out.source = s.path + " [background]";
  out.generated = true;
  PoissonLoad p;
  p.cdf = b.cdf_shipped ? shipped_flow_size_cdf(b.cdf) : read_flow_size_cdf(b.cdf);
  p.load = b.load;
  p.begin = b.begin;
  p.end = b.end;
  p.seed = b.seed_set ? b.seed : s.net.seed;
  p.hosts = sending_hosts(s, topo, busy);
  const int line = b.hosts_line ? b.hosts_line : b.line;
  for (uint32_t h : p.hosts) {
    p.host_bps.push_back(host_link_bps(topo.topo, h));
    if (p.host_bps.back() == 0)
      throw InputError(s.path, line, fmt::format("background host {} has no NIC link (only NVLink)", h),
                       "send from hosts with a link to a switch");
    // A GPU's server (NVLink domain); a host of an HPCC topology is a domain of its own.
    p.domain.push_back(topo.gpus_per_server && h < topo.gpus ? h / topo.gpus_per_server : h);
  }
  try {
    out.flows = generate_poisson_flows(p);
  } catch (const std::invalid_argument& e) {
    throw InputError(s.path, line, std::string("[background]: ") + e.what(),
                     "send from hosts on at least two servers, over a window that holds fewer flows (shorter "
                     "duration, lower load)");
  }
  out.cdf = p.cdf.source;
  out.mean_size_bytes = p.cdf.mean_bytes();
  out.load = p.load;
  out.begin = p.begin;
  out.end = p.end;
  out.hosts = p.hosts;
  for (uint64_t bps : p.host_bps) out.capacity_bps += bps;
  out.seed = p.seed;
  out.expected_flows = poisson_expected_flows(p);
  return out;
}

BackgroundOutcome background_outcome(const Background& b, const FlowResults& flows, const Network& net,
                                     uint32_t first_id, Time stop) {
  BackgroundOutcome o;
  o.total = b.flows.size();
  uint64_t offered = 0, delivered = 0;
  o.window_end = b.generated ? std::min(b.end, stop) : stop;
  const uint64_t end = uint64_t(first_id) + b.flows.size();
  flows.for_each([&](const FlowRecord& f) {
    o.finished += f.finished();
    if (f.start >= o.window_end) return;
    offered += f.size_bytes;
    if (f.finished()) delivered += f.size_bytes;
    else if (net.flow_live(f.id)) delivered += net.flow(f.id).snd_una;
  }, first_id, end);
  o.slowdown = slowdown_stats(flows, first_id, static_cast<uint32_t>(end));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  o.offered_load = o.achieved_load = nan;
  if (b.generated && o.window_end > b.begin && b.capacity_bps) {
    const double capacity_bits = double(b.capacity_bps) * double(o.window_end - b.begin) / double(kSec);
    o.offered_load = double(offered) * 8 / capacity_bits;
    o.achieved_load = double(delivered) * 8 / capacity_bits;
  }
  return o;
}

std::string format_background_outcome(const Background& b, const BackgroundOutcome& o) {
  std::string s = fmt::format("background: {} of {} flows finished", o.finished, o.total);
  const SlowdownStats& d = o.slowdown;
  if (d.finished)
    s += fmt::format("; slowdown mean {:.3f} p50 {:.3f} p99 {:.3f} max {:.3f} (over the true ideal FCT); FCT mean "
                     "{:.3f} us p99 {:.3f} us",
                     d.mean, d.p50, d.p99, d.max, d.fct_mean_us, d.fct_p99_us);
  if (b.generated && !std::isnan(o.offered_load))
    s += fmt::format("\nbackground load: offered {:.4f}, achieved {:.4f} of the {} sending hosts' {:.1f} Gb/s over "
                     "{}-{} us (set: {})",
                     o.offered_load, o.achieved_load, b.hosts.size(), double(b.capacity_bps) / 1e9, us(b.begin),
                     us(o.window_end), b.load);
  return s;
}

}  // namespace wh
