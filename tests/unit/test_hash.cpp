// Known-answer tests of the ECMP hash: the reference's traced forwarding decisions (docs/network-model.md §12).
#include <gtest/gtest.h>

#include "wormhole/io/results_writer.h"
#include "wormhole/net/hash.h"

using namespace wh;

TEST(EcmpHash, ReferenceVectors) {
  // src 8 -> dst 0, sport 10000, dport 100, seed 65: 1558415680, index 0 of 8
  EXPECT_EQ(ecmp_hash(node_ip(8), node_ip(0), 10000, 100, 65), 1558415680u);
  EXPECT_EQ(ecmp_hash(node_ip(9), node_ip(0), 10000, 100, 65), 4282831401u);
  EXPECT_EQ(ecmp_hash(node_ip(9), node_ip(0), 10000, 100, 65) % 8, 1u);
  EXPECT_EQ(ecmp_hash(node_ip(1), node_ip(2), 10000, 100, 16), 2485549390u);
  EXPECT_EQ(ecmp_hash(node_ip(0), node_ip(22), 10000, 100, 64), 505327494u);
  EXPECT_EQ(ecmp_hash(node_ip(0), node_ip(22), 10000, 100, 64) % 8, 6u);
}

TEST(NodeIp, ReferenceAddressPlan) {
  EXPECT_EQ(node_ip(0), 0x0b000001u);
  EXPECT_EQ(node_ip(1), 0x0b000101u);
  EXPECT_EQ(node_ip(256), 0x0b010001u);
}
