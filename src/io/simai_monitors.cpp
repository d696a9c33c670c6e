// SimAI's monitor files (wormhole/io/simai_monitors.h; docs/network-model.md §5.7).
#include "wormhole/io/simai_monitors.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wormhole/core/input_error.h"
#include "wormhole/io/monitors.h"

namespace wh {

SimaiMonitors::SimaiMonitors(const Network& net, const SimConfig& cfg, const std::string& bw, const std::string& rate,
                             const std::string& cnp, const std::string& config_file)
    : net_(net),
      start_(static_cast<Time>(cfg.mon_start_us) * kUs),
      end_(cfg.mon_end_us > 0 ? static_cast<Time>(cfg.mon_end_us) * kUs : kTimeMax),
      bw_interval_(static_cast<Time>(cfg.bw_mon_interval_us) * kUs),
      qp_interval_(static_cast<Time>(cfg.qp_mon_interval_us) * kUs) {
  const struct {
    File& out;
    const std::string& path;
    const char* key;
    const char* header;
  } files[] = {{bw_, bw, "BW_MON_FILE", "time, node_id, port_id, bandwidth\n"},
               {rate_, rate, "RATE_MON_FILE", "time, src, dst, sport, dport, size, curr_rate\n"},
               {cnp_, cnp, "CNP_MON_FILE", "time, src, dst, sport, dport, size, cnp_number\n"}};
  for (const auto& x : files) {
    if (x.path.empty()) continue;
    x.out.path = x.path;
    x.out.f = create_monitor_file(x.path, config_file, x.key, "w");
    write(x.out, x.header);
  }
  last_sent_.assign(net.ports().size(), 0);
}

SimaiMonitors::~SimaiMonitors() {
  for (File* x : {&bw_, &rate_, &cnp_})
    if (x->f) std::fclose(x->f);
}

void SimaiMonitors::write(File& out, const std::string& s) {
  if (std::fwrite(s.data(), 1, s.size(), out.f) != s.size())
    throw OutputError(out.path, std::string("cannot write: ") + std::strerror(errno ? errno : EIO) +
                                    " (it may end in part of a line)");
}

void SimaiMonitors::take_bandwidth(Time at) {
  std::string s;
  const double per_gbit = 8.0 / (double(bw_interval_) / double(kSec)) / 1e9;  // bytes in the interval -> Gbit/s
  for (const Node& n : net_.nodes())
    for (uint32_t p = n.first_port; p < n.first_port + n.num_ports; ++p) {
      if (!net_.owns_node(net_.links()[p].node)) continue;  // another rank's: it sends there
      const Port& port = net_.ports()[p];
      if (port.sent_bytes == last_sent_[p]) continue;
      s += fmt::format("{}, {}, {}, {:f}\n", at / kNs, port.node, port.if_index,
                       double(port.sent_bytes - last_sent_[p]) * per_gbit);
      last_sent_[p] = port.sent_bytes;
    }
  if (!s.empty()) write(bw_, s), ++bw_.lines;
}

void SimaiMonitors::take_qps(Time at) {
  std::string rates, cnps;
  for (const Node& n : net_.nodes()) {
    if (n.is_switch) continue;
    for (uint32_t p = n.first_port; p < n.first_port + n.num_ports; ++p) {
      if (!net_.owns_node(net_.links()[p].node)) continue;  // another rank's host: its QPs are there
      for (uint32_t id : net_.ports()[p].qps) {
        if (net_.flow_finished(id)) continue;  // waiting for its NIC to compact it
        const Flow& f = net_.flow(id);
        const auto line = [&](uint64_t value) {
          return fmt::format("{}, {}, {}, {}, {}, {}, {}\n", at / kNs, f.src, f.dst, f.sport, f.dport, f.size, value);
        };
        if (rate_.f) {
          auto [it, fresh] = last_rate_.try_emplace(id, f.rate_bps);
          if (fresh || it->second != f.rate_bps) rates += line(f.rate_bps);
          it->second = f.rate_bps;
        }
        if (cnp_.f) {
          uint32_t& last = last_cnps_[id];
          if (f.cnps != last) cnps += line(f.cnps);
          last = f.cnps;
        }
      }
    }
  }
  // What the run keeps follows the flows that run: forget the finished ones.
  for (auto it = last_rate_.begin(); it != last_rate_.end();)
    it = net_.flow_finished(it->first) ? last_rate_.erase(it) : ++it;
  for (auto it = last_cnps_.begin(); it != last_cnps_.end();)
    it = net_.flow_finished(it->first) ? last_cnps_.erase(it) : ++it;
  if (!rates.empty()) write(rate_, rates), ++rate_.lines;
  if (!cnps.empty()) write(cnp_, cnps);
}

Time SimaiMonitors::next_due() const {
  const Time bw = bw_.f ? start_ + static_cast<Time>(bw_next_) * bw_interval_ : kTimeMax;
  const Time qp = rate_.f || cnp_.f ? start_ + static_cast<Time>(qp_next_) * qp_interval_ : kTimeMax;
  const Time next = std::min(bw, qp);
  return next < end_ || next == start_ ? next : kTimeMax;  // the first sample is taken whatever MON_END says
}

Time SimaiMonitors::sample(Time t) {
  // Every sample due up to t sees the same state: the first of each kind prints what changed, the others
  // would print nothing (no byte sent, no rate or CNP changed since), so they are skipped, not taken.
  const auto take = [&](uint64_t& next, Time interval, auto&& print) {
    const Time at = start_ + static_cast<Time>(next) * interval;
    if (at > t || (at >= end_ && next > 0)) return;
    print(at);
    next = static_cast<uint64_t>((t - start_) / interval) + 1;  // at <= t, so t >= start_
  };
  if (bw_.f) take(bw_next_, bw_interval_, [&](Time at) { take_bandwidth(at); });
  if (rate_.f || cnp_.f) take(qp_next_, qp_interval_, [&](Time at) { take_qps(at); });
  return next_due();
}

std::string SimaiMonitors::finish(Time end) {
  sample(end);
  // No CNP line is a run without ECN marks; no bandwidth or rate line means no sample saw the traffic.
  std::string empty;
  for (const File* x : {&bw_, &rate_})
    if (x->f && x->lines == 0) empty += " " + x->path;
  for (File* x : {&bw_, &rate_, &cnp_}) {
    if (!x->f) continue;
    FILE* f = x->f;
    x->f = nullptr;
    if (std::fclose(f) != 0)
      throw OutputError(x->path, std::string("cannot write: ") + std::strerror(errno ? errno : EIO) +
                                     " (it may end in part of a line)");
  }
  return empty;
}

std::string SimaiMonitors::outputs() const {
  std::string s;
  for (const File* x : {&bw_, &rate_, &cnp_})
    if (!x->path.empty()) s += " " + x->path;
  return s;
}

}  // namespace wh
