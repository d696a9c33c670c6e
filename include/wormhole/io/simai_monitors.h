// SimAI's monitor files (docs/network-model.md §5.7): what SimAI's ns-3 frontend writes to BW_MON_FILE,
// RATE_MON_FILE and CNP_MON_FILE (astra-sim network_frontend/ns3/common.h, schedule_monitor, and its
// ns-3's SwitchNode::PrintSwitchBw, RdmaHw::PrintHostBW / PrintQPRate / PrintQPCnpNumber). They read
// the network's state at sample instants and change no result.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "wormhole/config/sim_config.h"
#include "wormhole/net/network.h"
#include "wormhole/net/probe.h"

namespace wh {

/// The three SimAI monitors, each a text file of ", "-separated lines under SimAI's header line:
///  * bandwidth, "time, node_id, port_id, bandwidth": every BW_MON_INTERVAL µs from MON_START, one line
///    per port (nodes in id order, ports by interface index from 1) whose transmitted bytes changed
///    since the previous sample: bandwidth = those bytes × 8 / the interval, in Gbit/s ("%f");
///  * QP rate, "time, src, dst, sport, dport, size, curr_rate": every QP_MON_INTERVAL µs from MON_START,
///    one line per unfinished QP its sender's NIC serves (hosts in id order, a NIC's QPs in the order
///    they joined it) whose sending rate (bit/s) differs from the one last printed for it, or was
///    never printed; size = the flow's bytes;
///  * CNPs, "time, src, dst, sport, dport, size, cnp_number": at the same instants, one line per such QP
///    whose count of ACKs/NACKs received with the CNP flag changed since the previous sample.
/// time is the sample's instant in ns; src and dst are node ids. Samples stop before MON_END µs (0: at
/// the run's end). Under Wormhole a fast-forwarded flow sends no packets: its NIC's bytes and its CNPs
/// do not grow while it is skipped, and its rate is the one it was frozen at.
class SimaiMonitors final : public SampleHook {
 public:
  /// Opens the files whose path is not "" (InputError naming `config_file` and the key if one cannot
  /// be created) and writes their header lines.
  SimaiMonitors(const Network& net, const SimConfig& cfg, const std::string& bw, const std::string& rate,
                const std::string& cnp, const std::string& config_file);
  ~SimaiMonitors() override;
  /// The first sample's instant (ps): MON_START.
  Time first() const { return start_; }
  Time sample(Time t) override;
  /// Takes the samples due up to `end` (ps, the run's end) and closes the files. Throws OutputError
  /// on a write error. Returns the bandwidth and rate files that got no line — no sample saw traffic:
  /// MON_START past it, an interval longer than the run, MON_END too early —, space-separated ("" if none).
  std::string finish(Time end);
  /// The files written, space-separated after a leading space ("" if none).
  std::string outputs() const;

 private:
  struct File {
    std::string path;
    FILE* f = nullptr;
    uint64_t lines = 0;  // samples that wrote something
  };
  void write(File& out, const std::string& s);
  void take_bandwidth(Time at);
  void take_qps(Time at);
  Time next_due() const;
  const Network& net_;
  File bw_, rate_, cnp_;
  Time start_, end_, bw_interval_, qp_interval_;
  uint64_t bw_next_ = 0, qp_next_ = 0;  // the next sample's index of each kind
  std::vector<uint64_t> last_sent_;     // per port: transmitted bytes at the previous bandwidth sample
  std::unordered_map<uint32_t, uint64_t> last_rate_;  // per flow: the rate last printed
  std::unordered_map<uint32_t, uint32_t> last_cnps_;  // per flow: the CNPs at the previous sample
};

}  // namespace wh
