// The monitors and the packet trace of one run (monitor_session.h).
#include "monitor_session.h"

#include <fmt/core.h>

#include <cstdio>
#include <filesystem>

#include "monitor_exchange.h"
#include "wormhole/io/flows.h"
#include "wormhole/core/input_error.h"

namespace wh {

MonitorSession::Plan MonitorSession::plan(const SimConfig& cfg, const std::string& results, uint32_t num_nodes,
                                          const std::string& scenario, const std::string& out_dir) {
  namespace fs = std::filesystem;
  Plan p;
  // A scenario asks for a monitor by setting one of its keys itself (its [network] table or --set).
  const auto asked = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      const auto it = cfg.key_origin.find(key);
      if (it != cfg.key_origin.end() && (it->second.first == scenario || it->second.first == "command line")) return true;
    }
    return false;
  };
  const auto where = [&](const std::string& path, const char* name) {
    if (out_dir.empty()) return path;
    return (fs::path(out_dir) / (path.empty() ? fs::path(name) : fs::path(path).filename())).string();
  };
  if (scenario.empty()) {
    if (!cfg.qlen_mon_file.empty()) p.qlen = cfg.qlen_mon_file;
    // Its config always names the file (the reference's turn it off by a start past the stop); settings
    // given on the command line ask for it.
    p.qlen_asked = !p.qlen.empty() && asked({"QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END"});
    p.bw = cfg.bw_mon_file, p.rate = cfg.rate_mon_file, p.cnp = cfg.cnp_mon_file;
    if (cfg.enable_trace && !cfg.trace_output_file.empty() && !cfg.trace_file.empty()) p.trace = cfg.trace_output_file;
  } else {
    if (asked({"QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END"})) {
      p.qlen = where(cfg.qlen_mon_file, "qlen.txt");
      p.qlen_asked = true;
    }
    // SimAI's monitors: each file its scenario or command line names (their settings alone turn none on).
    if (!cfg.bw_mon_file.empty() && asked({"BW_MON_FILE"})) p.bw = where(cfg.bw_mon_file, "bw.txt");
    if (!cfg.rate_mon_file.empty() && asked({"RATE_MON_FILE"})) p.rate = where(cfg.rate_mon_file, "rate.txt");
    if (!cfg.cnp_mon_file.empty() && asked({"CNP_MON_FILE"})) p.cnp = where(cfg.cnp_mon_file, "cnp.txt");
    if (cfg.enable_trace && asked({"ENABLE_TRACE", "TRACE_FILE", "TRACE_OUTPUT_FILE"})) {
      if (cfg.trace_file.empty()) {
        const auto [file, line] = cfg.origin_of("ENABLE_TRACE");
        throw InputError(file, line, "a packet trace is asked for but no TRACE_FILE names the nodes to trace",
                         "set TRACE_FILE to a file of \"n id1 ... idn\" (docs/network-model.md §4)");
      }
      p.trace = where(cfg.trace_output_file, "mix.tr");
    }
  }
  if (!p.trace.empty()) {
    if (!fs::exists(cfg.trace_file)) {  // name the setting, not only the file that is missing
      const auto [file, line] = cfg.origin_of("TRACE_FILE");
      throw InputError(file, line, "TRACE_FILE " + cfg.trace_file + " not found",
                       "give a path relative to the config's folder or to the current directory");
    }
    p.trace_nodes = read_trace_nodes(cfg.trace_file, num_nodes);
  }
  if (cfg.port_mon) p.ports = (fs::path(results).parent_path() / "monitor.h5").string();
  return p;
}

namespace {
/// PORT_MON_NODES as monitor.h5's attribute says it.
std::string selection_text(const SimConfig& cfg) {
  std::string selection = cfg.port_mon_nodes;
  if (selection == "list") {
    selection = std::to_string(cfg.port_mon_node_ids.size());
    for (uint32_t n : cfg.port_mon_node_ids) selection += fmt::format(" {}", n);
  }
  return selection;
}
}  // namespace

MonitorSession::MonitorSession(Network& net, const SimConfig& cfg, Plan plan) : net_(net), cfg_(cfg), plan_(std::move(plan)) {
  const std::string& origin = cfg.path;
  if (!plan_.qlen.empty()) {
    qlen_ = std::make_unique<QlenMonitor>(net, plan_.qlen, cfg.qlen_mon_start_ns, cfg.qlen_mon_end_ns, origin);
    mux_.add(qlen_.get(), qlen_->first());
  }
  if (!plan_.ports.empty()) {
    const std::vector<uint32_t> ports = select_ports(net, cfg);
    auto file = std::make_unique<PortMonitorFile>(net, plan_.ports, ports, cfg.port_mon_interval_ns,
                                                  cfg.port_mon_start_ns, cfg.port_mon_end_ns, selection_text(cfg));
    ports_ = std::make_unique<PortMonitor>(net, ports, cfg.port_mon_interval_ns, cfg.port_mon_start_ns,
                                           cfg.port_mon_end_ns, std::move(file));
    mux_.add(ports_.get(), ports_->first());
  }
  if (!plan_.bw.empty() || !plan_.rate.empty() || !plan_.cnp.empty()) {
    if (cfg.wormhole.enabled)  // SimAI's formats have no place to say a port was frozen (monitor.h5 has)
      std::fprintf(stderr, "wormhole: warning: SimAI's monitor files do not see what Wormhole fast-forwards: a skipped "
                           "flow's bytes, rate changes and CNPs are missing from them (monitor.h5's frozen column "
                           "marks those ports: --set PORT_MON=1)\n");
    simai_ = std::make_unique<SimaiMonitors>(net, cfg, plan_.bw, plan_.rate, plan_.cnp, origin);
    mux_.add(simai_.get(), simai_->first());
  }
  if (qlen_ || ports_ || simai_) net.set_sampler(&mux_, mux_.first());
  if (!plan_.trace.empty()) {
    trace_ = std::make_unique<TraceWriter>(net, plan_.trace, plan_.trace_nodes, origin);
    net.set_packet_trace(trace_.get());
  }
}

MonitorSession::MonitorSession(Network& net, const SimConfig& cfg, Plan plan, MPI_Comm comm,
                               const std::vector<uint32_t>& rank_of)
    : net_(net), cfg_(cfg), plan_(std::move(plan)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool root = rank == 0;
  speak_ = root;
  const std::string& origin = cfg.path;
  if (!plan_.bw.empty() || !plan_.rate.empty() || !plan_.cnp.empty()) {
    // A QP's rate and CNPs live on its sender's rank: SimAI's files are one process's for now.
    if (root)
      std::fprintf(stderr, "wormhole: warning: a distributed run writes none of SimAI's monitor files (BW_MON_FILE, "
                           "RATE_MON_FILE, CNP_MON_FILE); run it in one process for them\n");
    plan_.bw.clear(), plan_.rate.clear(), plan_.cnp.clear();
  }
  if (!plan_.qlen.empty()) {
    qlen_ = std::make_unique<QlenMonitor>(net, root ? plan_.qlen : "", cfg.qlen_mon_start_ns, cfg.qlen_mon_end_ns,
                                          origin, true);
    mux_.add(qlen_.get(), qlen_->first());
  }
  std::vector<uint32_t> selected;
  std::unique_ptr<PortMonitorFile> file;
  if (!plan_.ports.empty()) {
    selected = select_ports(net, cfg);
    std::vector<uint32_t> mine;
    for (uint32_t p : selected)
      if (net.owns_node(net.links()[p].node)) mine.push_back(p);
    if (root)
      file = std::make_unique<PortMonitorFile>(net, plan_.ports, selected, cfg.port_mon_interval_ns,
                                               cfg.port_mon_start_ns, cfg.port_mon_end_ns, selection_text(cfg));
    ports_ = std::make_unique<PortMonitor>(net, std::move(mine), cfg.port_mon_interval_ns, cfg.port_mon_start_ns,
                                           cfg.port_mon_end_ns, nullptr);
    mux_.add(ports_.get(), ports_->first());
  }
  if (qlen_ || ports_) net.set_sampler(&mux_, mux_.first());
  if (!plan_.trace.empty()) {
    trace_ = std::make_unique<TraceWriter>(net, root ? plan_.trace : "", plan_.trace_nodes, origin, true);
    net.set_packet_trace(trace_.get());
  }
  if (any())
    exchange_ = std::make_unique<MonitorExchange>(comm, net, rank_of, qlen_.get(), ports_.get(), std::move(file),
                                                  selected, trace_.get());
}

MonitorSession::~MonitorSession() = default;

WindowHook* MonitorSession::window_hook() const { return exchange_.get(); }

void MonitorSession::print_estimate(const std::vector<FlowSpec>& flows, uint64_t repeat) const {
  if (!trace_) return;
  std::vector<TraceFlow> traced;
  const uint64_t payload = cfg_.packet_payload_size;
  for (const FlowSpec& f : flows) traced.push_back({repeat * ((f.size_bytes + payload - 1) / payload), f.src, f.dst});
  const uint64_t records = estimate_trace_records(net_, plan_.trace_nodes, traced);
  fmt::print("packet trace of {} nodes: about {} records, {:.1f} MB (estimate) -> {}\n", plan_.trace_nodes.size(),
             records, double(records * sizeof(TraceRecord) + 64) / 1e6, plan_.trace);
}

void MonitorSession::warn_empty_qlen(Time end) const {
  // An interrupted run says so itself; the monitor's settings are not the cause.
  if (!qlen_ || !speak_ || !plan_.qlen_asked || qlen_->blocks_written() > 0 || net_.stopped_by_signal()) return;
  const auto where = [&](const char* key) {
    const auto [file, line] = cfg_.origin_of(key);
    if (file == "command line") return std::string("--set");
    return line > 0 ? fmt::format("{} line {}", file, line) : std::string("its default");
  };
  const std::string head = fmt::format("wormhole: warning: {} holds no block: ", plan_.qlen);
  const Time block = qlen_->first_block();
  std::string why;
  if (end < qlen_->first())
    why = fmt::format("the run ended at {:.9g} s, before QLEN_MON_START {:.9g} s ({}); set QLEN_MON_START (ns) within "
                      "the run, e.g. 0 (blocks are written at multiples of 100 ms, so a shorter run gets one; "
                      "PORT_MON 1 samples the queues at any interval into monitor.h5)",
                      double(end) / 1e12, double(qlen_->first()) / 1e12, where("QLEN_MON_START"));
  else if (block == kTimeMax && cfg_.qlen_mon_start_ns % 100 != 0)
    why = fmt::format("its histograms are written at multiples of 100 ms of simulated time (as the reference writes "
                      "them), and its samples, every 100 ns from QLEN_MON_START {} ns ({}), never fall on one; give "
                      "QLEN_MON_START in whole hundreds of ns", cfg_.qlen_mon_start_ns, where("QLEN_MON_START"));
  else if (block == kTimeMax)
    why = fmt::format("its histograms are written at multiples of 100 ms of simulated time (as the reference writes "
                      "them), and QLEN_MON_END {} ns ({}) comes before the first; set it past {:.9g} s",
                      cfg_.qlen_mon_end_ns, where("QLEN_MON_END"), double(qlen_->first_mark()) / 1e12);
  else
    why = fmt::format("its histograms are written at multiples of 100 ms of simulated time (as the reference writes "
                      "them), and the run ended at {:.9g} s, before the first, at {:.9g} s", double(end) / 1e12,
                      double(block) / 1e12);
  std::fprintf(stderr, "%s%s\n", head.c_str(), why.c_str());
}

void MonitorSession::finish(const MonitorEnds& ends, bool stopped) {
  const Time qlen_end = ends.qlen, ports_end = ends.ports;
  if (exchange_) {
    net_.set_packet_trace(nullptr);
    exchange_->finish(qlen_end, ports_end, ends.through_interval, stopped);
    warn_empty_qlen(qlen_end);
    return;
  }
  net_.set_sampler(nullptr, 0);
  net_.set_packet_trace(nullptr);
  if (qlen_) {
    qlen_->finish(qlen_end);
    warn_empty_qlen(qlen_end);
  }
  if (ports_) ports_->finish(ports_end, ends.through_interval);
  if (trace_) trace_->finish();
  if (simai_)
    if (const std::string empty = simai_->finish(ports_end); !empty.empty())
      std::fprintf(stderr, "wormhole: warning: no sample of SimAI's monitors saw traffic (the run ended at %.3f us; "
                           "MON_START %llu us, BW_MON_INTERVAL %llu us, QP_MON_INTERVAL %llu us, MON_END %llu us): only "
                           "the header in%s; shorten the intervals or move MON_START / MON_END\n",
                   double(ports_end) / kUs, static_cast<unsigned long long>(cfg_.mon_start_us),
                   static_cast<unsigned long long>(cfg_.bw_mon_interval_us),
                   static_cast<unsigned long long>(cfg_.qp_mon_interval_us),
                   static_cast<unsigned long long>(cfg_.mon_end_us), empty.c_str());
}

std::string MonitorSession::outputs() const {
  std::string s;
  for (const std::string* p : {&plan_.qlen, &plan_.ports, &plan_.trace, &plan_.bw, &plan_.rate, &plan_.cnp})
    if (!p->empty()) s += " " + *p;
  return s;
}

}  // namespace wh
