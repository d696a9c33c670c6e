// Poisson background load from an empirical flow-size CDF (poisson_flows.h), with the semantics of
// HPCC ns-3's traffic_gen.py (read, not copied: the random streams and transforms are our own).
#include "wormhole/io/poisson_flows.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fmt/core.h>

#include "wormhole/core/input_error.h"

namespace wh {
namespace {

/// The shipped CDFs, point for point as in inputs/cdf/ (a unit test compares them with those files).
struct ShippedCdf {
  const char* name;
  const char* file;  ///< its file in inputs/cdf/
  std::vector<std::pair<double, double>> points;
};

const std::vector<ShippedCdf>& shipped() {
  static const std::vector<ShippedCdf> cdfs = {
      {"websearch", "WebSearch_distribution.txt",
       {{0, 0}, {10000, 15}, {20000, 20}, {30000, 30}, {50000, 40}, {80000, 53}, {200000, 60}, {1000000, 70},
        {2000000, 80}, {5000000, 90}, {10000000, 97}, {30000000, 100}}},
      {"fb_hadoop", "FbHdp_distribution.txt",
       {{0, 0}, {100, 1}, {200, 2}, {300, 5}, {350, 15}, {400, 20}, {500, 30}, {600, 40}, {700, 50}, {1000, 60},
        {2000, 67}, {7000, 70}, {30000, 72}, {50000, 82}, {80000, 87}, {120000, 90}, {300000, 95}, {1000000, 97.5},
        {2000000, 99}, {10000000, 100}}},
      {"alistorage", "AliStorage2019.txt",
       {{0, 0}, {4000, 22.93}, {8000, 69.21}, {16000, 80.61}, {32000, 90.47}, {64000, 93.53}, {128000, 96.77},
        {256000, 97.53}, {2000000, 100}}},
  };
  return cdfs;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) from the top 53 bits: every double of the form k / 2^53.
double unit(std::mt19937_64& g) { return double(g() >> 11) * 0x1.0p-53; }

/// Uniform in [0, n): ⌊v · n / 2^64⌋ (bias below n / 2^64, far under any host count's concern).
uint64_t below(std::mt19937_64& g, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(g()) * n) >> 64);
}

constexpr double kMaxExpectedFlows = 50e6;

}  // namespace

double FlowSizeCdf::mean_bytes() const {
  double s = 0;
  for (size_t i = 1; i < bytes.size(); ++i) s += (bytes[i - 1] + bytes[i]) / 2 * (percent[i] - percent[i - 1]);
  return s / 100;
}

double FlowSizeCdf::quantile(double u) const {
  const double r = u * 100;
  // The first point at or above r, from the second on (the first has percent 0).
  const auto it = std::lower_bound(percent.begin() + 1, percent.end(), r);
  const size_t i = it == percent.end() ? percent.size() - 1 : size_t(it - percent.begin());
  return bytes[i - 1] + (bytes[i] - bytes[i - 1]) * (r - percent[i - 1]) / (percent[i] - percent[i - 1]);
}

FlowSizeCdf read_flow_size_cdf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, 0, "cannot open the flow-size CDF",
                     "check the path, or name a shipped CDF: websearch, fb_hadoop, alistorage");
  FlowSizeCdf c;
  c.source = path;
  const std::string format = "write one point per line: SIZE_BYTES CUMULATIVE_PERCENT, e.g. 10000 15";
  std::string line;
  int n = 0, last_line = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream s(line);
    double x = 0, y = 0;
    std::string extra;
    if (!(s >> x >> y) || (s >> extra)) throw InputError(path, n, "expected two numbers, \"" + line + "\"", format);
    if (!std::isfinite(x) || !std::isfinite(y)) throw InputError(path, n, "a size or percent is not finite", format);
    if (x < 0) throw InputError(path, n, fmt::format("size {} is negative", x), "sizes are bytes, 0 or more");
    if (x >= 4294967296.0)
      throw InputError(path, n, fmt::format("size {} is not below 2^32 bytes, a flow's limit", x),
                       "cap the distribution's sizes below 4294967296 bytes");
    if (y < 0 || y > 100)
      throw InputError(path, n, fmt::format("cumulative percent {} is outside 0-100", y),
                       "give percents (0-100), as traffic_gen's CDF files do");
    if (c.bytes.empty() && y != 0)
      throw InputError(path, n, fmt::format("the first point's percent is {}, not 0", y),
                       "start the CDF with the smallest size at percent 0, e.g. 0 0");
    if (!c.bytes.empty() && !(x > c.bytes.back()))
      throw InputError(path, n, fmt::format("size {} does not increase (the previous point's is {})", x, c.bytes.back()),
                       "list the points by strictly increasing size");
    if (!c.bytes.empty() && !(y > c.percent.back()))
      throw InputError(path, n,
                       fmt::format("cumulative percent {} does not increase (the previous point's is {})", y,
                                   c.percent.back()),
                       "a CDF's percents strictly increase; merge points of equal percent into one");
    c.bytes.push_back(x);
    c.percent.push_back(y);
    last_line = n;
  }
  if (c.bytes.size() < 2)
    throw InputError(path, last_line, "a CDF needs at least two points", "e.g. \"0 0\" and \"1000000 100\"");
  if (c.percent.back() != 100)
    throw InputError(path, last_line, fmt::format("the last point's percent is {}, not 100", c.percent.back()),
                     c.percent.back() <= 1 ? "the percents look like fractions: multiply them by 100"
                                           : "end the CDF at the largest size with percent 100");
  return c;
}

std::vector<std::string> shipped_flow_size_cdf_names() {
  std::vector<std::string> names;
  for (const ShippedCdf& s : shipped()) names.push_back(s.name);
  return names;
}

FlowSizeCdf shipped_flow_size_cdf(const std::string& name) {
  for (const ShippedCdf& s : shipped())
    if (lower(name) == s.name) {
      FlowSizeCdf c;
      c.source = s.name;
      for (const auto& [x, y] : s.points) c.bytes.push_back(x), c.percent.push_back(y);
      return c;
    }
  throw std::out_of_range("no shipped flow-size CDF \"" + name + "\"");
}

double poisson_mean_interarrival_ps(double mean_bytes, uint64_t host_bps, double load) {
  return mean_bytes * 8.0 / (double(host_bps) * load) * double(kSec);
}

double poisson_expected_flows(const PoissonLoad& p) {
  const double mean = p.cdf.mean_bytes();
  double n = 0;
  for (uint64_t bps : p.host_bps) n += double(p.end - p.begin) / poisson_mean_interarrival_ps(mean, bps, p.load);
  return n;
}

std::vector<FlowSpec> generate_poisson_flows(const PoissonLoad& p) {
  if (!(p.load > 0 && p.load <= 1)) throw std::invalid_argument(fmt::format("load {} is not in (0, 1]", p.load));
  if (p.end <= p.begin) throw std::invalid_argument("the window ends before it begins");
  if (p.hosts.empty()) throw std::invalid_argument("no sending hosts");
  if (p.host_bps.size() != p.hosts.size() || p.domain.size() != p.hosts.size())
    throw std::invalid_argument("hosts, host_bps and domain differ in length");
  if (p.cdf.bytes.size() < 2) throw std::invalid_argument("the CDF has fewer than two points");
  for (size_t i = 0; i < p.hosts.size(); ++i) {
    if (p.host_bps[i] == 0) throw std::invalid_argument(fmt::format("host {} has no bandwidth", p.hosts[i]));
    if (i && p.hosts[i] <= p.hosts[i - 1]) throw std::invalid_argument("hosts are not ascending");
    if (i && p.domain[i] < p.domain[i - 1]) throw std::invalid_argument("domains are not non-decreasing");
  }
  const double expected = poisson_expected_flows(p);
  if (expected > kMaxExpectedFlows)
    throw std::invalid_argument(fmt::format("about {:.0f} flows expected, more than the {:.0f} million a run takes",
                                            expected, kMaxExpectedFlows / 1e6));
  // Each domain's span [first, last) in `hosts` (domains are contiguous there: non-decreasing).
  std::vector<size_t> span_begin(p.hosts.size()), span_end(p.hosts.size());
  for (size_t i = 0, j = 0; i < p.hosts.size(); i = j) {
    for (j = i; j < p.hosts.size() && p.domain[j] == p.domain[i]; ++j) {}
    for (size_t k = i; k < j; ++k) span_begin[k] = i, span_end[k] = j;
    if (j - i == p.hosts.size())
      throw std::invalid_argument(fmt::format("host {} has no destination outside its own server", p.hosts[i]));
  }
  const double mean = p.cdf.mean_bytes();
  std::vector<FlowSpec> flows;
  flows.reserve(static_cast<size_t>(expected * 1.01 + 16));
  for (size_t i = 0; i < p.hosts.size(); ++i) {
    std::mt19937_64 g(splitmix64(p.seed ^ splitmix64(p.hosts[i])));
    const double gap = poisson_mean_interarrival_ps(mean, p.host_bps[i], p.load);
    const uint64_t others = p.hosts.size() - (span_end[i] - span_begin[i]);
    double t = double(p.begin);
    for (;;) {
      t += -std::log1p(-unit(g)) * gap;
      const Time start = static_cast<Time>(std::llround(t));
      if (start >= p.end) break;
      uint64_t d = below(g, others);
      if (d >= span_begin[i]) d += span_end[i] - span_begin[i];  // skip the sender's own domain
      const double x = p.cdf.quantile(unit(g));
      FlowSpec f;
      f.src = p.hosts[i];
      f.dst = p.hosts[d];
      f.pg = p.pg;
      f.dport = p.dport;
      f.size_bytes = std::max<uint64_t>(1, static_cast<uint64_t>(x));
      f.start = start;
      flows.push_back(f);
    }
  }
  std::stable_sort(flows.begin(), flows.end(), [](const FlowSpec& a, const FlowSpec& b) { return a.start < b.start; });
  return flows;
}

}  // namespace wh
