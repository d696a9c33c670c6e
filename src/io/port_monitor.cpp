// The port monitor, monitor.h5 (wormhole/io/port_monitor.h; docs/network-model.md §5.6).
#include "wormhole/io/port_monitor.h"

#include <fmt/core.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>

#include "wormhole/core/input_error.h"
#include "wormhole/io/hdf5_util.h"

namespace wh {

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

// ---------------------------------------------------------------------------------------------
// rows

size_t PortRows::add_row(int64_t t) {
  time_ns.push_back(t);
  const size_t n = rows() * cols;
  util.resize(n, 0.0f);
  paused.resize(n, 0.0f);
  queue.resize(n, 0);
  queue_max.resize(n, 0);
  frozen.resize(n, 0);
  return rows() - 1;
}

void PortRows::erase_front(size_t n) {
  n = std::min(n, rows());
  const auto cut = [&](auto& v, size_t k) { v.erase(v.begin(), v.begin() + static_cast<long>(k)); };
  cut(time_ns, n);
  cut(util, n * cols), cut(paused, n * cols), cut(queue, n * cols), cut(queue_max, n * cols), cut(frozen, n * cols);
}

void PortRows::truncate(size_t n) {
  if (n >= rows()) return;
  time_ns.resize(n);
  util.resize(n * cols), paused.resize(n * cols), queue.resize(n * cols), queue_max.resize(n * cols);
  frozen.resize(n * cols);
}

// ---------------------------------------------------------------------------------------------
// the file

/// The HDF5 side: the file and its datasets time_ns, utilisation, queue_bytes, queue_max_bytes, paused, frozen.
struct PortMonitorFile::Impl {
  std::unique_ptr<h5::Handle> file;
  std::vector<h5::Handle> ds;
};

namespace {
struct PortRow {
  uint32_t port, node, if_index, peer_node, peer_if;
  uint64_t rate_bps;
  const char* role;
  const char* link;
};
}  // namespace

PortMonitorFile::PortMonitorFile(const Network& net, const std::string& path, const std::vector<uint32_t>& ports,
                                 uint64_t interval_ns, uint64_t start_ns, uint64_t end_ns, const std::string& selection)
    : path_(path), h5_(std::make_unique<Impl>()) {
  using namespace h5;
  QuietErrors quiet;
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
  for (uint32_t p : ports) {
    const PortLink& a = net.links()[p];
    const PortLink& b = net.links()[a.peer];
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
  cols_ = std::max<size_t>(ports.size(), 1);
  const size_t chunk_cols = std::min<size_t>(cols_, 65536);
  block_ = block_for(ports.size());
  const bool deflate = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;
  const auto make = [&](const char* name, hid_t type, int rank) {
    const std::string what = std::string("/") + name;
    Handle space = rank == 1 ? make_space({0}, {H5S_UNLIMITED}, "creating " + what)
                             : make_space({0, hsize_t(cols_)}, {H5S_UNLIMITED, hsize_t(cols_)}, "creating " + what);
    Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "creating a property list"), H5Pclose);
    const hsize_t chunk[2] = {hsize_t(block_), hsize_t(chunk_cols)};
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
}

PortMonitorFile::~PortMonitorFile() = default;

size_t PortMonitorFile::block_for(size_t ports) {
  const size_t chunk_cols = std::min<size_t>(std::max<size_t>(ports, 1), 65536);
  return std::max<size_t>(1, std::min<size_t>(256, (size_t(1) << 20) / (4 * chunk_cols)));
}

void PortMonitorFile::append(const PortRows& r) {
  using namespace h5;
  if (r.rows() == 0) return;
  if (r.cols != cols_) throw std::logic_error("monitor.h5: rows of another width than the file's");
  QuietErrors quiet;
  try {
    const hsize_t n = hsize_t(r.rows()), first = hsize_t(rows_), cols = hsize_t(cols_);
    const void* data[] = {r.time_ns.data(), r.util.data(), r.queue.data(), r.queue_max.data(), r.paused.data(),
                          r.frozen.data()};
    const hid_t mem[] = {H5T_NATIVE_INT64, H5T_NATIVE_FLOAT, H5T_NATIVE_UINT32, H5T_NATIVE_UINT32, H5T_NATIVE_FLOAT,
                         H5T_NATIVE_UINT8};
    for (size_t d = 0; d < h5_->ds.size(); ++d) {
      const int rank = d == 0 ? 1 : 2;
      const hsize_t size[2] = {first + n, cols};
      check(H5Dset_extent(h5_->ds[d], size), "extending the time series");
      Handle fspace(check(H5Dget_space(h5_->ds[d]), "getting a space"), H5Sclose);
      const hsize_t start[2] = {first, 0}, count[2] = {n, cols};
      check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr), "selecting rows");
      Handle mspace = make_space(rank == 1 ? std::vector<hsize_t>{n} : std::vector<hsize_t>{n, cols},
                                 rank == 1 ? std::vector<hsize_t>{n} : std::vector<hsize_t>{n, cols},
                                 "creating a memory space");
      check(H5Dwrite(h5_->ds[d], mem[d], mspace, fspace, H5P_DEFAULT, data[d]), "writing the time series");
    }
  } catch (const std::runtime_error& e) {
    throw OutputError(path_, std::string("cannot write: ") + e.what());
  }
  rows_ += r.rows();
}

void PortMonitorFile::truncate(size_t rows) {
  using namespace h5;
  if (rows >= rows_) return;
  QuietErrors quiet;
  try {
    for (size_t d = 0; d < h5_->ds.size(); ++d) {
      const hsize_t size[2] = {hsize_t(rows), hsize_t(cols_)};
      check(H5Dset_extent(h5_->ds[d], size), "shortening the time series");
    }
  } catch (const std::runtime_error& e) {
    throw OutputError(path_, std::string("cannot write: ") + e.what());
  }
  rows_ = rows;
}

void PortMonitorFile::close() {
  if (!h5_->file) return;
  h5_->ds.clear();  // datasets before the file
  const herr_t rc = h5_->file->close();
  h5_->file.reset();
  if (rc < 0) throw OutputError(path_, "cannot write: closing the file failed: " + h5::error_detail());
}

// ---------------------------------------------------------------------------------------------
// the sampler

PortMonitor::PortMonitor(const Network& net, std::vector<uint32_t> ports, uint64_t interval_ns, uint64_t start_ns,
                         uint64_t end_ns, std::unique_ptr<PortMonitorFile> file)
    : net_(net), ports_(std::move(ports)), interval_(static_cast<Time>(interval_ns) * kNs),
      start_(static_cast<Time>(start_ns) * kNs), end_(end_ns ? static_cast<Time>(end_ns) * kNs : kTimeMax),
      last_at_(start_), lazy_start_(start_ns == 0), file_(std::move(file)) {
  const size_t P = ports_.size();
  last_sent_.resize(P);
  last_paused_.resize(P);
  for (size_t i = 0; i < P; ++i) {
    const Port& p = net.ports()[ports_[i]];
    last_sent_[i] = p.sent_bytes;
    last_paused_[i] = p.paused_total + (p.paused_since >= 0 ? start_ - p.paused_since : 0);
  }
  pending_.cols = file_ ? file_->cols() : P;
  if (file_) {
    // One block is buffered: reserve it, so that sampling never reallocates.
    const size_t b = file_->block(), n = b * pending_.cols;
    pending_.time_ns.reserve(b);
    pending_.util.reserve(n), pending_.paused.reserve(n), pending_.queue.reserve(n), pending_.queue_max.reserve(n);
    pending_.frozen.reserve(n);
  }
}

PortMonitor::~PortMonitor() = default;

void PortMonitor::take(Time at, bool first) {
  PortRows& r = pending_;
  const size_t row = r.add_row(at / kNs), P = ports_.size();
  const double scale = 8.0 * double(kSec) / double(interval_);
  for (size_t i = 0; i < P; ++i) {
    const Port& p = net_.ports()[ports_[i]];
    const size_t k = row * r.cols + i;
    r.util[k] = static_cast<float>(double(p.sent_bytes - last_sent_[i]) * scale / double(p.rate_bps));
    last_sent_[i] = p.sent_bytes;
    const Time paused = p.paused_total + (p.paused_since >= 0 ? at - p.paused_since : 0);
    r.paused[k] = static_cast<float>(double(paused - last_paused_[i]) / double(interval_));
    last_paused_[i] = paused;
    r.queue[k] = static_cast<uint32_t>(std::min<uint64_t>(p.bytes_total, UINT32_MAX));
    const uint64_t peak = first ? std::max(p.peak_mark, p.bytes_total) : p.bytes_total;
    r.queue_max[k] = static_cast<uint32_t>(std::min<uint64_t>(peak, UINT32_MAX));
    p.peak_mark = p.bytes_total;
    r.frozen[k] = p.frozen_until > last_at_;
  }
  last_at_ = at;
  ++rows_;
  if (file_ && r.rows() == file_->block()) flush();
}

void PortMonitor::flush() {
  if (!file_) return;
  file_->append(pending_);
  pending_.truncate(0);
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

Time PortMonitor::row_time(uint64_t index) const {
  if (lazy_start_) return kTimeMax;
  const Time at = start_ + static_cast<Time>(index + 1) * interval_;
  return at > end_ ? kTimeMax : at;
}

void PortMonitor::take_rows(size_t n, PortRows& out) {
  n = std::min(n, pending_.rows());
  const size_t k = n * pending_.cols;
  const auto head = [](const auto& v, size_t m) { return std::vector(v.begin(), v.begin() + static_cast<long>(m)); };
  out.cols = pending_.cols;
  out.time_ns = head(pending_.time_ns, n);
  out.util = head(pending_.util, k), out.paused = head(pending_.paused, k);
  out.queue = head(pending_.queue, k), out.queue_max = head(pending_.queue_max, k);
  out.frozen = head(pending_.frozen, k);
  pending_.erase_front(n);
}

void PortMonitor::drop_after(Time end) {
  size_t keep = pending_.rows();
  while (keep > 0 && static_cast<Time>(pending_.time_ns[keep - 1]) * kNs > end) --keep;
  rows_ -= pending_.rows() - keep;
  pending_.truncate(keep);
  end_ = std::min(end_, end);
}

size_t PortMonitor::rows_until(Time end) const {
  if (lazy_start_ || end < start_) return 0;
  return std::min<size_t>(rows_, static_cast<size_t>((std::min(end, end_) - start_) / interval_));
}

Time PortMonitor::row_end(Time t) const {
  if (lazy_start_ || t <= start_) return std::min(t, end_);
  const Time rows = (t - start_ + interval_ - 1) / interval_;
  return std::min(start_ + rows * interval_, end_);
}

void PortMonitor::finish(Time end, bool through_interval) {
  if (through_interval) end = row_end(end);
  sample(end);
  flush();
  if (const size_t keep = rows_until(end); keep < rows_) {
    if (file_) file_->truncate(keep);
    else pending_.truncate(pending_.rows() - std::min(pending_.rows(), rows_ - keep));
    rows_ = keep;
  }
  if (file_ && !closed_) file_->close();
  closed_ = true;
}

}  // namespace wh
