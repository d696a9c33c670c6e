// Text outputs in the reference byte format (fct.txt, pfc.txt) and the slowdown summary.
#include "wormhole/io/results_writer.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <stdexcept>

#include "wormhole/core/input_error.h"
#include "wormhole/io/rank_select.h"

namespace wh {

namespace {

// Lines are written in 1-MiB buffers, flushed every 16,384 lines, or at the first 256th line 200 ms
// after the last flush (the clock is read every 256 lines): a run that is killed keeps nearly all of
// its lines, and a run finishing millions of flows pays a write(2) per MiB, not one per 4-KiB stdio
// buffer and an lseek(2) per 256 lines (GPT-7B: 59,432 writes and 29,768 lseeks before).
constexpr size_t kBuffer = size_t(1) << 20;
constexpr unsigned kCheckEvery = 256;
constexpr unsigned kFlushLines = 16384;
constexpr auto kFlushAfter = std::chrono::milliseconds(200);

FILE* open_output(const std::string& path, const std::string& config_file, const char* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f) return f;
  const int err = errno;
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const std::string dir = parent.empty() ? std::string(".") : parent;  // (a GCC 12 -Wrestrict false positive on `dir = "."`)
  std::string problem = "cannot create output file ";
  problem += path;
  problem += ": ";
  problem += std::strerror(err);
  std::error_code ec;
  std::string fix;
  if (std::filesystem::is_directory(dir, ec)) {  // the folder is there: the file or the folder is not writable
    fix = "make ";
    fix += path;
    fix += " (or its folder) writable, or change ";
  } else {
    fix = "create the directory ";
    fix += dir;
    fix += " first or change ";
  }
  fix += key;
  throw InputError(config_file, 0, problem, fix);
}


// The zero-padded 8-digit lower-case hex of printf's %08x.
char* put_hex8(char* p, uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 7; i >= 0; --i, v >>= 4) p[i] = kDigits[v & 15];
  return p + 8;
}
template <class T>
char* put_dec(char* p, char* end, T v, char sep) {
  p = std::to_chars(p, end, v).ptr;
  *p = sep;
  return p + 1;
}
}  // namespace

FctLine::FctLine(const FlowRecord& f) {
  // The reference's "%08x %08x %u %u %lu %lu %lu %lu\n", by std::to_chars: a workload run writes
  // millions of lines, and a general formatter spent more on each than the run spent on its flow.
  static_assert(sizeof(f.sport) == 4 && sizeof(f.dport) == 4 && sizeof(f.size_bytes) == 8 && sizeof(f.ideal_fct_ns) == 8,
                "FctLine::data is sized for 32-bit ports and 64-bit figures");
  char* const end = data + sizeof data;
  char* p = put_hex8(data, node_ip(f.src));
  *p++ = ' ';
  p = put_hex8(p, node_ip(f.dst));
  *p++ = ' ';
  p = put_dec(p, end, f.sport, ' ');
  p = put_dec(p, end, f.dport, ' ');
  p = put_dec(p, end, f.size_bytes, ' ');
  p = put_dec(p, end, to_ns(f.start), ' ');
  p = put_dec(p, end, f.fct_ns(), ' ');
  p = put_dec(p, end, f.ideal_fct_ns, '\n');
  size = static_cast<size_t>(p - data);
}

std::string fct_line(const FlowRecord& f) { return std::string(FctLine(f).view()); }

std::string pfc_line(const PfcRecord& p) {
  char buf[96];
  const int n = std::snprintf(buf, sizeof buf, "%" PRIu64 " %u %u %u %u\n", to_ns(p.time), p.node,
                              unsigned(p.node_type), p.if_index, unsigned(p.type));
  return std::string(buf, static_cast<size_t>(n));
}

TextOutputs::TextOutputs(const std::string& fct_path, const std::string& pfc_path,
                         const std::string& config_file) {
  fct_.f = open_output(fct_path, config_file, "FCT_OUTPUT_FILE");
  fct_.path = fct_path;
  try {
    pfc_.f = open_output(pfc_path, config_file, "PFC_OUTPUT_FILE");
    pfc_.path = pfc_path;
  } catch (...) {
    std::fclose(fct_.f);  // the destructor does not run for a throwing constructor
    throw;
  }
  // glibc sizes a buffer it allocates itself by the file's block size (4 KiB), whatever setvbuf asks.
  // Not zeroed: its pages are touched only as lines fill it (a short run's pfc.txt never does).
  for (File* x : {&fct_, &pfc_}) {
    x->buffer = std::make_unique_for_overwrite<char[]>(kBuffer);
    std::setvbuf(x->f, x->buffer.get(), _IOFBF, kBuffer);
  }
}

TextOutputs::~TextOutputs() {
  // No throwing here: a failed final flush cannot be reported from a destructor; a file whose
  // last flush failed was already cut back to its whole lines.
  for (File* x : {&fct_, &pfc_})
    if (x->f) {
      if (std::fflush(x->f) != 0) {
        if (::ftruncate(::fileno(x->f), x->committed) != 0) {}  // best effort: whole lines
      }
      std::fclose(x->f);
    }
}

void TextOutputs::flow_finished(const FlowRecord& f) {
  const FctLine line(f);
  fct_.line(line.data, line.size);
  if (++pending_ % kCheckEvery == 0) maybe_flush();
}

void TextOutputs::pfc(const PfcRecord& p) {
  const std::string line = pfc_line(p);
  pfc_.line(line.data(), line.size());
  if (++pending_ % kCheckEvery == 0) maybe_flush();
}

void TextOutputs::maybe_flush() {
  if (pending_ >= kFlushLines || std::chrono::steady_clock::now() >= next_flush_) flush();
}

void TextOutputs::File::line(const char* data, size_t size) {
  std::fwrite(data, 1, size, f);
  written += static_cast<long>(size);
  ends.push_back(written);
  // stdio writes a full buffer in the middle of fwrite: a failure is acted on at once, before a
  // later write could put whole lines after the broken one.
  if (std::ferror(f)) flush();
}

void TextOutputs::File::flush() {
  // A full disk shows up here rather than silently truncating the results. stdio may have written
  // part of its buffer, i.e. half a line: the file is cut back to its last whole line on disk (the
  // line ends since the last good flush are known), or to that flush's end.
  if (std::fflush(f) == 0 && !std::ferror(f)) {
    committed = written;
    ends.clear();
    return;
  }
  const int err = errno ? errno : EIO;
  std::clearerr(f);
  if (const off_t size = ::lseek(::fileno(f), 0, SEEK_END); size > committed) {
    const auto whole = std::upper_bound(ends.begin(), ends.end(), static_cast<long>(size));
    if (whole != ends.begin()) committed = *std::prev(whole);
  }
  ends.clear();
  written = committed;
  const bool cut = ::ftruncate(::fileno(f), committed) == 0;
  std::fseek(f, committed, SEEK_SET);
  std::string problem = "cannot write: ";
  problem += std::strerror(err);
  problem += cut ? " (the file keeps the " + std::to_string(committed) + " bytes of whole lines written before)"
                 : " (it may end in part of a line)";
  throw OutputError(path, problem);
}

void TextOutputs::flush() {
  pending_ = 0;
  next_flush_ = std::chrono::steady_clock::now() + kFlushAfter;
  fct_.flush();
  pfc_.flush();
}

// Nearest-rank percentile (1-based rank = ceil(pct/100 · n)). Integer arithmetic: ceil(0.99 · n) in
// floating point can land one rank too high for some n.
size_t rank_index(size_t n, unsigned pct) { return std::clamp<size_t>((pct * n + 99) / 100, 1, n) - 1; }

void SlowdownCollector::spill_to(const std::string& dir, size_t in_memory) {
  if (!keep_) return;
  spill_dir_ = dir;
  spill_at_ = in_memory;
  spill_if_due();
}

void SlowdownCollector::spill_if_due() {
  if (figures_.size() < spill_at_) return;
  figures_.spill_to(spill_dir_, "the flows' slowdown figures");
  spill_at_ = SIZE_MAX;
}

void SlowdownCollector::add(const FlowRecord& f) {
  ++total_;
  if (!f.finished()) return;
  const double slowdown = f.slowdown(), ref = f.slowdown_ref();
  const uint64_t fct = f.fct_ns();
  ++finished_;
  max_key_ = std::max(max_key_, order_key(slowdown));
  sum_ += slowdown, ref_sum_ += ref, fct_sum_ += fct;
  if (!keep_) return;
  spill_if_due();
  figures_.push_back({slowdown, ref, fct});
  sample_.add([&](uint64_t* keys) { keys[0] = order_key(slowdown), keys[1] = order_key(ref), keys[2] = fct; });
}

SlowdownStats SlowdownCollector::result() {
  SlowdownStats s;
  s.total = total_;
  s.finished = finished_;
  if (finished_ > 0) fill(s);
  *this = SlowdownCollector{keep_};  // (spill_to is to be called again for a next round)
  return s;
}

void SlowdownCollector::begin_range(uint64_t first) {
  if (!keep_) throw std::logic_error("slowdown statistics: ranges in any order need the figures kept");
  if (!ranges_.empty() && first < ranges_.back().first) out_of_order_ = true;
  ranges_.emplace_back(first, figures_.size());
}

void SlowdownCollector::fill(SlowdownStats& s) {
  if (out_of_order_) {
    // Summed again in id order, range by range: a double sum's bits depend on its order. ranges_ is
    // in the order the figures were added; figures added before any range come first (from id 0).
    struct Segment {
      uint64_t first;     // its first flow id
      size_t begin, end;  // its figures
    };
    std::vector<Segment> segments;
    if (ranges_.front().second != 0) segments.push_back({0, 0, ranges_.front().second});
    for (size_t i = 0; i < ranges_.size(); ++i)
      segments.push_back({ranges_[i].first, ranges_[i].second, i + 1 < ranges_.size() ? ranges_[i + 1].second : figures_.size()});
    std::stable_sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) { return a.first < b.first; });
    sum_ = 0, ref_sum_ = 0;
    for (const Segment& g : segments)
      for (size_t j = g.begin; j < g.end; ++j) {
        const Figures f = figures_[j];
        sum_ += f.slowdown, ref_sum_ += f.ref;
      }
  }
  const double n = double(finished_);
  s.mean = sum_ / n;
  s.ref_mean = ref_sum_ / n;
  s.fct_mean_us = double(fct_sum_) / n / 1000.0;
  if (!keep_) return;
  s.max = from_order_key(max_key_);
  // Series 0 the slowdowns, 1 the reference's, 2 the FCTs; each pass reads the figures in order (a
  // spilled block once). One pass between the samples' brackets (none while the samples hold every
  // figure); four of radix selection where that pass finds a sample misled.
  const uint64_t i50 = rank_index(finished_, 50), i99 = rank_index(finished_, 99);
  const std::vector<std::pair<unsigned, uint64_t>> queries{{0, i50}, {0, i99}, {1, i50}, {1, i99}, {2, i99}};
  const auto read = [&](auto& select) {
    figures_.for_each([&](const Figures& f) {
      const uint64_t keys[3] = {order_key(f.slowdown), order_key(f.ref), f.fct};
      select.count(keys);
    });
  };
  BracketSelection bracket(queries, sample_);
  if (bracket.needs_pass()) read(bracket);
  std::vector<uint64_t> k;
  if (bracket.resolve()) {
    k = bracket.keys();
  } else {
    KeySelection select(queries);
    while (!select.done()) read(select), select.next();
    k = select.keys();
  }
  s.p50 = from_order_key(k[0]), s.p99 = from_order_key(k[1]);
  s.ref_p50 = from_order_key(k[2]), s.ref_p99 = from_order_key(k[3]);
  s.fct_p99_us = double(k[4]) / 1000.0;
}

SlowdownStats slowdown_stats(const std::vector<FlowRecord>& flows) {
  SlowdownCollector c;
  for (const FlowRecord& f : flows) c.add(f);
  return c.result();
}

SlowdownStats slowdown_stats(const FlowResults& flows, uint32_t first, uint32_t end) {
  SlowdownCollector c;
  flows.for_each([&](const FlowRecord& f) { c.add(f); }, first, end);
  return c.result();
}

}  // namespace wh
