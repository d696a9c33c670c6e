// Generated background load as HPCC ns-3's traffic_gen/traffic_gen.py makes it (docs/workloads.md §11):
// every sending host starts flows at Poisson arrivals whose mean inter-arrival time makes it offer a
// target fraction (`load`) of its link bandwidth; flow sizes come from an empirical CDF (WebSearch,
// FB_Hadoop, ...) and destinations are uniform among the other hosts. The flows are the same FlowSpec
// list a flow file gives (io/flows.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/net/flow_spec.h"

namespace wh {

/// An empirical flow-size distribution in traffic_gen's form: points (size in bytes, cumulative
/// percent), sizes and percents strictly increasing, the first percent 0 and the last 100. Between two
/// points the CDF is linear, so a size is drawn by linear interpolation of the inverse CDF.
struct FlowSizeCdf {
  std::vector<double> bytes;    ///< sizes, bytes, strictly increasing, the last below 2^32
  std::vector<double> percent;  ///< cumulative percent at each size: 0 first, 100 last, strictly increasing
  std::string source;           ///< the file, or "websearch" etc. for a shipped one (for messages)

  /// The mean size in bytes of the piecewise-linear distribution: sum over segments of the segment's
  /// midpoint size × its probability, Σ (x[i-1] + x[i]) / 2 · (p[i] − p[i-1]) / 100 — traffic_gen's
  /// CustomRand.getAvg(), exact for a CDF that is linear between its points.
  double mean_bytes() const;
  /// The size at cumulative probability u in [0, 1): with r = 100·u, the first point i with
  /// r <= percent[i] and x = bytes[i-1] + (bytes[i] − bytes[i-1]) · (r − percent[i-1]) / (percent[i] −
  /// percent[i-1]) (traffic_gen's getValueFromPercentile). Bytes, not rounded.
  double quantile(double u) const;
};

/// Reads a flow-size CDF file in traffic_gen's format: one point per line, "SIZE_BYTES PERCENT"
/// (e.g. "10000 15"); blank lines and lines starting with '#' are skipped.
/// Throws InputError(path, line, problem, fix) if the file cannot be read, a line is not two numbers,
/// a size is negative or not below 2^32 (a flow's size limit), sizes or percents do not strictly
/// increase, the first percent is not 0 or the last not 100 (a CDF in fractions is named as such), or
/// there are fewer than two points.
FlowSizeCdf read_flow_size_cdf(const std::string& path);

/// The CDFs shipped with the program (inputs/cdf/, whose README gives their origin): "websearch"
/// (HPCC's WebSearch_distribution.txt), "fb_hadoop" (FbHdp_distribution.txt) and "alistorage"
/// (AliStorage2019.txt). Names are lower case.
std::vector<std::string> shipped_flow_size_cdf_names();
/// The shipped CDF of that name (any case); throws std::out_of_range for another name.
FlowSizeCdf shipped_flow_size_cdf(const std::string& name);

/// What to generate. Every host in `hosts` sends; a flow's destination is uniform among the hosts of
/// `hosts` whose `domain` differs from the sender's.
struct PoissonLoad {
  FlowSizeCdf cdf;
  double load = 0.3;                ///< offered load per host, a fraction of its bandwidth in (0, 1]
  Time begin = 0, end = 0;          ///< ps: flows start at arrivals in [begin, end)
  std::vector<uint32_t> hosts;      ///< node ids of the sending hosts, ascending, no repeats
  std::vector<uint64_t> host_bps;   ///< each host's link bandwidth, bit/s (> 0), as hosts
  /// Each host's domain (e.g. its server), as hosts, non-decreasing: a host never sends to a host of its
  /// own domain (give every host its own domain for traffic_gen's rule: any other host).
  std::vector<uint32_t> domain;
  uint64_t seed = 1;
  uint32_t pg = 3;                  ///< priority group of every flow (traffic_gen writes 3)
  uint32_t dport = 100;             ///< destination port of every flow (traffic_gen writes 100)
};

/// Mean time between two flows of one host, ps: the time the host needs to send a mean-size flow at
/// `load` × its bandwidth, mean_bytes · 8 / (host_bps · load) s — traffic_gen's avg_inter_arrival =
/// 1 / (bandwidth · load / 8 / avg) (in ns there), with the host's own bandwidth.
double poisson_mean_interarrival_ps(double mean_bytes, uint64_t host_bps, double load);

/// The expected number of flows generate_poisson_flows makes: Σ over hosts of (end − begin) / the
/// host's mean inter-arrival.
double poisson_expected_flows(const PoissonLoad& p);

/// Generates the flows, sorted by start time (ties by sender, then by the sender's order). Each host
/// draws from its own std::mt19937_64 seeded from (seed, host id) — so a host's arrival times and sizes
/// do not change when other hosts are added or removed (its destinations, drawn among them, do), and a
/// longer window only appends flows — taking per flow an
/// inter-arrival time −ln(1 − u) · mean (u uniform in [0, 1) from the top 53 bits of a draw), a
/// destination index ⌊v · n / 2^64⌋ for n candidate destinations, and a size ⌊quantile(u)⌋, at least
/// 1 byte (traffic_gen truncates to whole bytes the same way). The first flow of a host starts one
/// inter-arrival after `begin`; flows whose start (rounded to the ps) would be at or after `end` are not
/// made. Unlike traffic_gen, which drops a host's last flow before the end, every arrival inside the
/// window is a flow. Deterministic for given inputs (the transforms are our own, not the standard
/// library's distributions, whose outputs differ between implementations; std::log1p is the libm's).
/// Throws std::invalid_argument for load outside (0, 1], end <= begin, no hosts, vectors of different
/// lengths, hosts not ascending, a bandwidth of 0, domains not non-decreasing, a host with no
/// destination outside its domain, or more than 50 million expected flows.
std::vector<FlowSpec> generate_poisson_flows(const PoissonLoad& p);

}  // namespace wh
