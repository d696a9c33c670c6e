// The monitors of a distributed run, gathered to rank 0 (monitor_exchange.h).
#include "monitor_exchange.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>

namespace wh {

namespace {

/// Trace records a rank may keep before every rank hands its own to rank 0 (88 B each: 2.9 MB).
constexpr uint64_t kTraceBatch = uint64_t(1) << 15;

/// One port's figures in one row, as they travel to rank 0.
struct Cell {
  float util, paused;
  uint32_t queue, queue_max;
  uint32_t frozen;
};

void put(std::vector<uint8_t>& b, const void* p, size_t n) {
  const auto* c = static_cast<const uint8_t*>(p);
  b.insert(b.end(), c, c + n);
}

template <class T>
T get(const std::vector<uint8_t>& b, size_t& at) {
  T v;
  if (at + sizeof v > b.size()) throw std::logic_error("qlen dumps: a truncated message");
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

}  // namespace

MonitorExchange::MonitorExchange(MPI_Comm comm, Network& net, const std::vector<uint32_t>& rank_of, QlenMonitor* qlen,
                                 PortMonitor* ports, std::unique_ptr<PortMonitorFile> file,
                                 const std::vector<uint32_t>& selected, TraceWriter* trace)
    : comm_(comm), net_(net), qlen_(qlen), ports_(ports), file_(std::move(file)), trace_(trace) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  block_ = PortMonitorFile::block_for(selected.size());
  // Every rank samples its own ports in the selection's order: rank 0 places them by the map.
  columns_.assign(static_cast<size_t>(size_), {});
  for (uint32_t j = 0; j < selected.size(); ++j)
    columns_[rank_of[net.links()[selected[j]].node]].push_back(j);
}

MonitorExchange::~MonitorExchange() = default;

void MonitorExchange::gather_ports(size_t n) {
  PortRows mine;
  ports_->take_rows(n, mine);
  std::vector<Cell> cells(mine.rows() * mine.cols);
  for (size_t k = 0; k < cells.size(); ++k)
    cells[k] = {mine.util[k], mine.paused[k], mine.queue[k], mine.queue_max[k], mine.frozen[k]};
  const std::vector<Cell> all = gather_to_root(comm_, cells);
  if (rank_ != 0) return;
  PortRows rows;
  rows.cols = file_->cols();
  for (int64_t t : mine.time_ns) rows.add_row(t);
  size_t at = 0;
  for (const std::vector<uint32_t>& cols : columns_)
    for (size_t r = 0; r < n; ++r)
      for (uint32_t j : cols) {
        const Cell& c = all.at(at++);
        const size_t k = r * rows.cols + j;
        rows.util[k] = c.util, rows.paused[k] = c.paused, rows.queue[k] = c.queue, rows.queue_max[k] = c.queue_max;
        rows.frozen[k] = static_cast<uint8_t>(c.frozen);
      }
  file_->append(rows);
}

void MonitorExchange::gather_dumps() {
  // Every rank has taken the same dumps (those at or before the same instant), each of its own ports.
  std::vector<uint8_t> bytes;
  for (const QlenMonitor::Dump& d : qlen_->dumps()) {
    const uint32_t lines = static_cast<uint32_t>(d.lines.size());
    put(bytes, &d.time_ns, sizeof d.time_ns);
    put(bytes, &lines, sizeof lines);
    for (uint32_t i = 0; i < lines; ++i) {
      const uint32_t len = static_cast<uint32_t>(d.lines[i].size());
      put(bytes, &d.ports[i], sizeof d.ports[i]);
      put(bytes, &len, sizeof len);
      put(bytes, d.lines[i].data(), len);
    }
  }
  const size_t dumps = qlen_->dumps().size();
  qlen_->dumps().clear();
  // Each rank's length first, so rank 0 can tell the ranks' messages apart.
  const std::vector<uint64_t> sizes = gather_to_root(comm_, std::vector<uint64_t>{bytes.size()});
  const std::vector<uint8_t> all = gather_to_root(comm_, bytes);
  if (rank_ != 0) return;
  std::vector<std::pair<uint64_t, std::map<uint32_t, std::string>>> merged(dumps);
  size_t begin = 0;
  for (uint64_t n : sizes) {
    const std::vector<uint8_t> mine(all.begin() + static_cast<long>(begin), all.begin() + static_cast<long>(begin + n));
    begin += n;
    size_t at = 0;
    for (size_t d = 0; d < dumps; ++d) {
      merged[d].first = get<uint64_t>(mine, at);
      const uint32_t lines = get<uint32_t>(mine, at);
      for (uint32_t i = 0; i < lines; ++i) {
        const uint32_t port = get<uint32_t>(mine, at), len = get<uint32_t>(mine, at);
        if (at + len > mine.size()) throw std::logic_error("qlen dumps: a truncated message");
        merged[d].second[port].assign(reinterpret_cast<const char*>(mine.data() + at), len);
        at += len;
      }
    }
  }
  // One process prints the switch ports in port order (switches ascending, then their interfaces).
  for (const auto& [time_ns, lines] : merged) {
    std::string body;
    for (const auto& [port, line] : lines) body += line;
    qlen_->write_dump(time_ns, body);
  }
}

void MonitorExchange::gather_trace() {
  std::vector<TaggedTrace>& mine = trace_->tagged();
  for (TaggedTrace& t : mine) t.rank = static_cast<uint32_t>(rank_);
  std::vector<TaggedTrace> all = gather_to_root(comm_, mine);
  mine.clear();
  if (rank_ != 0) return;
  // Each rank's records are in the order its events ran; an event runs on one rank, so ordering by the
  // event merges them as one process ran them. A barrier's records come before its instant's events,
  // by the port a freeze was emptying (every rank numbers them alike), as one process empties them.
  std::stable_sort(all.begin(), all.end(), [](const TaggedTrace& a, const TaggedTrace& b) {
    if (a.at.time != b.at.time) return a.at.time < b.at.time;
    if (a.barrier != b.barrier) return a.barrier > b.barrier;
    return a.barrier ? a.at.key < b.at.key : a.at.before(b.at);
  });
  std::vector<TraceRecord> recs(all.size());
  for (size_t i = 0; i < all.size(); ++i) recs[i] = all[i].rec;
  trace_->append(recs.data(), recs.size());
}

uint64_t MonitorExchange::pending() const { return trace_ ? trace_->tagged().size() : 0; }

void MonitorExchange::window_start(Time t, uint64_t most) {
  try {
    if (ports_)
      // A file chunk at a time, once every rank has taken its last row: a long idle stretch between
      // windows never buffers more than a chunk.
      for (;;) {
        const Time target = ports_->row_time(gathered_ + block_ - 1);
        net_.sample_until(std::min(t, target));
        if (target > t) break;
        gather_ports(block_);
        gathered_ += block_;
      }
    net_.sample_until(t);
    if (qlen_ && !qlen_->dumps().empty()) gather_dumps();
    // Records come from events only, so `most` (read before this window's samples) is still current.
    if (trace_ && most >= kTraceBatch) gather_trace();
  } catch (const std::exception& e) {
    // Only rank 0 writes: the other ranks wait in the next collective, so the run cannot go on.
    std::fprintf(stderr, "wormhole: error (rank %d): %s\n", rank_, e.what());
    MPI_Abort(comm_, 1);
  }
}

void MonitorExchange::finish(Time qlen_end, Time ports_end, bool through_interval, bool stopped) {
  // One process samples at every event: up to its last one at least (the ranks' latest, or the stop).
  const Time last = net_.client_now();
  net_.set_sampler(nullptr, 0);
  if (stopped) {
    // The ranks ran on to their window's end before they heard of the stop: take that back.
    if (ports_) ports_->drop_after(last);
    if (qlen_) qlen_->drop_after(last);
    if (trace_) {
      std::vector<TaggedTrace>& mine = trace_->tagged();
      mine.erase(std::remove_if(mine.begin(), mine.end(),
                                [&](const TaggedTrace& t) { return !t.barrier && net_.client_clock().after_stop(t.at, t.exec); }),
                 mine.end());
    }
  }
  // Rank 0 keeps writing errors until every collective is done, then throws the first.
  std::exception_ptr error;
  const auto guard = [&](auto&& step) {
    try {
      step();
    } catch (const std::exception&) {
      if (!error) error = std::current_exception();
    }
  };
  if (ports_) {
    // As one process keeps them (PortMonitor::finish): rows up to keep_to, none after.
    const Time keep_to = through_interval ? ports_->row_end(ports_end) : ports_end;
    const Time end = std::max(keep_to, last);
    for (;;) {
      const Time target = ports_->row_time(gathered_ + block_ - 1);
      ports_->sample(std::min(end, target));
      if (target > end) break;
      guard([&] { gather_ports(block_); });
      gathered_ += block_;
    }
    const size_t rest = ports_->rows().rows();
    guard([&] { gather_ports(rest); });
    gathered_ += rest;
    if (file_) guard([&] { file_->truncate(ports_->rows_until(keep_to)); });
    if (file_) guard([&] { file_->close(); });
  }
  if (qlen_) {
    qlen_->sample(std::max(qlen_end, last));
    guard([&] {
      if (!qlen_->dumps().empty()) gather_dumps();
      qlen_->close();
    });
  }
  if (trace_) guard([&] {
      gather_trace();
      trace_->finish();
    });
  if (error) std::rethrow_exception(error);
}

}  // namespace wh
