// Bandwidth figures of a workload run and its CSV report (SimAI's EndToEnd and detailed columns,
// docs/workloads.md §6, plus per-collective and per-iteration tables).
#include "wormhole/io/workload_results.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "wormhole/core/input_error.h"

namespace wh {

namespace {

// Appends t as µs with 3 decimals (whole ns, truncated towards zero). In integers, so the digits are the
// exact ns count, with no floating-point rounding at large times. The report's tables have a cell like
// this per row and phase: std::to_chars, not a format string parsed for each.
void append_us(std::string& s, Time t) {
  const Time ns = t / kNs;
  const uint64_t mag = ns < 0 ? uint64_t(-(ns + 1)) + 1 : uint64_t(ns);
  char buf[32];
  char* p = buf;
  if (ns < 0) *p++ = '-';
  p = std::to_chars(p, buf + sizeof buf, mag / 1000).ptr;
  const uint32_t frac = static_cast<uint32_t>(mag % 1000);
  *p++ = '.';
  *p++ = static_cast<char>('0' + frac / 100);
  *p++ = static_cast<char>('0' + frac / 10 % 10);
  *p++ = static_cast<char>('0' + frac % 10);
  s.append(buf, p);
}

// Appends v with 3 decimals, correctly rounded as printf's "%.3f".
void append_fixed3(std::string& s, double v) {
  char buf[400];  // the widest double in fixed notation: 309 digits before the point
  s.append(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 3).ptr);
}

template <class T>
void append_int(std::string& s, T v) {
  char buf[24];
  s.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

}  // namespace

std::string format_us(Time t) {
  std::string s;
  append_us(s, t);
  return s;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double algbw(uint64_t bytes, Time duration) {
  if (duration <= 0 || bytes == 0) return 0.0;
  return double(bytes) / (double(duration) / double(kSec)) / kGiB;
}

// SimAI appends the share of the total time to each EndToEnd cell: "12.345 (6.78%)".
std::string us_pct(Time t, Time total) {
  const double pct = total > 0 ? 100.0 * double(t) / double(total) : 0.0;
  return fmt::format("{} ({:.2f}%)", format_us(t), pct);
}

// RFC 4180 quoting, for names taken from the workload file (a layer name or path may hold a comma).
std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string end_to_end_csv(const WorkloadReport& r) {
  const EndToEnd& e = r.end_to_end;
  std::string s =
      "File name,Expose DP comm,Expose DP_EP comm,Expose TP comm,Expose_EP_comm,Expose_PP_comm,"
      "bubble time,total comp,total exposed comm,Total time\n";
  const std::string name = std::filesystem::path(r.workload_file).filename().string();
  s += csv_field(name);
  const Time cells[] = {e.exposed_dp, e.exposed_dp_ep, e.exposed_tp, e.exposed_ep, e.exposed_pp, e.bubble,
                        e.total_compute, e.total_exposed};
  for (size_t i = 0; i < std::size(cells); ++i) {
    s += ',';
    // Not split by group (a Chakra trace): empty cells, not 0s that read as "nothing exposed" there.
    if (r.exposure_by_group || i >= 6) s += us_pct(cells[i], e.total);
  }
  s += ',';
  s += format_us(e.total);
  s += '\n';
  return s;
}

// SimAI's column order is fwd, wg, ig (not the Phase order).
constexpr Phase kSimaiOrder[3] = {Phase::Fwd, Phase::Wg, Phase::Ig};

std::string layers_csv(const WorkloadReport& r) {
  std::string s =
      "layer_name,iteration,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,"
      "ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total comm,algbw,busbw,"
      "workload finished at\n";
  std::array<Time, 3> compute{}, exposed{}, comm{};
  for (const LayerRecord& l : r.layers) {
    s += csv_field(l.name);
    s += ',';
    append_int(s, l.iteration);
    for (Phase p : kSimaiOrder) s += ',', append_us(s, l.compute[size_t(p)]);
    for (Phase p : kSimaiOrder) s += ',', append_us(s, l.exposed[size_t(p)]);
    for (Phase p : kSimaiOrder) {
      s += ',', append_us(s, l.comm[size_t(p)]);
      s += ',', append_fixed3(s, l.algbw_gibps(p));
      s += ',', append_fixed3(s, l.busbw_gibps(p));
    }
    s += ',', append_us(s, l.finished);
    s += '\n';
    for (size_t i = 0; i < 3; ++i) {
      compute[i] += l.compute[i];
      exposed[i] += l.exposed[i];
      comm[i] += l.comm[i];
    }
  }
  // As SimAI's SUM row: column sums of the times; a sum of bandwidths means nothing, so those
  // cells (SimAI's "NONE") and the iteration are left empty, which CSV readers take as missing.
  s += "SUM,";
  for (Phase p : kSimaiOrder) s += ',' + format_us(compute[size_t(p)]);
  for (Phase p : kSimaiOrder) s += ',' + format_us(exposed[size_t(p)]);
  for (Phase p : kSimaiOrder) s += ',' + format_us(comm[size_t(p)]) + ",,";
  s += ',' + format_us(r.end_to_end.total) + '\n';
  return s;
}

std::string collectives_csv(const WorkloadReport& r) {
  std::string s =
      "iteration,layer,layer_name,phase,op,group,group_first,ranks,bytes,flows,flow_bytes,start_us,end_us,"
      "duration_us,algbw_GiBps,busbw_GiBps,nvlink_bytes,nic_bytes,fabric_hop_bytes\n";
  for (const CollectiveRecord& c : r.collectives) {
    append_int(s, c.iteration), s += ',';
    append_int(s, c.layer), s += ',';
    s += csv_field(c.layer_name), s += ',';
    s += kPhaseName[size_t(c.phase)], s += ',';
    s += csv_field(c.op), s += ',';
    s += csv_field(c.group), s += ',';
    for (uint64_t v : {uint64_t(c.group_first), uint64_t(c.ranks), uint64_t(c.bytes), uint64_t(c.flows), uint64_t(c.flow_bytes)})
      append_int(s, v), s += ',';
    append_us(s, c.start), s += ',';
    append_us(s, c.end), s += ',';
    append_us(s, c.end - c.start), s += ',';
    append_fixed3(s, c.algbw_gibps()), s += ',';
    append_fixed3(s, c.busbw_gibps()), s += ',';
    append_int(s, c.nvlink_bytes), s += ',';
    append_int(s, c.nic_bytes), s += ',';
    append_int(s, c.fabric_hop_bytes);
    s += '\n';
  }
  return s;
}

std::string gpus_csv(const WorkloadReport& r) {
  std::string s =
      "gpu,compute_us,exposed_us,exposed_tp_us,exposed_dp_us,exposed_ep_us,exposed_dp_ep_us,exposed_pp_us,bubble_us,"
      "update_us,finish_us\n";
  for (size_t g = 0; g < r.per_gpu.size(); ++g) {
    const GpuRecord& x = r.per_gpu[g];
    const std::string finish = x.finish >= 0 ? format_us(x.finish) : "";
    if (!r.exposure_by_group) {  // a Chakra trace: compute, the total exposure (ASTRA-sim's), finish
      s += fmt::format("{},{},{},,,,,,,,{}\n", g, format_us(x.compute), x.finish >= 0 ? format_us(x.exposed()) : "", finish);
      continue;
    }
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", g, format_us(x.compute), format_us(x.exposed()), format_us(x.exposed_tp),
                     format_us(x.exposed_dp), format_us(x.exposed_ep), format_us(x.exposed_dp_ep), format_us(x.exposed_pp), format_us(x.bubble),
                     format_us(x.update), finish);
  }
  return s;
}

std::string iterations_csv(const WorkloadReport& r) {
  std::string s = "iteration,start_us,end_us,time_us,complete\n";
  for (const IterationRecord& it : r.iterations)
    s += fmt::format("{},{},{},{},{}\n", it.index, format_us(it.start), format_us(it.end), format_us(it.end - it.start), it.complete ? 1 : 0);
  return s;
}

[[noreturn]] void throw_write_error(const std::string& path, const std::string& dir, int err) {
  std::string problem = "cannot write the workload report file: ";
  problem += std::strerror(err);
  std::string fix = "create the directory ";
  fix += dir;
  fix += " first (or make it writable) or choose another output directory";
  throw InputError(path, 0, problem, fix);
}

// Writes `text` to `tmp`; returns 0 or the errno of the failure (the partial file is removed).
int write_file(const std::string& tmp, const std::string& text) {
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return errno;
  int err = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno ? errno : EIO;
  // A full disk may surface only at close, when the buffer is flushed.
  if (std::fclose(f) != 0 && err == 0) err = errno ? errno : EIO;
  if (err) std::remove(tmp.c_str());
  return err;
}

}  // namespace

double busbw_factor(const std::string& op, uint32_t ranks) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  if (op == "AllReduce") return 2.0 * (n - 1) / n;
  if (op == "AllGather" || op == "ReduceScatter" || op == "AllToAll") return (n - 1) / n;
  return 0.0;
}

double CollectiveRecord::algbw_gibps() const { return algbw(bytes, end - start); }
double CollectiveRecord::busbw_gibps() const { return algbw_gibps() * busbw_factor(op, ranks); }

double LayerRecord::algbw_gibps(Phase p) const { return algbw(bytes[size_t(p)], comm[size_t(p)]); }
double LayerRecord::busbw_gibps(Phase p) const {
  return algbw_gibps(p) * busbw_factor(op[size_t(p)], ranks[size_t(p)]);
}

const std::vector<std::string>& workload_csv_names() {
  static const std::vector<std::string> names = {"end_to_end.csv", "layers.csv", "collectives.csv", "iterations.csv",
                                                 "gpus.csv"};
  return names;
}

void write_workload_csvs(const std::string& dir, const WorkloadReport& r) {
  namespace fs = std::filesystem;
  const std::string texts[] = {end_to_end_csv(r), layers_csv(r), collectives_csv(r), iterations_csv(r), gpus_csv(r)};
  static_assert(std::size(texts) == 5);
  std::vector<std::pair<std::string, std::string>> files;  // (name, text), in workload_csv_names' order
  for (size_t k = 0; k < std::size(texts); ++k) files.emplace_back(workload_csv_names().at(k), texts[k]);
  // Every file goes to a temporary name first and is renamed only once all of them are written:
  // a reader never sees a truncated file, nor a new end_to_end.csv beside an old layers.csv.
  const std::string suffix = fmt::format(".tmp{}", ::getpid());
  std::vector<std::pair<std::string, std::string>> done;  // (tmp, final)
  const auto discard = [&] {
    for (const auto& [tmp, final_path] : done) std::remove(tmp.c_str());
  };
  const std::string shown_dir = dir.empty() ? std::string(".") : dir;
  for (const auto& [name, text] : files) {
    const std::string path = (fs::path(shown_dir) / name).string();
    const std::string tmp = path + suffix;
    if (const int err = write_file(tmp, text)) {
      discard();
      throw_write_error(path, shown_dir, err);
    }
    done.emplace_back(tmp, path);
  }
  for (size_t i = 0; i < done.size(); ++i) {
    if (std::rename(done[i].first.c_str(), done[i].second.c_str()) != 0) {
      const int err = errno;
      for (size_t j = i; j < done.size(); ++j) std::remove(done[j].first.c_str());
      throw_write_error(done[i].second, shown_dir, err);
    }
  }
}

}  // namespace wh
