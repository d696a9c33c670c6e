// Monitors and the packet trace (wormhole/io/monitors.h; docs/network-model.md §5.3, §5.4, §5.6).
#include "wormhole/io/monitors.h"

#include <fmt/core.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "wormhole/io/hdf5_util.h"
#include "wormhole/core/input_error.h"

namespace wh {

namespace {

constexpr Time kQlenInterval = 100 * kNs;          // the reference's qlen_mon_interval
constexpr uint64_t kQlenDumpNs = 100'000'000;      // and its qlen_dump_interval (100 ms)

FILE* create_file(const std::string& path, const std::string& config_file, const char* key, const char* mode) {
  FILE* f = std::fopen(path.c_str(), mode);
  if (f) return f;
  const int err = errno;
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  throw InputError(config_file, 0, std::string("cannot create ") + key + " " + path + ": " + std::strerror(err),
                   "create the directory " + dir + " first or change " + key);
}

[[noreturn]] void write_failed(const std::string& path, int err, const std::string& kept) {
  throw OutputError(path, std::string("cannot write: ") + std::strerror(err ? err : EIO) + " (" + kept + ")");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// qlen.txt

QlenMonitor::QlenMonitor(const Network& net, const std::string& path, uint64_t start_ns, uint64_t end_ns,
                         const std::string& config_file)
    : net_(net), path_(path), start_ns_(start_ns) {
  // Samples at START, START + 100 ns, ... while the previous one was before END.
  count_ = end_ns > start_ns ? (end_ns - start_ns + 99) / 100 + 1 : 1;
  for (uint32_t v = 0; v < net.nodes().size(); ++v) {
    const Node& n = net.nodes()[v];
    if (!n.is_switch) continue;
    for (uint32_t p = n.first_port; p < n.first_port + n.num_ports; ++p) ports_.push_back(p);
  }
  hist_.assign(ports_.size(), {});
  f_ = create_file(path, config_file, "QLEN_MON_FILE", "w");
}

QlenMonitor::~QlenMonitor() {
  if (f_) std::fclose(f_);
}

Time QlenMonitor::first() const { return static_cast<Time>(start_ns_) * kNs; }

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
  if (std::fwrite(s.data(), 1, s.size(), f_) != s.size()) write_failed(path_, errno, "it may end in part of a block");
}

void QlenMonitor::dump(uint64_t time_ns) {
  std::string s = fmt::format("time: {}\n", time_ns);
  for (size_t i = 0; i < ports_.size(); ++i) {
    const Port& p = net_.ports()[ports_[i]];
    s += fmt::format("{} {}", p.node, p.if_index);
    for (uint32_t c : hist_[i]) s += fmt::format(" {}", c);
    s += '\n';
  }
  write(s);
  if (std::fflush(f_) != 0) write_failed(path_, errno, "it may end in part of a block");
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
  if (std::fclose(f_) != 0) {
    f_ = nullptr;
    write_failed(path_, errno, "it may end in part of a block");
  }
  f_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// monitor.h5

std::vector<uint32_t> select_ports(const Network& net, const SimConfig& cfg) {
  std::vector<uint32_t> out;
  const std::vector<Node>& nodes = net.nodes();
  std::vector<uint8_t> chosen(nodes.size(), 0);
  const std::string& sel = cfg.port_mon_nodes;
  if (sel == "list") {
    for (uint32_t n : cfg.port_mon_node_ids) {
      if (n >= nodes.size()) {
        const auto [file, line] = cfg.origin_of("PORT_MON_NODES");
        throw InputError(file, line, fmt::format("PORT_MON_NODES names node {}, but the topology has {} nodes", n, nodes.size()),
                         fmt::format("give node ids below {}, or switches, hosts or all", nodes.size()));
      }
      chosen[n] = 1;
    }
  } else {
    for (uint32_t n = 0; n < nodes.size(); ++n)
      chosen[n] = sel == "all" || (sel == "switches") == nodes[n].is_switch;
  }
  for (uint32_t n = 0; n < nodes.size(); ++n)
    if (chosen[n])
      for (uint32_t p = nodes[n].first_port; p < nodes[n].first_port + nodes[n].num_ports; ++p) out.push_back(p);
  return out;
}

/// The HDF5 side of PortMonitor: the file, its 2-D datasets and a block of rows not yet written.
struct PortMonitor::Impl {
  std::unique_ptr<h5::Handle> file;
  std::vector<h5::Handle> ds;  // time_ns, utilisation, queue_bytes, queue_max_bytes, paused, frozen
  size_t block = 0, cols = 0, chunk_cols = 0;
  std::vector<int64_t> time_ns;
  std::vector<float> util, paused;
  std::vector<uint32_t> queue, queue_max;
  std::vector<uint8_t> frozen;
  size_t pending = 0;  // rows in the buffers
};

namespace {
struct PortRow {
  uint32_t port, node, if_index, peer_node, peer_if;
  uint64_t rate_bps;
  const char* role;
  const char* link;
};
}  // namespace

PortMonitor::PortMonitor(const Network& net, const std::string& path, std::vector<uint32_t> ports,
                         uint64_t interval_ns, uint64_t start_ns, uint64_t end_ns, const std::string& selection)
    : net_(net), path_(path), ports_(std::move(ports)), interval_(static_cast<Time>(interval_ns) * kNs),
      start_(static_cast<Time>(start_ns) * kNs), end_(end_ns ? static_cast<Time>(end_ns) * kNs : kTimeMax),
      last_at_(start_), lazy_start_(start_ns == 0), h5_(std::make_unique<Impl>()) {
  using namespace h5;
  QuietErrors quiet;
  const size_t P = ports_.size();
  last_sent_.resize(P);
  last_paused_.resize(P);
  for (size_t i = 0; i < P; ++i) {
    const Port& p = net.ports()[ports_[i]];
    last_sent_[i] = p.sent_bytes;
    last_paused_[i] = p.paused_total + (p.paused_since >= 0 ? start_ - p.paused_since : 0);
  }
  const hid_t fid = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (fid < 0) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    throw InputError(path, 0, "cannot create the monitor file: " + error_detail(),
                     "create the directory " + (dir.empty() ? std::string(".") : dir) + " first or choose another output folder");
  }
  Impl& h = *h5_;
  h.file = std::make_unique<Handle>(fid, H5Fclose);
  attr_u64(fid, "layout_version", 1);
  attr_u64(fid, "interval_ns", interval_ns);
  attr_u64(fid, "start_ns", start_ns);
  attr_u64(fid, "end_ns", end_ns);
  attr_string(fid, "nodes", selection);
  attr_string(fid, "units",
              "time_ns: ns (the end of each interval); utilisation: bytes whose transmission began in the "
              "interval x 8 / (rate x interval); queue_bytes, queue_max_bytes: bytes; paused: fraction of the "
              "interval; frozen: 1 or 0");
  attr_string(fid, "description",
              "per-port time series, one row per interval from start_ns to end_ns (0: the run's end), one "
              "column per port of /ports: utilisation of the link, the egress queue at the row's instant and "
              "its largest value during the interval (all classes), the fraction of the interval in which the "
              "peer's PFC paused some class, and 1 where Wormhole froze the port during the interval (its "
              "figures are then not measured: the skipped packets never existed)");
  // /ports
  const Handle str = string_type();
  const auto types = compound(sizeof(PortRow), {
      Field{"port", HOFFSET(PortRow, port), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"node", HOFFSET(PortRow, node), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"if_index", HOFFSET(PortRow, if_index), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"peer_node", HOFFSET(PortRow, peer_node), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"peer_if", HOFFSET(PortRow, peer_if), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"rate_bps", HOFFSET(PortRow, rate_bps), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"role", HOFFSET(PortRow, role), str, str},
      Field{"link", HOFFSET(PortRow, link), str, str},
  });
  std::vector<PortRow> rows;
  const auto role = [&](uint32_t n) {
    const Node& x = net.nodes()[n];
    return x.is_nvswitch ? "nvswitch" : x.is_switch ? "switch" : "host";
  };
  for (uint32_t p : ports_) {
    const Port& a = net.ports()[p];
    const Port& b = net.ports()[a.peer];
    const Node& na = net.nodes()[a.node];
    const Node& nb = net.nodes()[b.node];
    const char* link = na.is_nvswitch || nb.is_nvswitch ? "nvlink" : na.is_switch && nb.is_switch ? "fabric" : "nic";
    rows.push_back({p, a.node, a.if_index, b.node, b.if_index, a.rate_bps, role(a.node), link});
  }
  write_table(fid, "ports", types, rows.data(), rows.size(),
              "port: global port id; node, peer_node: node ids; if_index, peer_if: 1-based; rate_bps: bit/s",
              "the monitored ports, one per column of the time series: the egress port of node's interface "
              "if_index toward peer_node; role of node; link nvlink, nic or fabric");
  // The time series: rows unlimited, chunks of about 1 MiB, compressed where HDF5 can.
  h.cols = std::max<size_t>(P, 1);
  h.chunk_cols = std::min<size_t>(h.cols, 65536);
  h.block = std::max<size_t>(1, std::min<size_t>(256, (size_t(1) << 20) / (4 * h.chunk_cols)));
  const bool deflate = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;
  const auto make = [&](const char* name, hid_t type, int rank) {
    const std::string what = std::string("/") + name;
    Handle space = rank == 1 ? make_space({0}, {H5S_UNLIMITED}, "creating " + what)
                             : make_space({0, hsize_t(h.cols)}, {H5S_UNLIMITED, hsize_t(h.cols)}, "creating " + what);
    Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "creating a property list"), H5Pclose);
    const hsize_t chunk[2] = {hsize_t(h.block), hsize_t(h.chunk_cols)};
    check(H5Pset_chunk(dcpl, rank, chunk), "chunking " + what);
    if (deflate) check(H5Pset_deflate(dcpl, 1), "compressing " + what);
    h.ds.push_back(Handle(check(H5Dcreate2(fid, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), "creating " + what),
                          H5Dclose));
  };
  make("time_ns", H5T_STD_I64LE, 1);
  make("utilisation", H5T_IEEE_F32LE, 2);
  make("queue_bytes", H5T_STD_U32LE, 2);
  make("queue_max_bytes", H5T_STD_U32LE, 2);
  make("paused", H5T_IEEE_F32LE, 2);
  make("frozen", H5T_STD_U8LE, 2);
  h.time_ns.resize(h.block);
  h.util.resize(h.block * h.cols);
  h.paused.resize(h.block * h.cols);
  h.queue.resize(h.block * h.cols);
  h.queue_max.resize(h.block * h.cols);
  h.frozen.resize(h.block * h.cols);
}

PortMonitor::~PortMonitor() = default;

void PortMonitor::take(Time at, bool first) {
  Impl& h = *h5_;
  const size_t r = h.pending, P = ports_.size();
  h.time_ns[r] = at / kNs;
  const double scale = 8.0 * double(kSec) / double(interval_);
  for (size_t i = 0; i < P; ++i) {
    const Port& p = net_.ports()[ports_[i]];
    const size_t k = r * h.cols + i;
    h.util[k] = static_cast<float>(double(p.sent_bytes - last_sent_[i]) * scale / double(p.rate_bps));
    last_sent_[i] = p.sent_bytes;
    const Time paused = p.paused_total + (p.paused_since >= 0 ? at - p.paused_since : 0);
    h.paused[k] = static_cast<float>(double(paused - last_paused_[i]) / double(interval_));
    last_paused_[i] = paused;
    h.queue[k] = static_cast<uint32_t>(std::min<uint64_t>(p.bytes_total, UINT32_MAX));
    const uint64_t peak = first ? std::max(p.peak_mark, p.bytes_total) : p.bytes_total;
    h.queue_max[k] = static_cast<uint32_t>(std::min<uint64_t>(peak, UINT32_MAX));
    p.peak_mark = p.bytes_total;
    h.frozen[k] = p.frozen_until > last_at_;
  }
  last_at_ = at;
  ++rows_;
  if (++h.pending == h.block) flush();
}

void PortMonitor::flush() {
  using namespace h5;
  Impl& h = *h5_;
  if (h.pending == 0) return;
  QuietErrors quiet;
  try {
    const hsize_t rows = hsize_t(rows_), n = hsize_t(h.pending), first = rows - n;
    const void* data[] = {h.time_ns.data(), h.util.data(), h.queue.data(), h.queue_max.data(), h.paused.data(),
                          h.frozen.data()};
    const hid_t mem[] = {H5T_NATIVE_INT64, H5T_NATIVE_FLOAT, H5T_NATIVE_UINT32, H5T_NATIVE_UINT32, H5T_NATIVE_FLOAT,
                         H5T_NATIVE_UINT8};
    for (size_t d = 0; d < h.ds.size(); ++d) {
      const int rank = d == 0 ? 1 : 2;
      const hsize_t size[2] = {rows, hsize_t(h.cols)};
      check(H5Dset_extent(h.ds[d], size), "extending the time series");
      Handle fspace(check(H5Dget_space(h.ds[d]), "getting a space"), H5Sclose);
      const hsize_t start[2] = {first, 0}, count[2] = {n, hsize_t(h.cols)};
      check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr), "selecting rows");
      Handle mspace = make_space(rank == 1 ? std::vector<hsize_t>{n} : std::vector<hsize_t>{n, hsize_t(h.cols)},
                                 rank == 1 ? std::vector<hsize_t>{n} : std::vector<hsize_t>{n, hsize_t(h.cols)},
                                 "creating a memory space");
      check(H5Dwrite(h.ds[d], mem[d], mspace, fspace, H5P_DEFAULT, data[d]), "writing the time series");
    }
  } catch (const std::runtime_error& e) {
    throw OutputError(path_, std::string("cannot write: ") + e.what());
  }
  h.pending = 0;
}

Time PortMonitor::sample(Time t) {
  if (lazy_start_) {
    // START 0: the first row is the interval in which the first event happens (an HPCC run's flows
    // start at 2 s: nothing before is worth a row).
    lazy_start_ = false;
    start_ = last_at_ = t / interval_ * interval_;
    if (start_ + interval_ > t) return start_ + interval_;
  }
  // Intervals ending at or before t: the first holds every transmission since the last row, the
  // later ones (no event in them) none.
  bool first = true;
  for (;;) {
    const Time at = start_ + static_cast<Time>(next_) * interval_;
    if (at > t || at > end_) break;
    take(at, first);
    first = false;
    ++next_;
  }
  const Time due = start_ + static_cast<Time>(next_) * interval_;
  return due > end_ ? kTimeMax : due;
}

void PortMonitor::finish(Time end) {
  sample(end);
  flush();
  h5_->ds.clear();  // datasets before the file
  const herr_t rc = h5_->file->close();
  if (rc < 0) throw OutputError(path_, "cannot write: closing the file failed: " + h5::error_detail());
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
                         const std::string& config_file)
    : net_(net), path_(path) {
  traced_.assign(net.nodes().size(), 0);
  for (uint32_t n : nodes)
    if (n < traced_.size()) traced_[n] = 1;
  f_ = create_file(path, config_file, "TRACE_OUTPUT_FILE", "wb");
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
  const Port& pt = net_.ports()[port];
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
  buf_.push_back(r);
  ++records_;
  if (buf_.size() == kTraceBuffer) flush();
}

void TraceWriter::flush() {
  if (buf_.empty()) return;
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

uint64_t estimate_trace_records(const Network& net, const std::vector<uint32_t>& nodes,
                                const std::vector<std::pair<uint64_t, uint32_t>>& flows_packets_hops,
                                const std::vector<std::pair<uint32_t, uint32_t>>& flows_ends) {
  std::vector<uint8_t> traced(net.nodes().size(), 0);
  size_t switches = 0, traced_switches = 0;
  for (uint32_t n : nodes)
    if (n < traced.size()) traced[n] = 1;
  for (uint32_t n = 0; n < net.nodes().size(); ++n)
    if (net.nodes()[n].is_switch) ++switches, traced_switches += traced[n];
  const double share = switches ? double(traced_switches) / double(switches) : 0.0;
  double records = 0;
  for (size_t i = 0; i < flows_packets_hops.size(); ++i) {
    const auto [packets, hops] = flows_packets_hops[i];
    const auto [src, dst] = flows_ends[i];
    // A data packet and its ACK: Dequ at the sender, Recv + Enqu + Dequ per traced switch, Recv at the receiver.
    const double per = (traced[src] + traced[dst]) + 3.0 * share * (hops > 0 ? hops - 1 : 0);
    records += 2.0 * double(packets) * per;
  }
  return static_cast<uint64_t>(records);
}

}  // namespace wh
