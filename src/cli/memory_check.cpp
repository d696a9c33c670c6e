// The memory estimate at set-up and the refusal of a run that cannot fit (memory_check.h).
#include "memory_check.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/net/memory_estimate.h"

namespace wh {

uint64_t parse_memory_size(const std::string& text) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "none") return 0;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("\"" + text + "\" is not a size");
  }
  const std::string unit = t.substr(used);
  double scale = 0;
  for (const auto& [name, s] : {std::pair<const char*, double>{"", 1}, {"b", 1}, {"kb", 1e3}, {"mb", 1e6},
                                {"gb", 1e9}, {"tb", 1e12}, {"kib", 1024.0}, {"mib", 1048576.0},
                                {"gib", 1073741824.0}, {"tib", 1099511627776.0}})
    if (unit == name) scale = s;
  if (scale == 0) throw std::invalid_argument("\"" + text + "\" has no known unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  const double bytes = v * scale;
  if (!std::isfinite(bytes) || bytes < 1 || bytes > 1.8e19)
    throw std::invalid_argument("\"" + text + "\" is not a size of at least 1 byte");
  return static_cast<uint64_t>(bytes);
}

uint64_t memory_limit(const std::string& option, std::string* source) {
  if (!option.empty()) {
    try {
      const uint64_t v = parse_memory_size(option);
      *source = v ? "--memory-limit" : "no limit: --memory-limit none";
      return v;
    } catch (const std::invalid_argument& e) {
      throw InputError("command line", 0, std::string("--memory-limit: ") + e.what(),
                       "give a size such as 16GB or 512MiB, or none for no limit");
    }
  }
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") {
      // Ranks started together on this machine share its memory.
      uint64_t local = 1;
      for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
        if (const char* s = std::getenv(v); s && std::strtoul(s, nullptr, 10) > 1) {
          local = std::strtoul(s, nullptr, 10);
          break;
        }
      *source = local > 1 ? fmt::format("MemAvailable / {} ranks on this machine", local) : "MemAvailable";
      return kib * 1024 / local;
    }
  *source = "no limit: /proc/meminfo has no MemAvailable";
  return 0;
}

std::string format_bytes(uint64_t b) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double v = double(b);
  int u = 0;
  while (v >= 999.5 && u < 5) v /= 1000, ++u;
  if (u == 0) return fmt::format("{} B", b);
  const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f} {}", v, decimals, kUnits[u]);
}

std::string format_memory_estimate(const MemoryEstimate& e, uint64_t limit, const std::string& source) {
  std::string s = fmt::format("memory estimate: {} at set-up (nodes {}, ports {}, routing {}", format_bytes(e.setup()),
                              format_bytes(e.network.nodes), format_bytes(e.network.ports),
                              format_bytes(e.network.routing));
  if (e.flows) s += ", flows " + format_bytes(e.flows);
  if (e.plans) s += ", collective plans " + format_bytes(e.plans);
  if (e.programs) s += ", GPU programs " + format_bytes(e.programs);
  s += ")";
  if (e.run_memory()) {
    s += fmt::format("; by the end the workload's {} flows' statistics figures take {} in memory", e.run_flow_count,
                     format_bytes(e.run_memory()));
    if (e.run_disk()) s += fmt::format(" and {} on disk beside the results", format_bytes(e.run_disk()));
  }
  s += limit ? fmt::format("; limit {} ({})", format_bytes(limit), source) : "; " + source;
  return s;
}

void check_memory(const MemoryEstimate& e, uint64_t limit, const std::string& source, const std::string& file,
                  int line, bool speak) {
  if (speak) {
    std::printf("%s\n", format_memory_estimate(e, limit, source).c_str());
    std::fflush(stdout);
  }
  if (limit == 0) return;
  if (e.setup() > limit) {
    const NetworkFootprint& n = e.network;
    std::string parts = fmt::format("routing table {}, ports {}", format_bytes(n.routing), format_bytes(n.ports));
    if (e.flows) parts += ", flows " + format_bytes(e.flows);
    if (e.plans) parts += ", collective plans " + format_bytes(e.plans);
    if (e.programs) parts += ", GPU programs " + format_bytes(e.programs);
    throw InputError(file, line,
                     fmt::format("the run would need about {} at set-up ({}), more than the {} limit ({}); nothing "
                                 "was run or written",
                                 format_bytes(e.setup()), parts, format_bytes(limit), source),
                     "simulate fewer GPUs or flows, or use a machine with more memory (MPI ranks on more machines "
                     "share the ports' state among them, but every rank holds the routes, plans and programs); "
                     "--memory-limit SIZE sets the limit, none lifts it");
  }
  if (speak && e.run_memory() && e.setup() + e.run_memory() > limit)
    std::fprintf(stderr,
                 "wormhole: warning: run to its end, the workload's %lu flows' statistics figures take about %s more "
                 "memory: with the set-up's %s that is above the %s limit, so the run may run out of memory before it "
                 "ends (%s)\n",
                 static_cast<unsigned long>(e.run_flow_count), format_bytes(e.run_memory()).c_str(),
                 format_bytes(e.setup()).c_str(), format_bytes(limit).c_str(),
                 e.stopped_early ? "unless its workload.max_time stops it well before; else fewer iterations or GPUs"
                                 : "fewer iterations or GPUs, or workload.max_time to stop it earlier");
}

uint64_t MemoryEstimate::run_memory() const {
  if (distributed) return 0;
  return std::min<uint64_t>(run_flow_count, SlowdownCollector::kInMemoryFigures) * figure_bytes_per_flow();
}

uint64_t MemoryEstimate::run_disk() const {
  return distributed ? 0 : run_flow_count * figure_bytes_per_flow() - run_memory();
}

}  // namespace wh
