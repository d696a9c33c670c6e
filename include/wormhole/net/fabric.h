// The fabric's data: nodes, ports (links and their queues), the packet pool, the routes and the
// parameters the model reads. The switch model, the NIC model and the Network act on it; nothing here
// schedules an event. Semantics: docs/network-model.md §2, §10–§12.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/net/hash.h"
#include "wormhole/net/net_params.h"
#include "wormhole/net/packet.h"
#include "wormhole/net/port.h"
#include "wormhole/net/port_array.h"
#include "wormhole/net/routing.h"
#include "wormhole/net/topology.h"

namespace wh {

/// The wired fabric of one process. Construction wires every port from the topology (interface i of
/// a node is its i-th link in file order: links[node.first_port + i - 1]), sizes every switch's shared
/// buffer and checks its ECN maps, and makes the ports' state (ports) with their PFC headroom and ECN
/// thresholds: all of them, or (make_port) only those a rank of a distributed run simulates. Routes
/// are built on first use (routes()). The members are the model's state, read and changed by
/// SwitchModel, NicModel and Network; the functions below only read them, except routes(), which
/// builds the routes, and make_port(). Not copied: the routes refer to its nodes and links.
struct Fabric {
  /// Throws InputError naming the topology when it has more ports than the event order can tell apart,
  /// and naming the KMAX_MAP setting (with the link's topology line) when a switch link's rate has no
  /// entry in the ECN maps. With `make_all`, every port's state is made; otherwise none until
  /// make_port().
  Fabric(const NetParams& params, const Topology& topo, bool make_all = true);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  NetParams params;
  std::vector<Node> nodes;
  std::vector<PortLink> links;  ///< how every port is wired (40 B a port)
  PortArray ports;              ///< the state of the ports made (768 B each)
  /// Distributed run: the far ends of this rank's cut links, in the order of their near ends' ports
  /// (Port::cut_wire indexes it). Empty in one process.
  std::vector<CutWire> cut_wires;
  Routing routing;   ///< built by routes(), or by a caller passing the pairs to precompute
  PacketPool pool;
  /// The reference's "NIC rate" (bit/s): the rate of the first host's first link, which scales every
  /// switch port's PFC threshold (docs/network-model.md §11.1).
  uint64_t nic_rate = 0;
  /// A switch port whose PFC headroom cannot make PFC lossless (bytes).
  struct ShortHeadroom {
    uint32_t port;
    uint64_t headroom, need;
  };
  std::vector<ShortHeadroom> short_headroom;

  /// The routes, built now over the ports that are up if they are not yet.
  Routing& routes() {
    if (!routing.built()) routing.build(nodes, links, params.payload, {});
    return routing;
  }
  /// Makes port `p`'s state, if it is not made yet, as construction makes every port's: its wiring,
  /// receive-error generator, and at a switch its ECN thresholds, PFC headroom and PFC shift.
  void make_port(uint32_t p);
  /// Serialization time of `bytes` at `rate_bps` (ps), truncated to whole ns under NS_TRUNCATION.
  Time ser(uint32_t bytes, uint64_t rate_bps) const { return serialization_time(bytes, rate_bps, params.ns_trunc); }
  bool is_switch_port(uint32_t port) const { return nodes[links[port].node].is_switch; }
  /// The egress class packet `pkt` waits in at `port`: its own at a switch; a host NIC keeps its
  /// ACKs and PFC frames in class 0.
  uint32_t queue_class(uint32_t port, uint32_t pkt) const {
    const Packet& p = pool[pkt];
    return nodes[links[port].node].is_switch || p.type == PktType::Data ? p.pg : 0;
  }

  static constexpr uint32_t kNoRoute = UINT32_MAX;
  /// The port switch `node` forwards a packet of header (src, dst hosts, sport, dport) out of: the
  /// reference's ECMP choice, hash(src IP, dst IP, ports, node) mod the number of next hops
  /// (docs/network-model.md §12); kNoRoute when it has no route to dst. Forwarding and the path
  /// views (switch_path) both ask it, so they cannot disagree. Precondition: routes built.
  uint32_t egress(uint32_t node, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport) const {
    const auto hops = routing.next_hops(node, dst);
    if (hops.empty()) return kNoRoute;
    if (hops.size() == 1) return hops[0];
    return hops[ecmp_hash(node_ip(src), node_ip(dst), sport, dport, node) % hops.size()];
  }
  /// Appends to `path` the switch egress ports a packet of header (src, dst, sport, dport) takes
  /// from the switch behind host port `nic` (egress() at every switch).
  void switch_path(uint32_t nic, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
                   std::vector<uint32_t>& path) const;
  /// The sending NIC (port; UINT32_MAX: no path) of a flow src -> dst with these UDP ports and, on a
  /// multi-NIC receiver, the NIC for its ACKs (`rx_nic` is left as it is otherwise): the reference's
  /// QP hash over the host's NICs towards dst (GetNicIdxOfQp, GetNicIdxOfRxQp).
  void assign_nics(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t& nic, uint32_t& rx_nic) const;
  /// Whether port `p` belongs to the LINK_DOWN link.
  bool is_link_down_port(uint32_t p) const;
  /// A set-up warning naming every switch port (node, interfaces, headroom and need in bytes; the
  /// first 16 runs of interfaces, then a count) whose PFC headroom — the reference's 3 × rate ×
  /// delay — is below what a lossless pause needs, 2 × rate × delay + 2 largest data packets
  /// (docs/network-model.md §11.1); PFC can drop packets there. "" when every port has enough or
  /// PFC_LOSSLESS_HEADROOM 1 raised them.
  std::string headroom_warning() const;

 private:
  /// A switch port's ECN thresholds and PFC settings, from its link and the parameters.
  struct SwitchPortSetup {
    uint64_t kmin = 0, kmax = 0;
    double pmax = 0;
    uint64_t headroom = 0, need = 0;  ///< bytes: the reference's headroom, and what a lossless pause needs
    uint8_t pfc_shift = 3;
  };
  SwitchPortSetup switch_port_setup(uint32_t p) const;
  uint32_t pick_nic(uint32_t src, uint32_t dst, uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport) const;
  void build_links(const Topology& topo);
  void configure_switches(const Topology& topo);
};

}  // namespace wh
