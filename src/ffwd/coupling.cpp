// The queues that couple flows into partitions (see coupling.h).
#include "wormhole/ffwd/coupling.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wh {

QueueCoupling::QueueCoupling(const Network& net)
    : net_(net),
      data_users_(net.ports().size(), 0),
      ack_users_(net.ports().size()) {}

std::vector<uint32_t> QueueCoupling::count(uint32_t id, const Paths& p, int sign) {
  std::vector<uint32_t> flipped;
  for (uint32_t port : p.data) {
    const bool before = couples_acks(port);
    data_users_[port] += sign;
    if (couples_acks(port) != before) flipped.push_back(port);
  }
  return flipped;
}

std::vector<uint32_t> QueueCoupling::ack_users_of(const std::vector<uint32_t>& flipped, uint32_t id) const {
  std::vector<uint32_t> out;
  for (uint32_t port : flipped)
    for (uint32_t f : ack_users_[port])
      if (f != id) out.push_back(f);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint32_t> QueueCoupling::add(uint32_t id) {
  Paths p{net_.data_path(id), net_.ack_path(id)};
  const std::vector<uint32_t> flipped = count(id, p, +1);
  for (uint32_t port : p.ack) {
    std::vector<uint32_t>& users = ack_users_[port];
    users.insert(std::upper_bound(users.begin(), users.end(), id), id);
  }
  paths_[id] = std::move(p);
  return ack_users_of(flipped, id);
}

std::vector<uint32_t> QueueCoupling::remove(uint32_t id) {
  auto it = paths_.find(id);
  if (it == paths_.end()) throw std::logic_error("QueueCoupling::remove: flow " + std::to_string(id) + " is not active");
  const Paths p = std::move(it->second);
  paths_.erase(it);
  for (uint32_t port : p.ack) {
    std::vector<uint32_t>& users = ack_users_[port];
    users.erase(std::lower_bound(users.begin(), users.end(), id));
  }
  return ack_users_of(count(id, p, -1), id);
}

std::vector<uint32_t> QueueCoupling::ports(uint32_t id) const {
  const Paths& p = paths_.at(id);
  std::vector<uint32_t> out = p.data;
  for (uint32_t port : p.ack)
    if (couples_acks(port)) out.push_back(port);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace wh
