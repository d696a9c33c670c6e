// A CcHost for driving a congestion-control algorithm directly in unit tests: it records the
// rate changes (and applies them to the flow, as the network does) and counts timer requests.
#pragma once
#include <cstddef>
#include <vector>

#include "wormhole/net/cc.h"

namespace wh::test {

struct RecordingCcHost final : CcHost {
  struct RateCall {
    uint32_t id;
    uint64_t rate;
    bool retime;
  };
  Time t = 0;
  size_t timer_calls = 0;
  std::vector<RateCall> rates;
  Time now() const override { return t; }
  void set_timer(uint32_t, Flow&, int, Time) override { ++timer_calls; }
  void set_rate(uint32_t id, Flow& f, uint64_t rate_bps, bool retime) override {
    rates.push_back({id, rate_bps, retime});
    f.rate_bps = rate_bps;
  }
};

}  // namespace wh::test
