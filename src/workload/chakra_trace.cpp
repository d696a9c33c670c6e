// Chakra execution traces (chakra.h): the reader (protobuf, the schema in chakra/et_def.proto). The
// driver that runs every rank's graph is chakra.cpp, its collective memo offers chakra_memo.cpp.
#include "wormhole/workload/chakra.h"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "et_def.pb.h"  // generated from chakra/et_def.proto at build time
#include "wormhole/core/input_error.h"
#include "wormhole/workload/driver.h"

namespace wh {

namespace {

namespace pb = ChakraProtoMsg;

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
  // Ranks are read from 0 up to the first missing file: a later file means a gap, not the end.
  {
    const std::filesystem::path pre(prefix);
    const std::filesystem::path dir = pre.has_parent_path() ? pre.parent_path() : std::filesystem::path(".");
    const std::string stem = pre.filename().string() + ".";
    std::error_code ec;
    unsigned long next = 0;  // the first rank beyond the gap with a file (0: none)
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() <= stem.size() + 3 || name.compare(0, stem.size(), stem) != 0 || name.compare(name.size() - 3, 3, ".et") != 0)
        continue;
      const std::string k = name.substr(stem.size(), name.size() - stem.size() - 3);
      if (k.empty() || k.size() > 9 || k.find_first_not_of("0123456789") != std::string::npos) continue;
      if (const unsigned long r = std::stoul(k); r > R && (next == 0 || r < next)) next = r;
    }
    if (next > 0)
      throw InputError(prefix + "." + std::to_string(R) + ".et", 0,
                       fmt::format("rank {}'s trace is missing, though {}.{}.et exists", R, prefix, next),
                       "give one trace per rank, PREFIX.0.et, PREFIX.1.et, ... without a gap");
  }
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
        if (g->second.back() >= R)
          throw InputError(comm_groups, 0,
                           fmt::format("group \"{}\" (of node {} of {}) holds rank {}, but the trace has {} ranks ({}.0.et .. {}.{}.et)",
                                       n.group, n.id, path, g->second.back(), R, prefix, prefix, R - 1),
                           "give a trace for every rank of the group, or fix the group");
      }
    }
  }
  return t;
}

}  // namespace wh
