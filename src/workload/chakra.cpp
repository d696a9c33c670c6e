// Chakra execution traces (chakra.h): the reader (protobuf, the schema in chakra/et_def.proto) and the
// driver that runs every rank's graph on the network.
#include "wormhole/workload/chakra.h"

#include "wormhole/core/interrupt.h"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>

#include "et_def.pb.h"  // generated from chakra/et_def.proto at build time
#include "wormhole/core/input_error.h"
#include "wormhole/workload/collective_memo.h"
#include "wormhole/workload/driver.h"
#include "wormhole/workload/release_batches.h"

namespace wh {

namespace {

namespace pb = ChakraProtoMsg;

constexpr uint16_t kGpuDone = 0;   // target = rank: its running GPU compute node is over
constexpr uint16_t kCpuDone = 1;   // target = index in timers_: a CPU node is over
constexpr uint16_t kRelease = 2;   // target = index in releases_
constexpr uint32_t kP2pBit = 0x80000000u;
constexpr uint32_t kPriorityGroup = 3;  // every flow's switch queue class, as SimAI's
constexpr Time kNever = std::numeric_limits<Time>::max();

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Reads a protobuf varint at `pos`; false at the end of the data or on a varint longer than 10 bytes.
bool varint(const std::string& d, size_t& pos, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 70 && pos < d.size(); shift += 7) {
    const auto b = static_cast<uint8_t>(d[pos++]);
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

const pb::AttributeProto* attr(const pb::Node& n, const char* name) {
  for (const pb::AttributeProto& a : n.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

/// An integer attribute, whichever integer field holds it (Chakra's tools use int64, uint64, int32 ...).
bool int_attr(const pb::Node& n, const char* name, int64_t& v) {
  const pb::AttributeProto* a = attr(n, name);
  if (!a) return false;
  switch (a->value_case()) {
    case pb::AttributeProto::kInt64Val: v = a->int64_val(); return true;
    case pb::AttributeProto::kUint64Val: v = static_cast<int64_t>(a->uint64_val()); return true;
    case pb::AttributeProto::kInt32Val: v = a->int32_val(); return true;
    case pb::AttributeProto::kUint32Val: v = a->uint32_val(); return true;
    case pb::AttributeProto::kSint64Val: v = a->sint64_val(); return true;
    case pb::AttributeProto::kSint32Val: v = a->sint32_val(); return true;
    default: return false;
  }
}

}  // namespace

ChakraTrace read_chakra_trace(const std::string& prefix, const std::string& comm_groups) {
  ChakraTrace t;
  t.prefix = prefix;
  for (uint32_t r = 0;; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    if (!std::filesystem::exists(path)) {
      if (r == 0)
        throw InputError(path, 0, "no Chakra trace file (looked for " + path + ")",
                         "give the traces' common prefix: files PREFIX.0.et, PREFIX.1.et, ... one per rank (make them first, e.g. "
                         "with scripts/simai_to_chakra.py: docs/workloads.md §8)");
      break;
    }
    const std::string d = slurp(path);
    if (d.size() >= 2 && uint8_t(d[0]) == 0x1f && uint8_t(d[1]) == 0x8b)
      throw InputError(path, 0, "the trace is gzip-compressed", "gunzip it first");
    size_t pos = 0;
    uint64_t len = 0;
    bool first = true;
    std::vector<ChakraNode>& nodes = t.ranks.emplace_back();
    while (pos < d.size()) {
      const size_t at = pos;
      if (!varint(d, pos, len) || len > d.size() - pos)
        throw InputError(path, 0, fmt::format("byte {}: not a Chakra trace (a message length runs past the end)", at),
                         "give a Chakra execution trace (.et) written by Chakra's tools or scripts/simai_to_chakra.py");
      if (first) {
        pb::GlobalMetadata m;
        if (!m.ParseFromArray(d.data() + pos, static_cast<int>(len)))
          throw InputError(path, 0, "the first message is not Chakra's GlobalMetadata", "give a Chakra execution trace (.et)");
        first = false;
        pos += len;
        continue;
      }
      pb::Node n;
      if (!n.ParseFromArray(d.data() + pos, static_cast<int>(len)))
        throw InputError(path, 0, fmt::format("byte {}: a message that is not a Chakra node", at), "give a Chakra execution trace (.et)");
      pos += len;
      if (n.type() == pb::METADATA_NODE) continue;
      ChakraNode c;
      c.id = n.id();
      c.name = n.name();
      c.deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
      c.deps.insert(c.deps.end(), n.data_deps().begin(), n.data_deps().end());
      std::sort(c.deps.begin(), c.deps.end());
      c.deps.erase(std::unique(c.deps.begin(), c.deps.end()), c.deps.end());
      int64_t v = 0;
      const std::string where = fmt::format("node {} ({})", c.id, c.name);
      const std::string supported = "wormhole runs COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE and COMM_COLL_NODE";
      switch (n.type()) {
        case pb::COMP_NODE:
          c.kind = ChakraNode::Comp;
          c.duration = int_attr(n, "duration_nanos", v) ? Time(v) * kNs : Time(n.duration_micros()) * kUs;
          if (const pb::AttributeProto* a = attr(n, "is_cpu_op")) c.cpu = a->bool_val();
          break;
        case pb::COMM_SEND_NODE:
        case pb::COMM_RECV_NODE: {
          const bool send = n.type() == pb::COMM_SEND_NODE;
          c.kind = send ? ChakraNode::Send : ChakraNode::Recv;
          int64_t peer = -1;
          if (!int_attr(n, send ? "comm_dst" : "comm_src", peer) || peer < 0)
            throw InputError(path, 0, where + ": a " + (send ? "send" : "receive") + " without " + (send ? "comm_dst" : "comm_src"),
                             "give the peer rank as an integer attribute");
          c.peer = static_cast<uint32_t>(peer);
          if (int_attr(n, "comm_size", v)) c.bytes = static_cast<uint64_t>(std::max<int64_t>(0, v));
          int_attr(n, "comm_tag", c.tag);
          break;
        }
        case pb::COMM_COLL_NODE: {
          c.kind = ChakraNode::Coll;
          int64_t type = -1;
          if (!int_attr(n, "comm_type", type))
            throw InputError(path, 0, where + ": a collective without comm_type", "give comm_type (Chakra's CollectiveCommType)");
          switch (type) {
            case pb::ALL_REDUCE: c.op = Collective::AllReduce; break;
            case pb::ALL_GATHER: c.op = Collective::AllGather; break;
            case pb::REDUCE_SCATTER: c.op = Collective::ReduceScatter; break;
            case pb::ALL_TO_ALL: c.op = Collective::AllToAll; break;
            default:
              throw InputError(path, 0,
                               where + ": collective " +
                                   (pb::CollectiveCommType_IsValid(static_cast<int>(type))
                                        ? pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(type))
                                        : std::to_string(type)) +
                                   " is not supported",
                               "wormhole decomposes ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER and ALL_TO_ALL (docs/workloads.md §5)");
          }
          if (int_attr(n, "comm_size", v)) c.bytes = static_cast<uint64_t>(std::max<int64_t>(0, v));
          if (const pb::AttributeProto* a = attr(n, "pg_name")) c.group = a->string_val();
          break;
        }
        default:
          throw InputError(path, 0,
                           where + ": node type " +
                               (pb::NodeType_IsValid(n.type()) ? pb::NodeType_Name(n.type()) : std::to_string(n.type())) +
                               " is not supported",
                           supported + "; remove or convert the others");
      }
      nodes.push_back(std::move(c));
    }
  }
  const auto R = static_cast<uint32_t>(t.ranks.size());
  if (!comm_groups.empty()) {
    nlohmann::json j;
    try {
      std::ifstream in(comm_groups);
      if (!in) throw InputError(comm_groups, 0, "cannot open the communicator groups file", "check the path");
      j = nlohmann::json::parse(in);
      for (auto& [name, ranks] : j.items()) {
        std::vector<uint32_t>& g = t.groups[name];
        for (const auto& r : ranks) g.push_back(r.get<uint32_t>());
        std::sort(g.begin(), g.end());
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(comm_groups, 0, std::string("not a communicator groups file: ") + e.what(),
                       "write {\"<pg_name>\": [rank, ...], ...} as ASTRA-sim's comm group JSON");
    }
  }
  for (uint32_t r = 0; r < R; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    std::vector<uint64_t> ids;
    for (const ChakraNode& n : t.ranks[r]) ids.push_back(n.id);
    std::sort(ids.begin(), ids.end());
    for (const ChakraNode& n : t.ranks[r]) {
      for (uint64_t dep : n.deps)
        if (!std::binary_search(ids.begin(), ids.end(), dep))
          throw InputError(path, 0, fmt::format("node {} ({}) depends on node {}, which the rank does not have", n.id, n.name, dep),
                           "give dependencies on nodes of the same file");
      if ((n.kind == ChakraNode::Send || n.kind == ChakraNode::Recv) && (n.peer >= R || n.peer == r))
        throw InputError(path, 0, fmt::format("node {} ({}): peer rank {} is not another of the trace's {} ranks", n.id, n.name, n.peer, R),
                         "give a peer rank below " + std::to_string(R));
      if (n.kind == ChakraNode::Coll && !n.group.empty()) {
        const auto g = t.groups.find(n.group);
        if (g == t.groups.end())
          throw InputError(path, 0, fmt::format("node {} ({}): pg_name \"{}\" is in no communicator group", n.id, n.name, n.group),
                           comm_groups.empty() ? "give the groups file (workload.comm_groups)" : "add the group to " + comm_groups);
        if (!std::binary_search(g->second.begin(), g->second.end(), r))
          throw InputError(path, 0, fmt::format("node {} ({}): rank {} is not in its group \"{}\"", n.id, n.name, r, n.group),
                           "fix the groups file or the node's pg_name");
      }
    }
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// The driver

struct ChakraDriver::Rank {
  std::vector<uint32_t> waiting;                  // per node: dependencies not finished
  std::vector<std::vector<uint32_t>> children;    // per node
  std::map<uint64_t, uint32_t> index;             // node id -> index
  std::vector<uint32_t> gpu_queue;                // ready GPU compute nodes, FIFO
  size_t gpu_head = 0;
  uint32_t gpu_running = UINT32_MAX;
  std::map<std::string, uint32_t> coll_seq;       // per group: collectives issued so far
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, uint32_t> p2p_seq;  // per (src, dst, tag)
  // What the collective memo's look-ahead reads (earliest_issue): per node 0 waiting, 1 ready (running,
  // queued or issued), 2 finished; when the running GPU node and each running CPU node end (ps).
  std::vector<uint8_t> state;
  std::vector<uint32_t> active, active_pos;  // the ready nodes (any order) and each one's place there
  Time gpu_end = 0;
  std::unordered_map<uint32_t, Time> cpu_end;
};

struct ChakraDriver::Coll {
  CollectivePlan cp;
  std::vector<uint32_t> members;                  // sorted
  std::vector<uint8_t> flow_state;                // 0 waiting, 1 released, 2 finished
  std::vector<int32_t> node;                      // per member: its node, -1 until it issues
  std::vector<uint32_t> remaining;                // per member: involved flows not finished
  ReleaseBatches batches;                         // released flows waiting for the send latency
  size_t record = 0;
  // With a collective memo: each member's issue time (ps; -1 not yet), how many issued, the memo's
  // handle (-1: left to the network) and the island kinds its flows cross.
  std::vector<Time> issue_time;
  uint32_t issues_seen = 0;
  int32_t memo = -1;
  uint8_t kinds = 0;
  uint32_t index_of(uint32_t r) const {
    return static_cast<uint32_t>(std::lower_bound(members.begin(), members.end(), r) - members.begin());
  }
};

struct ChakraDriver::P2p {
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;
  int32_t send_node = -1, recv_node = -1;
  bool done = false;
  uint8_t kinds = 0;  // island kinds its flow crosses (with a collective memo)
};

ChakraDriver::ChakraDriver(Network& net, const ChakraTrace& trace, const GroupLayout& layout, Time send_latency,
                           ZeroChunk zero_chunk, NetObserver* forward, CollectiveMemo* memo)
    : net_(net), trace_(trace), layout_(layout), send_latency_(send_latency), zero_chunk_(zero_chunk), forward_(forward),
      memo_(memo) {
  const auto R = static_cast<uint32_t>(trace_.ranks.size());
  if (R > layout_.gpus)
    throw std::invalid_argument(fmt::format("the trace has {} ranks, the topology {} GPUs", R, layout_.gpus));
  ranks_.resize(R);
  for (uint32_t r = 0; r < R; ++r) {
    Rank& k = ranks_[r];
    const auto& nodes = trace_.ranks[r];
    for (uint32_t i = 0; i < nodes.size(); ++i) k.index[nodes[i].id] = i;
    k.waiting.assign(nodes.size(), 0);
    k.state.assign(nodes.size(), 0);
    if (memo) k.active_pos.assign(nodes.size(), 0);
    k.children.assign(nodes.size(), {});
    for (uint32_t i = 0; i < nodes.size(); ++i)
      for (uint64_t d : nodes[i].deps) {
        ++k.waiting[i];
        k.children[k.index.at(d)].push_back(i);
      }
    left_ += nodes.size();
  }
  report_.workload_file = trace_.prefix;
  report_.gpus = R;
  // A trace's graph says when a node may run, not which collective a GPU is blocked on: exposure is
  // one total per rank, ASTRA-sim's (finished()), not split by group.
  report_.exposure_by_group = false;
  report_.per_gpu.assign(R, GpuRecord{});  // compute counts when a node finishes (kGpuDone): a stopped run's is what ran
  left_of_.assign(R, 0);
  for (uint32_t r = 0; r < R; ++r) left_of_[r] = trace_.ranks[r].size();
  total_ = left_;
  if (memo_) {
    involved_.assign(R, {0, 0});
    nv_peers_.resize(R);
    nv_peers_made_.assign(R, 0);
    seen_.resize(R);
  }
  net_.set_observer(this);
  net_.set_client(this);
}

ChakraDriver::~ChakraDriver() {
  net_.set_observer(nullptr);
  net_.set_client(nullptr);
}

bool ChakraDriver::run(Time until) {
  start(until);
  if (left_ > 0) net_.run(until);
  return finish(until);
}

void ChakraDriver::start(Time) {
  ++depth_;
  for (uint32_t r = 0; r < ranks_.size(); ++r)
    for (uint32_t i = 0; i < ranks_[r].waiting.size(); ++i)
      if (ranks_[r].waiting[i] == 0) ready(r, i);
  if (--depth_ == 0) offer_pending();
}

double ChakraDriver::progress() const { return total_ == 0 ? -1.0 : double(total_ - left_) / double(total_); }

bool ChakraDriver::finish(Time) {
  if (!report_.per_gpu.empty()) report_.end_to_end.total_compute = report_.per_gpu[0].compute;  // rank 0's, as ASTRA-sim
  report_.iterations.push_back({0, 0, last_, left_ == 0});
  report_.end_to_end.total = last_;
  report_.end_to_end.total_exposed = report_.per_gpu[report_.report_gpu].exposed();
  report_.find_slowest_gpu();
  if (left_ > 0) {
    report_.stuck = !net_.stopped_by_signal() && net_.pending_events() == 0;
    report_.incomplete = fmt::format("{} at {:.6f} s with {} trace nodes not finished",
                                     net_.stopped_by_signal() ? "interrupted by " + signal_name(net_.stop_signal())
                                     : report_.stuck          ? std::string("no runnable events")
                                                              : std::string("stopped by the time limit"),
                                     double(net_.client_now()) / kSec, left_);
  }
  return left_ == 0;
}

void ChakraDriver::ready(uint32_t r, uint32_t i) {
  const ChakraNode& n = trace_.ranks[r][i];
  const Time now = net_.client_now();
  ranks_[r].state[i] = 1;
  if (memo_) {
    ranks_[r].active_pos[i] = static_cast<uint32_t>(ranks_[r].active.size());
    ranks_[r].active.push_back(i);
  }
  switch (n.kind) {
    case ChakraNode::Comp:
      if (n.cpu) {
        if (n.duration <= 0) return finished(r, i);
        if (memo_) ranks_[r].cpu_end[i] = now + n.duration;
        timers_.emplace_back(r, i);
        net_.schedule_client(now + n.duration, static_cast<uint32_t>(timers_.size() - 1), kCpuDone);
        return;
      }
      ranks_[r].gpu_queue.push_back(i);
      return run_gpu(r);
    case ChakraNode::Send:
    case ChakraNode::Recv: {
      const bool send = n.kind == ChakraNode::Send;
      const uint32_t src = send ? r : n.peer, dst = send ? n.peer : r;
      const uint32_t k = ranks_[r].p2p_seq[{src, dst, n.tag}]++;
      auto [it, fresh] = p2p_of_.emplace(std::make_tuple(src, dst, n.tag, k), static_cast<uint32_t>(p2p_.size()));
      if (fresh) p2p_.push_back({src, dst, 0, -1, -1, false});
      P2p& p = p2p_[it->second];
      (send ? p.send_node : p.recv_node) = static_cast<int32_t>(i);
      if (send) {
        p.bytes = n.bytes;
        if (n.bytes == 0) {
          p.done = true;
          finished(r, i);
          if (p2p_[it->second].recv_node >= 0) finished(dst, static_cast<uint32_t>(p2p_[it->second].recv_node));
          return;
        }
        if (memo_) {
          p.kinds = net_.island_kinds(src, dst);
          involve(src, p.kinds, +1), involve(dst, p.kinds, +1);
        }
        release(kP2pBit | it->second, 0);
      } else if (p.done) {
        finished(r, i);
      }
      return;
    }
    case ChakraNode::Coll: {
      const std::string group = n.group;
      std::vector<uint32_t> members;
      if (group.empty())
        for (uint32_t m = 0; m < ranks_.size(); ++m) members.push_back(m);
      else
        members = trace_.groups.at(group);
      if (members.size() <= 1 || n.bytes == 0) return finished(r, i);
      const uint32_t k = ranks_[r].coll_seq[group]++;
      auto [it, fresh] = coll_of_.emplace(std::make_pair(group, k), static_cast<uint32_t>(colls_.size()));
      const uint32_t id = it->second;
      if (fresh) {
        Coll c;
        const uint32_t rings = n.op == Collective::AllToAll ? 1 : ring_count(layout_, members);
        c.cp = plan_collective(n.op, n.bytes, members, rings, zero_chunk_);
        c.members = c.cp.members;  // sorted
        c.flow_state.assign(c.cp.size(), 0);
        c.node.assign(members.size(), -1);
        c.remaining.assign(members.size(), 2 * c.cp.sends_per_member());  // each sends and receives as many
        CollectiveRecord rec;
        rec.layer_name = n.name;
        rec.op = to_string(n.op);
        rec.group = group.empty() ? "all" : group;
        rec.group_first = members.front();
        rec.ranks = static_cast<uint32_t>(members.size());
        rec.bytes = n.bytes;
        rec.flows = c.cp.size();
        rec.flow_bytes = c.cp.chunk * rec.flows;
        rec.start = rec.end = now;
        c.record = report_.collectives.size();
        report_.collectives.push_back(std::move(rec));
        if (memo_ && c.cp.sends_per_member() > 0) {
          for (auto [a, b] : collective_member_pairs(c.cp)) c.kinds |= net_.island_kinds(c.members[a], c.members[b]);
          for (uint32_t m : c.members) involve(m, c.kinds, +1);
          c.issue_time.assign(c.members.size(), -1);
        }
        colls_.push_back(std::move(c));
      }
      Coll& c = colls_[id];
      const uint32_t mi = c.index_of(r);
      c.node[mi] = static_cast<int32_t>(i);
      if (!c.issue_time.empty()) {
        c.issue_time[mi] = now;
        if (++c.issues_seen == c.members.size()) pending_offers_.push_back(id);  // offer_pending
      }
      for (uint32_t k = 0, n = c.cp.sends_per_member(); k < n; ++k) {
        const uint32_t f = c.cp.sent_flow(mi, k), parent = c.cp.parent(f);
        if (parent == kNoParent || c.flow_state[parent] == 2) release(id, f);
      }
      if (colls_[id].remaining[mi] == 0) finished(r, i);
      return;
    }
  }
}

void ChakraDriver::run_gpu(uint32_t r) {
  Rank& k = ranks_[r];
  while (k.gpu_running == UINT32_MAX && k.gpu_head < k.gpu_queue.size()) {
    const uint32_t i = k.gpu_queue[k.gpu_head++];
    const Time d = trace_.ranks[r][i].duration;
    if (d <= 0) {
      finished(r, i);
      continue;
    }
    k.gpu_running = i;
    k.gpu_end = net_.client_now() + d;
    net_.schedule_client(k.gpu_end, r, kGpuDone);
  }
}

void ChakraDriver::release(uint32_t owner, uint32_t f) {
  const Time at = net_.client_now() + send_latency_;
  if (!(owner & kP2pBit)) {
    Coll& c = colls_[owner];
    if (c.flow_state[f] != 0) return;
    c.flow_state[f] = 1;
    if (!c.batches.add(at, f)) return;  // joins the instant's batch, which is due already
  }
  if (due_.add(at, owner)) net_.schedule_client(at, due_events_++, kRelease, true);
}

void ChakraDriver::inject(uint32_t owner, uint32_t f) {
  FlowSpec spec;
  spec.pg = kPriorityGroup;
  if (owner & kP2pBit) {
    const P2p& p = p2p_[owner & ~kP2pBit];
    spec.src = p.src, spec.dst = p.dst, spec.size_bytes = p.bytes;
  } else {
    const FlowStep s = colls_[owner].cp.flow(f);
    spec.src = s.src, spec.dst = s.dst, spec.size_bytes = s.bytes;
  }
  const int32_t h = owner & kP2pBit ? -1 : colls_[owner].memo;
  const uint32_t id = h >= 0 && memo_->replaying(h) ? net_.replay_flow(spec) : net_.inject_flow(spec);
  if (h >= 0) memo_->released(h, f, id);
  flow_owner_.set(id, std::pair{owner, f});
}

void ChakraDriver::finished(uint32_t r, uint32_t i) {
  Rank& rk = ranks_[r];
  rk.state[i] = 2;
  if (memo_) {  // off the ready list: the last one takes its place
    const uint32_t pos = rk.active_pos[i], last = rk.active.back();
    rk.active[pos] = last;
    rk.active_pos[last] = pos;
    rk.active.pop_back();
  }
  --left_;
  last_ = std::max(last_, net_.client_now());
  if (--left_of_[r] == 0) {
    // ASTRA-sim's exposed communication (Workload::report): the rank's finish minus its GPU compute.
    GpuRecord& g = report_.per_gpu[r];
    g.finish = net_.client_now();
    g.exposed_ungrouped = g.finish - g.compute;
  }
  // Children in file order; a child's ready() may finish more nodes (recursion is bounded by the graph).
  const std::vector<uint32_t> children = ranks_[r].children[i];
  for (uint32_t c : children)
    if (--ranks_[r].waiting[c] == 0) ready(r, c);
  if (left_ == 0) net_.stop();
}

void ChakraDriver::client_event(uint32_t target, uint16_t aux) {
  ++depth_;
  on_client_event(target, aux);
  if (--depth_ == 0) offer_pending();
}

void ChakraDriver::on_client_event(uint32_t target, uint16_t aux) {
  switch (aux) {
    case kGpuDone: {
      Rank& k = ranks_[target];
      const uint32_t i = k.gpu_running;
      k.gpu_running = UINT32_MAX;
      report_.per_gpu[target].compute += trace_.ranks[target][i].duration;
      finished(target, i);
      run_gpu(target);
      break;
    }
    case kCpuDone:
      if (memo_) ranks_[timers_[target].first].cpu_end.erase(timers_[target].second);
      finished(timers_[target].first, timers_[target].second);
      break;
    case kRelease: {
      // In WorkloadDriver's order (by first GPU), so that a converted SimAI workload runs alike.
      // (first GPU, a p2p after that GPU's collectives)
      const auto key = [&](uint32_t o) {
        return std::pair<uint32_t, bool>{o & kP2pBit ? p2p_[o & ~kP2pBit].src : colls_[o].members.front(), (o & kP2pBit) != 0};
      };
      for (uint32_t owner : due_.take(key)) {
        if (owner & kP2pBit) inject(owner, 0);
        else
          for (uint32_t fl : colls_[owner].batches.take()) inject(owner, fl);  // the instant's batch (release)
      }
      break;
    }
  }
}

void ChakraDriver::flow_finished(const FlowRecord& rec) {
  ++depth_;
  on_flow_finished(rec);
  if (--depth_ == 0) offer_pending();
}

void ChakraDriver::on_flow_finished(const FlowRecord& rec) {
  if (forward_) forward_->flow_finished(rec);
  std::pair<uint32_t, uint32_t> slot;
  if (!flow_owner_.take(rec.id, slot)) return;
  const auto [owner, f] = slot;
  if (owner & kP2pBit) {
    P2p& p = p2p_[owner & ~kP2pBit];
    p.done = true;
    const int32_t s = p.send_node, d = p.recv_node;
    const uint32_t src = p.src, dst = p.dst;
    if (memo_) involve(src, p.kinds, -1), involve(dst, p.kinds, -1);
    finished(src, static_cast<uint32_t>(s));
    if (d >= 0) finished(dst, static_cast<uint32_t>(d));
    return;
  }
  uint32_t done[2], n = 0;
  {
    Coll& c = colls_[owner];
    c.flow_state[f] = 2;
    if (c.memo >= 0) memo_->finished(c.memo, f, rec.skipped, rec.skipped_bytes);
    const uint32_t ch = c.cp.child(f);
    if (ch != kNoParent && c.node[c.cp.src_index(ch)] >= 0) release(owner, ch);
    for (uint32_t m : {c.cp.src_index(f), c.cp.dst_index(f)})
      if (--c.remaining[m] == 0) {
        if (memo_) involve(c.members[m], c.kinds, -1);
        if (c.node[m] >= 0) done[n++] = m;
      }
    report_.collectives[c.record].end = net_.client_now();
    count_link_bytes(net_, report_.collectives[c.record], rec);
  }
  for (uint32_t k = 0; k < n; ++k) {
    const Coll& c = colls_[owner];
    finished(c.members[done[k]], static_cast<uint32_t>(c.node[done[k]]));
  }
}

void ChakraDriver::pfc(const PfcRecord& p) {
  if (forward_) forward_->pfc(p);
}

void ChakraDriver::tick(Time now, uint64_t events, uint64_t flows_finished) {
  if (forward_) forward_->tick(now, events, flows_finished);
}

// ---------------------------------------------------------------------------------------------
// The collective memo

void ChakraDriver::involve(uint32_t r, uint8_t kinds, int d) {
  for (uint32_t k = 0; k < 2; ++k)
    if (kinds & (1u << k)) involved_[r][k] += static_cast<uint32_t>(d);
}

void ChakraDriver::offer_pending() {
  // In the order their last members issued; each offer sees the decisions before it.
  for (size_t k = 0; k < pending_offers_.size(); ++k) offer_to_memo(pending_offers_[k]);
  pending_offers_.clear();
}

void ChakraDriver::offer_to_memo(uint32_t id) {
  const Coll& c = colls_[id];
  // Before its first flow starts (send_latency after the first issue) or never: the memo decides for
  // the whole collective.
  if (net_.client_now() - *std::min_element(c.issue_time.begin(), c.issue_time.end()) >= send_latency_) {
    memo_->count_late_issue();
    return;
  }
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (auto [a, b] : collective_member_pairs(c.cp)) pairs.emplace_back(c.members[a], c.members[b]);  // GPU r is host r
  std::string key;
  const int32_t h = memo_->begin(
      pairs, [&]() -> const std::string& { return key = collective_plan_key(c.cp, send_latency_, kPriorityGroup); },
      c.members, c.issue_time, c.cp.size(),
      [&](uint32_t host, uint8_t kinds) {
        if (host >= ranks_.size()) return UINT32_MAX;  // a GPU the trace has no rank for
        uint32_t n = 0;
        for (uint32_t k = 0; k < 2; ++k)
          if (kinds & (1u << k)) n = std::max(n, involved_[host][k]);
        return n;
      },
      [&](uint8_t kinds, Time t0, const std::vector<Time>* finish) { return quiet_until(id, kinds, t0, finish); });
  colls_[id].memo = h;
}

const std::vector<uint32_t>& ChakraDriver::nvswitch_peers(uint32_t r) {
  std::vector<uint32_t>& out = nv_peers_[r];
  if (nv_peers_made_[r]) return out;
  nv_peers_made_[r] = 1;
  // An island's NVSwitch links only to hosts (Network::find_island): the GPUs one hop beyond it.
  const Fabric& fab = net_.fabric();
  out.push_back(r);
  const Node& gpu = fab.nodes[r];
  for (uint32_t q = gpu.first_port; q < gpu.first_port + gpu.num_ports; ++q) {
    const Node& sw = fab.nodes[fab.ports[fab.ports[q].peer].node];
    if (!sw.is_nvswitch) continue;
    for (uint32_t x = sw.first_port; x < sw.first_port + sw.num_ports; ++x) {
      const uint32_t host = fab.ports[fab.ports[x].peer].node;
      if (!fab.nodes[host].is_switch && host < ranks_.size()) out.push_back(host);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool ChakraDriver::reaches_members(uint32_t y, const ChakraNode& n, const std::vector<uint32_t>& members, uint8_t kinds) {
  if (n.bytes == 0 || (n.kind != ChakraNode::Send && n.kind != ChakraNode::Coll)) return false;
  const std::vector<uint32_t>& near = nvswitch_peers(y);
  // A flow of y touches the members' island ports when it leaves a member (y) or reaches one, over an
  // NVSwitch they share (routing prefers it) or else over the fabric; other GPUs' traffic only crosses
  // a switch there (its shared buffer: the sub-island's margin, CollectiveMemo).
  const bool y_member = std::binary_search(members.begin(), members.end(), y);
  auto touches = [&](uint32_t z) {
    if (z == y || !(y_member || std::binary_search(members.begin(), members.end(), z))) return false;
    const bool nvswitch = std::binary_search(near.begin(), near.end(), z);
    return (kinds & (nvswitch ? kIslandNvSwitch : kIslandFabric)) != 0;
  };
  if (n.kind == ChakraNode::Send) return touches(n.peer);
  // A collective: its group's GPUs, every rank for a group of none. Over an NVSwitch only its GPUs
  // there; over the fabric any of them.
  const std::vector<uint32_t>* group = n.group.empty() ? nullptr : &trace_.groups.at(n.group);
  const auto R = static_cast<uint32_t>(ranks_.size());
  if (kinds & kIslandFabric) {
    if (group) {
      for (uint32_t z : *group)
        if (touches(z)) return true;
    } else {
      for (uint32_t z = 0; z < R; ++z)
        if (touches(z)) return true;
    }
    return false;
  }
  for (uint32_t z : near)
    if (touches(z) && (!group || std::binary_search(group->begin(), group->end(), z))) return true;
  return false;
}

Time ChakraDriver::earliest_issue(uint32_t y, uint32_t offered, uint8_t kinds, Time done_y, Time bound) {
  const Rank& k = ranks_[y];
  const std::vector<ChakraNode>& nodes = trace_.ranks[y];
  const Time now = net_.client_now();
  std::vector<uint32_t>& seen = seen_[y];
  if (seen.size() != nodes.size()) seen.assign(nodes.size(), 0);
  if (++stamp_ == 0) {  // the stamps wrapped: clear every rank's marks once
    for (auto& v : seen_) std::fill(v.begin(), v.end(), 0);
    stamp_ = 1;
  }
  const Coll& o = colls_[offered];
  const auto m = std::lower_bound(o.members.begin(), o.members.end(), y);
  const int32_t offered_node = m != o.members.end() && *m == y ? o.node[static_cast<size_t>(m - o.members.begin())] : -1;
  // Nodes by the earliest time they can end; a node is reached from the first of its dependencies to
  // end (any one of them bounds its start from below).
  using Item = std::pair<Time, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  for (uint32_t i : k.active) {
    seen[i] = stamp_;
    const ChakraNode& n = nodes[i];
    Time end = now;  // a collective or transfer under way (its end is not known), a receive waiting
    if (n.kind == ChakraNode::Comp && n.cpu) {
      const auto c = k.cpu_end.find(i);
      end = c != k.cpu_end.end() ? c->second : now;
    } else if (n.kind == ChakraNode::Comp) {
      // Queued behind the running one, or running.
      const Time free = k.gpu_running != UINT32_MAX ? std::max(now, k.gpu_end) : now;
      end = k.gpu_running == i ? k.gpu_end : free + std::max<Time>(0, n.duration);
    } else if (static_cast<int32_t>(i) == offered_node && done_y >= 0) {
      end = done_y;
    } else if (static_cast<int32_t>(i) == offered_node && !(kinds & kIslandFabric)) {
      // A follower on an NVSwitch (its end not known): what only y's part of it can ready is not searched,
      // SimAI's rule for its blocking TP collectives. On a rail leaf it is taken to end now, as the SimAI
      // driver takes a follower's members' next collectives there.
      continue;
    }
    heap.emplace(end, i);
  }
  while (!heap.empty()) {
    const auto [t, i] = heap.top();
    heap.pop();
    if (t >= bound) return bound;
    for (uint32_t c : k.children[i]) {
      if (k.state[c] != 0 || seen[c] == stamp_) continue;
      seen[c] = stamp_;
      const ChakraNode& n = nodes[c];
      if (reaches_members(y, n, o.members, kinds)) return t;  // it can issue when this dependency ends, no sooner
      heap.emplace(t + (n.kind == ChakraNode::Comp ? std::max<Time>(0, n.duration) : 0), c);
    }
  }
  return kNever;
}

Time ChakraDriver::quiet_until(uint32_t id, uint8_t kinds, Time t0, const std::vector<Time>* finish) {
  const Coll& c = colls_[id];
  const CollectivePlan& cp = c.cp;
  // When each member's part of it is done, were it to end as `finish` says (-1: not known).
  const std::vector<Time> done = member_done_times(cp, t0, finish);
  // Its end: nothing can come in its way after it.
  const Time horizon = done.empty() || done.front() < 0 ? kNever : *std::max_element(done.begin(), done.end());
  // Traffic can reach the members' NVSwitch ports only from GPUs on those NVSwitches; their fabric
  // ports from any GPU.
  std::vector<uint32_t> near;
  if (kinds & kIslandFabric) {
    near = c.members;  // first: a member's next collective is the likeliest to come
    for (uint32_t y = 0; y < ranks_.size(); ++y)
      if (!std::binary_search(c.members.begin(), c.members.end(), y)) near.push_back(y);
  } else {
    for (uint32_t g : c.members) {
      const std::vector<uint32_t>& p = nvswitch_peers(g);
      near.insert(near.end(), p.begin(), p.end());
    }
    std::sort(near.begin(), near.end());
    near.erase(std::unique(near.begin(), near.end()), near.end());
  }
  Time t = horizon;
  for (uint32_t y : near) {
    const auto m = std::lower_bound(c.members.begin(), c.members.end(), y);
    const Time done_y = m != c.members.end() && *m == y ? done[static_cast<size_t>(m - c.members.begin())] : -1;
    t = std::min(t, earliest_issue(y, id, kinds, done_y, t));
    if (t < horizon) return t;  // the island is not quiet to the end: what the memo asks
  }
  return t;
}

}  // namespace wh
