// SwitchModel (include/wormhole/net/switch_model.h): HPCC-PINT's utilisation stamp; the per-packet
// decisions are inline in the header (docs/network-model.md §10–§11).
#include "wormhole/net/switch_model.h"

#include <algorithm>
#include <cmath>

#include "wormhole/net/pint.h"

namespace wh {

namespace {
// The reference's fixed-point log2 approximation for PINT (switch-node.cc, log2apprx with
// b = 20, m = 9, l = 20): keep the m most significant bits with randomised rounding.
constexpr int kPintB = 20, kPintM = 9, kPintL = 20;
int logres_shift(int b, int l) {
  static const int data[] = {0, 0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4,
                             5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
  return l - data[b];
}
int log2apprx(int64_t x, Rng& rng) {
  const int64_t x0 = x;
  const int msb = static_cast<int>(std::log2(double(x))) + 1;
  if (msb > kPintM) {
    x = (x >> (msb - kPintM)) << (msb - kPintM);
    const int64_t mask = (int64_t(1) << (msb - kPintM)) - 1;
    if ((x0 & mask) > static_cast<int64_t>(rng.next() & static_cast<uint64_t>(mask))) x += int64_t(1) << (msb - kPintM);
  }
  return static_cast<int>(std::log2(double(x)) * (1 << logres_shift(kPintB, kPintL)));
}
}  // namespace

void SwitchModel::pint_stamp(uint32_t port, Packet& pk, Time now) {
  // The port's utilisation u = qlen·dt/(B·T²) + last_pkt/(B·T) + (T−dt)/T·u_prev in the log
  // domain, as the reference's "approximate calc"; the packet keeps the maximum over its hops.
  Port& p = fab_.ports[port];
  const uint64_t max_rtt_ns = fab_.routing.max_rtt_ns();
  const double T = static_cast<double>(max_rtt_ns);
  uint64_t dt = to_ns(now) - to_ns(p.last_pkt_time);
  if (dt > max_rtt_ns) dt = max_rtt_ns;
  const double B = static_cast<double>(p.rate_bps / 8);
  const double fct = double(1 << logres_shift(kPintB, kPintL));
  const double log_T = std::log2(T) * fct, log_B = std::log2(B) * fct, log_1e9 = std::log2(1e9) * fct;
  double qterm = 0, byte_term = 0, u_term = 0;
  const uint64_t qlen = p.bytes_total;
  if ((qlen >> 8) > 0 && dt > 0)
    qterm = std::pow(2, (log2apprx(int64_t(dt), p.rng) + log2apprx(int64_t(qlen >> 8), p.rng) + log_1e9 - log_B - 2 * log_T) / fct) * 256;
  if (p.last_pkt_size > 0)
    byte_term = std::pow(2, (log2apprx(p.last_pkt_size, p.rng) + log_1e9 - log_B - log_T) / fct);
  if (max_rtt_ns > dt && p.pint_u > 0)
    u_term = std::pow(2, (log2apprx(int64_t(max_rtt_ns - dt), p.rng) +
                          log2apprx(std::llround(p.pint_u * 8192), p.rng) - log_T) / fct) / 8192;
  p.pint_u = qterm + byte_term + u_term;
  const PintCodec codec{.log_base = fab_.params.pint_log_base};
  const uint16_t power = codec.encode(p.pint_u, p.rng);
  if (power > pk.ih.pint_power) pk.ih.pint_power = power;
}

}  // namespace wh
