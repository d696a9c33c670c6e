// Bandwidth figures of a workload run and its CSV report (SimAI's EndToEnd and detailed columns,
// docs/workloads.md §6, plus per-collective and per-iteration tables).
#include "wormhole/io/workload_results.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "wormhole/core/input_error.h"

namespace wh {

std::string format_us(Time t) {
  // In integers, so the digits are the exact ns count, with no floating-point rounding at large times.
  const Time ns = t / kNs;
  const uint64_t mag = ns < 0 ? uint64_t(-(ns + 1)) + 1 : uint64_t(ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double algbw(uint64_t bytes, Time duration) {
  if (duration <= 0 || bytes == 0) return 0.0;
  return double(bytes) / (double(duration) / double(kSec)) / kGiB;
}

std::string gibps(double v) { return fmt::format("{:.3f}", v); }

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
    s += fmt::format(",{}", l.iteration);
    for (Phase p : kSimaiOrder) s += ',' + format_us(l.compute[size_t(p)]);
    for (Phase p : kSimaiOrder) s += ',' + format_us(l.exposed[size_t(p)]);
    for (Phase p : kSimaiOrder) {
      const size_t i = size_t(p);
      s += fmt::format(",{},{},{}", format_us(l.comm[i]), gibps(l.algbw_gibps(p)), gibps(l.busbw_gibps(p)));
    }
    s += ',' + format_us(l.finished) + '\n';
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
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", c.iteration, c.layer,
                     csv_field(c.layer_name), kPhaseName[size_t(c.phase)], csv_field(c.op), csv_field(c.group),
                     c.group_first, c.ranks, c.bytes, c.flows, c.flow_bytes, format_us(c.start), format_us(c.end),
                     format_us(c.end - c.start), gibps(c.algbw_gibps()), gibps(c.busbw_gibps()), c.nvlink_bytes, c.nic_bytes,
                     c.fabric_hop_bytes);
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
