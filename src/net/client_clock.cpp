// ClientClock (include/wormhole/net/client_clock.h): completions delivered in the client's time.
#include "wormhole/net/client_clock.h"

#include "wormhole/net/network.h"

namespace wh {

void ClientClock::queue(const std::vector<Completion>& all) {
  delivering_.erase(delivering_.begin(), delivering_.begin() + static_cast<long>(next_));
  next_ = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    delivering_.push_back(all[i]);
    // Identical events run separately get one each (they pop in any order among themselves: all alike).
    if (i == 0 || !all[i - 1].same_event(all[i])) kernel_.queue().push(all[i].at);
  }
}

namespace {
struct Runner {
  ClientClock& clock;
  EventClient* client;
  NetObserver* observer;
  const bool& stopped;
  std::vector<Completion>& delivering;
  size_t& next;
  uint64_t& completion_events;
  uint64_t& twin_exec;
  void handle(const Event& e) {
    if (e.kind == kClient) {
      twin_exec = UINT64_MAX;  // a client event has no identical twin among the network's events
      if (client) client->client_event(e.target, e.aux);
      return;
    }
    ++completion_events;
    // The completions of the next finishing event (these events pop in the completions' order).
    const size_t first = next;
    twin_exec = next < delivering.size() ? delivering[first].exec : UINT64_MAX;
    while (next < delivering.size() && delivering[next].same_event(delivering[first])) {
      const FlowRecord& r = delivering[next++].rec;
      if (observer) observer->flow_finished(r);
    }
  }
  void on_tick() {}
  bool keep_running() const { return !stopped; }
  void at_barrier() {}  // the client's kernel has none
};
}  // namespace

void ClientClock::run(Time until, EventClient* client, NetObserver* observer, const bool& stopped) {
  Runner runner{*this, client, observer, stopped, delivering_, next_, completion_events_, twin_exec_};
  running_ = true;
  kernel_.run(until, runner);
  running_ = false;
}

}  // namespace wh
