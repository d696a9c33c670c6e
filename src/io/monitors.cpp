// Monitors and the packet trace (wormhole/io/monitors.h; docs/network-model.md §5.3, §5.4, §5.6).
#include "wormhole/io/monitors.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>

#include "wormhole/core/input_error.h"

namespace wh {

namespace {

constexpr Time kQlenInterval = 100 * kNs;          // the reference's qlen_mon_interval
constexpr uint64_t kQlenDumpNs = 100'000'000;      // and its qlen_dump_interval (100 ms)

[[noreturn]] void write_failed(const std::string& path, int err, const std::string& kept) {
  throw OutputError(path, std::string("cannot write: ") + std::strerror(err ? err : EIO) + " (" + kept + ")");
}

}  // namespace

FILE* create_monitor_file(const std::string& path, const std::string& config_file, const char* key, const char* mode) {
  FILE* f = std::fopen(path.c_str(), mode);
  if (f) return f;
  const int err = errno;
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  throw InputError(config_file, 0, std::string("cannot create ") + key + " " + path + ": " + std::strerror(err),
                   "create the directory " + dir + " first or change " + key);
}

// ---------------------------------------------------------------------------------------------
// qlen.txt

QlenMonitor::QlenMonitor(const Network& net, const std::string& path, uint64_t start_ns, uint64_t end_ns,
                         const std::string& config_file, bool deferred)
    : net_(net), path_(path), start_ns_(start_ns), deferred_(deferred) {
  // Samples at START, START + 100 ns, ... while the previous one was before END.
  count_ = samples_ = end_ns > start_ns ? (end_ns - start_ns + 99) / 100 + 1 : 1;
  for (uint32_t v = 0; v < net.nodes().size(); ++v) {
    const Node& n = net.nodes()[v];
    if (!n.is_switch || !net.owns_node(v)) continue;
    for (uint32_t p = n.first_port; p < n.first_port + n.num_ports; ++p) ports_.push_back(p);
  }
  hist_.assign(ports_.size(), {});
  if (!path.empty()) f_ = create_monitor_file(path, config_file, "QLEN_MON_FILE", "w");
}

QlenMonitor::~QlenMonitor() {
  if (f_) std::fclose(f_);
}

Time QlenMonitor::first() const { return static_cast<Time>(start_ns_) * kNs; }

Time QlenMonitor::first_mark() const {
  return static_cast<Time>((start_ns_ + kQlenDumpNs - 1) / kQlenDumpNs * kQlenDumpNs) * kNs;
}

Time QlenMonitor::first_block() const {
  // Later marks are START's offset from the grid away too (100 ms is a whole number of samples).
  const uint64_t mark = static_cast<uint64_t>(first_mark() / kNs);
  if ((mark - start_ns_) % 100 != 0 || (mark - start_ns_) / 100 >= samples_) return kTimeMax;
  return first_mark();
}

void QlenMonitor::add(uint64_t samples) {
  for (size_t i = 0; i < ports_.size(); ++i) {
    const Port& p = net_.ports()[ports_[i]];
    // The reference's MMU counts egress bytes of classes 1-7: control packets bypass it.
    const uint64_t kb = (p.bytes_total - p.queue_bytes[0]) / 1000;
    std::vector<uint32_t>& h = hist_[i];
    if (h.size() <= kb) h.resize(kb + 1, 0);
    h[kb] += static_cast<uint32_t>(samples);
  }
}

void QlenMonitor::write(const std::string& s) {
  if (!f_) return;
  if (std::fwrite(s.data(), 1, s.size(), f_) != s.size()) write_failed(path_, errno, "it may end in part of a block");
}

void QlenMonitor::dump(uint64_t time_ns) {
  if (deferred_) {
    Dump d{time_ns, {}, {}};
    for (size_t i = 0; i < ports_.size(); ++i) {
      const PortLink& p = net_.links()[ports_[i]];
      std::string line = fmt::format("{} {}", p.node, p.if_index);
      for (uint32_t c : hist_[i]) line += fmt::format(" {}", c);
      d.ports.push_back(ports_[i]);
      d.lines.push_back(line + '\n');
    }
    dumps_.push_back(std::move(d));
    return;
  }
  std::string s;
  for (size_t i = 0; i < ports_.size(); ++i) {
    const PortLink& p = net_.links()[ports_[i]];
    s += fmt::format("{} {}", p.node, p.if_index);
    for (uint32_t c : hist_[i]) s += fmt::format(" {}", c);
    s += '\n';
  }
  write_dump(time_ns, s);
}

void QlenMonitor::write_dump(uint64_t time_ns, const std::string& body) {
  if (!f_) return;
  ++written_;
  write(fmt::format("time: {}\n", time_ns) + body);
  if (std::fflush(f_) != 0) write_failed(path_, errno, "it may end in part of a block");
}

void QlenMonitor::drop_after(Time end) {
  // Samples after `end` count only toward dumps after it: dropping those dumps takes them back.
  while (!dumps_.empty() && static_cast<Time>(dumps_.back().time_ns) * kNs > end) dumps_.pop_back();
  const Time start = static_cast<Time>(start_ns_) * kNs;
  const uint64_t limit = end < start ? 0 : static_cast<uint64_t>((end - start) / (100 * kNs)) + 1;
  count_ = std::min(count_, std::max(limit, next_));  // no dump after it from now on
}

Time QlenMonitor::sample(Time t) {
  // Every sample up to t sees the same queues; those at multiples of 100 ms are dumped once counted.
  while (next_ < count_) {
    const uint64_t at_ns = start_ns_ + 100 * next_;
    if (static_cast<Time>(at_ns) * kNs > t) break;
    uint64_t last = std::min<uint64_t>(count_ - 1, (static_cast<uint64_t>(t / kNs) - start_ns_) / 100);
    // Stop at the next dump instant, if it comes first.
    const uint64_t first_dump_ns = (at_ns + kQlenDumpNs - 1) / kQlenDumpNs * kQlenDumpNs;
    const bool dump_here = first_dump_ns <= start_ns_ + 100 * last && (first_dump_ns - start_ns_) % 100 == 0;
    if (dump_here) last = (first_dump_ns - start_ns_) / 100;
    add(last - next_ + 1);
    next_ = last + 1;
    if (dump_here) dump(first_dump_ns);
  }
  return next_ < count_ ? static_cast<Time>(start_ns_ + 100 * next_) * kNs : kTimeMax;
}

void QlenMonitor::finish(Time end) {
  sample(end);
  close();
}

void QlenMonitor::close() {
  if (!f_) return;
  if (std::fclose(f_) != 0) {
    f_ = nullptr;
    write_failed(path_, errno, "it may end in part of a block");
  }
  f_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// the multiplexer

Time SampleMux::first() const {
  Time t = kTimeMax;
  for (const Entry& e : hooks_) t = std::min(t, e.due);
  return t;
}

Time SampleMux::sample(Time t) {
  for (Entry& e : hooks_)
    if (e.due <= t) e.due = e.hook->sample(t);
  return first();
}

// ---------------------------------------------------------------------------------------------
// the packet trace

namespace {
constexpr size_t kTraceBuffer = 1 << 15;  // records (1.5 MiB)
struct TraceHeader {
  char magic[8];
  uint32_t version, record_size;
  uint64_t nodes, ports, records;
  uint8_t reserved[24];
};
static_assert(sizeof(TraceHeader) == 64);
}  // namespace

TraceWriter::TraceWriter(const Network& net, const std::string& path, const std::vector<uint32_t>& nodes,
                         const std::string& config_file, bool deferred)
    : net_(net), path_(path), deferred_(deferred) {
  traced_.assign(net.nodes().size(), 0);
  for (uint32_t n : nodes)
    if (n < traced_.size()) traced_[n] = 1;
  if (path.empty()) return;
  f_ = create_monitor_file(path, config_file, "TRACE_OUTPUT_FILE", "wb");
  TraceHeader h{};
  std::memcpy(h.magic, "WHTRACE1", 8);
  h.version = 1;
  h.record_size = sizeof(TraceRecord);
  h.nodes = net.nodes().size();
  h.ports = net.ports().size();
  if (std::fwrite(&h, sizeof h, 1, f_) != 1 || std::fflush(f_) != 0) write_failed(path_, errno, "nothing written");
  committed_ = sizeof h;
  buf_.reserve(kTraceBuffer);
}

TraceWriter::~TraceWriter() {
  if (f_) std::fclose(f_);
}

void TraceWriter::event(Time t, TraceEvent ev, uint32_t port, const Packet& p, uint64_t qlen, uint8_t cause) {
  const PortLink& pt = net_.links()[port];
  TraceRecord r{};
  r.time_ps = t;
  r.seq = p.type == PktType::Pfc ? 0 : p.seq;
  r.flow = p.type == PktType::Pfc ? UINT32_MAX : p.flow;
  r.node = pt.node;
  r.port = port;
  r.qlen = static_cast<uint32_t>(std::min<uint64_t>(qlen, UINT32_MAX));
  r.size = p.size;
  r.payload = p.payload;
  r.if_index = static_cast<uint16_t>(std::min<uint32_t>(pt.if_index, UINT16_MAX));
  r.event = static_cast<uint8_t>(ev);
  r.type = static_cast<uint8_t>(p.type);
  r.cls = p.type == PktType::Pfc ? p.pfc_class : p.pg;
  r.flags = static_cast<uint8_t>((p.ecn ? 1 : 0) | (p.cnp ? 2 : 0) | (p.retx ? 4 : 0) | (p.pfc_pause ? 8 : 0) |
                                 (ev == TraceEvent::Drop ? (cause & 3) << 4 : 0));
  r.node_type = net_.nodes()[pt.node].is_switch ? 1 : 0;
  if (deferred_) {
    // A barrier (Wormhole's tick) runs at a time no event has run at yet; its work is ordered before
    // the events of its instant, as one process holds it, and within it by the port being emptied
    // (numbered alike on every rank: Network::ports_evacuated).
    const Kernel& k = net_.kernel();
    const bool barrier = k.now() != k.running().time;
    const Event at = barrier ? Event{k.now(), net_.ports_evacuated(), 0, 0, 0} : k.running();
    tagged_.push_back({at, k.events_executed(), barrier ? 1u : 0u, 0, r});
    return;
  }
  buf_.push_back(r);
  ++records_;
  if (buf_.size() == kTraceBuffer) flush();
}

void TraceWriter::append(const TraceRecord* r, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    buf_.push_back(r[i]);
    ++records_;
    if (buf_.size() == kTraceBuffer) flush();
  }
}

void TraceWriter::flush() {
  if (buf_.empty() || !f_) return;
  const size_t n = std::fwrite(buf_.data(), sizeof(TraceRecord), buf_.size(), f_);
  if (n != buf_.size() || std::fflush(f_) != 0) {
    const int err = errno;
    // Whole records only: cut back to what the last good write left.
    std::clearerr(f_);
    const bool cut = ::ftruncate(::fileno(f_), committed_) == 0;
    write_failed(path_, err, cut ? fmt::format("the file keeps the {} records written before",
                                               (committed_ - long(sizeof(TraceHeader))) / long(sizeof(TraceRecord)))
                                 : std::string("it may end in part of a record"));
  }
  committed_ += static_cast<long>(n * sizeof(TraceRecord));
  buf_.clear();
}

void TraceWriter::finish() {
  if (!f_) return;
  flush();
  // The record count in the header says the trace is whole.
  const uint64_t n = records_;
  if (std::fseek(f_, offsetof(TraceHeader, records), SEEK_SET) != 0 || std::fwrite(&n, sizeof n, 1, f_) != 1 ||
      std::fclose(f_) != 0) {
    f_ = nullptr;
    write_failed(path_, errno, "its header's record count may be 0");
  }
  f_ = nullptr;
}

namespace {
// Traced switches on one shortest path from host `src` to host `dst` (ECMP choice per hop by a hash
// of `salt` and the hop; 0 if unreachable).
uint32_t traced_switches_on_path(Network& net, const std::vector<uint8_t>& traced, uint32_t src, uint32_t dst,
                                 uint64_t salt) {
  Routing& r = net.routing();
  const std::vector<PortLink>& ports = net.links();
  auto pick = [&](size_t n, uint32_t hop) {
    uint64_t h = (salt + hop) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    return static_cast<size_t>(h % n);
  };
  const std::span<const uint32_t> nics = r.host_nics(src, dst);
  if (nics.empty()) return 0;
  uint32_t n = ports[ports[nics[pick(nics.size(), 0)]].peer].node, count = 0;
  for (uint32_t hop = 1; n != dst && hop < 64; ++hop) {  // shortest paths: far fewer than 64 hops
    count += traced[n];
    const std::span<const uint32_t> next = r.next_hops(n, dst);
    if (next.empty()) break;
    n = ports[ports[next[pick(next.size(), hop)]].peer].node;
  }
  return count;
}
}  // namespace

uint64_t estimate_trace_records(Network& net, const std::vector<uint32_t>& nodes, const std::vector<TraceFlow>& flows) {
  std::vector<uint8_t> traced(net.nodes().size(), 0);
  for (uint32_t n : nodes)
    if (n < traced.size()) traced[n] = 1;
  double records = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    const TraceFlow& f = flows[i];
    const uint32_t data_sw = traced_switches_on_path(net, traced, f.src, f.dst, 2 * i);
    const uint32_t ack_sw = traced_switches_on_path(net, traced, f.dst, f.src, 2 * i + 1);
    const double per = 2.0 * traced[f.src] + 3.0 * traced[f.dst] + 3.0 * (data_sw + ack_sw);
    records += double(f.packets) * per;
  }
  return static_cast<uint64_t>(records);
}

}  // namespace wh
