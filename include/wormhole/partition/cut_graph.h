// The graph METIS cuts: the fabric's nodes and links, weighed by the traffic expected over them.
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/net/fabric.h"
#include "wormhole/net/flow_spec.h"
#include "wormhole/net/topology.h"
#include "wormhole/partition/rank_map.h"

namespace wh {

class Network;

/// A flow the cut is weighed by: its hosts, its bytes and the UDP ports that choose its NIC and
/// ECMP path (Fabric::assign_nics, Fabric::egress).
struct CutFlow {
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;
  uint16_t sport = 0, dport = 0;
};

/// Flows `specs` as the network will number them: source ports by SourcePorts in list order, as
/// Network::add_flows and inject_flow give them.
std::vector<CutFlow> cut_flows(const std::vector<FlowSpec>& specs);
/// The flows `net` holds (a flow file's, added before the run), with the ports they were given.
std::vector<CutFlow> cut_flows(const Network& net);

/// The METIS graph of fabric `fab` (wired from `topo`): a vertex per node weighted 1 + its ports +
/// the flows it sends or receives + the MB of flow bytes routed through it (received, or sent out of
/// one of its ports), or without flows + its links' rates in units of 100 Gb/s; an edge per link
/// weighted by the MB of flow bytes routed over it, in either direction, + 1 (without flows: its
/// rate in Gb/s), with its delay in ps. A flow's route is the one its packets take: the NIC and every
/// switch's ECMP choice for its ports, over the links that are up. An NVSwitch and the GPUs linked to
/// it form a group (one server: never split). Precondition: `fab`'s routes are built. A flow with no
/// route adds its node weights only.
NetGraph cut_graph(const Topology& topo, const Fabric& fab, const std::vector<CutFlow>& flows);

}  // namespace wh
