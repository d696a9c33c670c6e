// Several jobs on one fabric (jobs.h): placement and the JobSet's routing.
#include "wormhole/workload/jobs.h"

#include <algorithm>
#include <fmt/core.h>
#include <stdexcept>

namespace wh {

namespace {
constexpr uint16_t kStart = 3;  // the set's own client event: the job's start time (target unused)
}

std::vector<std::vector<uint32_t>> place_jobs(const std::vector<PlacementRequest>& requests, uint32_t gpus,
                                              uint32_t gps) {
  std::vector<std::vector<uint32_t>> placed(requests.size());
  std::vector<int> owner(gpus, -1);
  for (size_t j = 0; j < requests.size(); ++j) {
    if (requests[j].gpus.empty()) continue;
    for (uint32_t g : requests[j].gpus) {
      if (g >= gpus)
        throw std::invalid_argument(fmt::format("job {}: GPU {} does not exist (the topology has GPUs 0-{})", j, g, gpus - 1));
      if (owner[g] >= 0)
        throw std::invalid_argument(fmt::format("job {}: GPU {} is also job {}'s", j, g, owner[g]));
      owner[g] = static_cast<int>(j);
    }
    placed[j] = requests[j].gpus;
    std::sort(placed[j].begin(), placed[j].end());
  }
  const uint32_t servers = gps ? (gpus + gps - 1) / gps : 1;
  for (size_t j = 0; j < requests.size(); ++j) {
    const PlacementRequest& r = requests[j];
    if (!r.gpus.empty()) continue;
    std::vector<uint32_t> order;  // free GPUs in the policy's order
    if (r.policy == "spread") {
      for (uint32_t k = 0; k < gps; ++k)
        for (uint32_t s = 0; s < servers; ++s)
          if (const uint32_t g = s * gps + k; g < gpus && owner[g] < 0) order.push_back(g);
    } else {
      for (uint32_t g = 0; g < gpus; ++g)
        if (owner[g] < 0) order.push_back(g);
    }
    if (order.size() < r.count)
      throw std::invalid_argument(fmt::format("job {}: {} GPUs asked for, {} left free of the topology's {}", j, r.count,
                                              order.size(), gpus));
    order.resize(r.count);
    for (uint32_t g : order) owner[g] = static_cast<int>(j);
    std::sort(order.begin(), order.end());
    placed[j] = std::move(order);
  }
  return placed;
}

JobSet::JobSet(Network& net, std::vector<JobRun> jobs, NetObserver* forward)
    : net_(net), jobs_(std::move(jobs)), forward_(forward) {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    DriverOptions o = jobs_[j].options;
    o.job = static_cast<uint32_t>(j);
    o.stop_when_done = false;
    try {
      drivers_.push_back(std::make_unique<WorkloadDriver>(net_, *jobs_[j].workload, jobs_[j].layout, o, nullptr, false));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("job {}: {}", j, e.what()));
    }
  }
  net_.set_observer(this);
  net_.set_client(this);
}

JobSet::~JobSet() {
  net_.set_observer(nullptr);
  net_.set_client(nullptr);
}

bool JobSet::run(Time until) {
  start(until);
  stop_if_done();
  if (!stopped_) net_.run(until);
  return finish(until);
}

void JobSet::start(Time until) {
  until_ = until;
  for (size_t j = 0; j < drivers_.size(); ++j) {
    const Time at = jobs_[j].options.start;
    if (at <= 0) drivers_[j]->start(until);
    else net_.schedule_client(at, 0, static_cast<uint16_t>(kStart | (j << 2)));
  }
}

bool JobSet::finish(Time until) {
  bool complete = true;
  for (auto& d : drivers_) complete = d->finish(until) && complete;
  return complete;
}

double JobSet::progress() const {
  double sum = 0;
  int counted = 0;
  for (const auto& d : drivers_)
    if (const double p = d->progress(); p >= 0) sum += p, ++counted;
  return counted ? sum / counted : -1.0;
}

size_t JobSet::job_of_flow(uint32_t id) const {
  for (size_t j = 0; j < drivers_.size(); ++j)
    if (drivers_[j]->owns_flow(id)) return j;
  return drivers_.size();
}

void JobSet::stop_if_done() {
  if (stopped_) return;
  for (const auto& d : drivers_)
    if (!d->done()) return;
  stopped_ = true;
  net_.stop();
}

void JobSet::flow_finished(const FlowRecord& f) {
  if (forward_) forward_->flow_finished(f);
  const size_t j = job_of_flow(f.id);
  if (j == drivers_.size()) return;  // background traffic
  drivers_[j]->flow_finished(f);
  stop_if_done();
}

void JobSet::pfc(const PfcRecord& p) {
  if (forward_) forward_->pfc(p);
}

void JobSet::tick(Time now, uint64_t events, uint64_t flows_finished) {
  if (forward_) forward_->tick(now, events, flows_finished);
}

void JobSet::client_event(uint32_t target, uint16_t aux) {
  const size_t j = aux >> 2;
  if ((aux & 3) == kStart) drivers_[j]->start(until_);
  else drivers_[j]->client_event(target, aux);
  stop_if_done();
}

}  // namespace wh
