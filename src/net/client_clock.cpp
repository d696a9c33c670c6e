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

struct ClientClock::Runner {
  ClientClock& clock;
  EventClient* client;
  NetObserver* observer;
  const bool& stopped;
  void handle(const Event& e) { clock.handle(e, client, observer); }
  void on_tick() {}
  bool keep_running() const { return !stopped; }
  void at_barrier() {}  // the client's kernel has none
};

void ClientClock::handle(const Event& e, EventClient* client, NetObserver* observer) {
  if (e.kind == kClient) {
    twin_exec_ = UINT64_MAX;  // a client event has no identical twin among the network's events
    if (client) client->client_event(e.target, e.aux);
    return;
  }
  ++completion_events_;
  // The completions of the next finishing event (these events pop in the completions' order).
  const size_t first = next_;
  twin_exec_ = next_ < delivering_.size() ? delivering_[first].exec : UINT64_MAX;
  while (next_ < delivering_.size() && delivering_[next_].same_event(delivering_[first])) {
    const FlowRecord& r = delivering_[next_++].rec;
    if (observer) observer->flow_finished(r);
  }
}

void ClientClock::run(Time until, EventClient* client, NetObserver* observer, const bool& stopped) {
  Runner runner{*this, client, observer, stopped};
  running_ = true;
  kernel_.run(until, runner);
  running_ = false;
}

}  // namespace wh
