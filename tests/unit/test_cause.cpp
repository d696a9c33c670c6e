// The cause layouts of core/cause.h: the rooms that children, contexts and keys share are disjoint,
// and the keys are the known values (the layout tests of the keys themselves are in test_kernel.cpp).
#include <gtest/gtest.h>

#include <set>

#include "wormhole/core/cause.h"
#include "wormhole/core/kernel.h"

using namespace wh;

TEST(Cause, ModelAndClientChildrenAreDisjoint) {
  // A kernel numbers the model's children from 0 and a client's from kClientChildBase (portable order).
  Kernel k;
  k.set_order(EventOrder::Portable);
  std::set<uint32_t> model, client;
  for (int i = 0; i < 100; ++i) model.insert(k.cause().index & 0xffu);
  for (int i = 0; i < 100; ++i) client.insert(k.client_cause().index & 0xffu);
  EXPECT_EQ(*model.rbegin(), 99u);
  EXPECT_EQ(*client.begin(), 128u);
  EXPECT_EQ(*client.rbegin(), 227u);
  // In reference order the client shares the model's numbering, as in ns-3.
  Kernel r;
  EXPECT_EQ(r.cause().index, 0u);
  EXPECT_EQ(r.client_cause().index, 1u);
}

TEST(Cause, PortAndFlowContextsAreDisjointAndFitTheLineage) {
  EXPECT_EQ(cause::port_move_context(0, 0), 1ull << 20);  // port + 1: context 0 is the barrier's own
  EXPECT_EQ(cause::port_move_context(5, 3), (6ull << 20) | 3u);
  EXPECT_EQ(cause::port_move_context(5, (1ull << 20) + 3), (6ull << 20) | 3u);  // the count wraps in its 20 bits
  const uint64_t last_port = cause::port_move_context(uint32_t(cause::kMaxContextPorts - 1), (1ull << 20) - 1);
  EXPECT_EQ(last_port, (1ull << 43) - 1);
  EXPECT_EQ(cause::flow_context(0), 1ull << 43);
  EXPECT_LT(last_port, cause::flow_context(0));
  EXPECT_LT(cause::flow_context(UINT32_MAX), cause::kContextLimit);
  // A context becomes the lineage of its children's keys: distinct contexts give distinct keys.
  const Time t = 3 * kUs;
  std::set<uint64_t> keys;
  for (uint64_t ctx : {cause::port_move_context(0, 0), cause::port_move_context(0, 1), cause::port_move_context(1, 0),
                       cause::flow_context(0), cause::flow_context(1)})
    keys.insert(cause::portable_key(t, Cause{t, ctx << cause::kParentShift, 0}));
  EXPECT_EQ(keys.size(), 5u);
}

TEST(Cause, MixedIdentityChangesOnlyTheLineageAParentPassesOn) {
  const uint64_t parent = 0x123456789abcdefull;
  const uint64_t mixed = cause::mix_identity(parent, 42);
  EXPECT_EQ(mixed & ((1ull << cause::kParentShift) - 1), parent & ((1ull << cause::kParentShift) - 1));
  EXPECT_NE(mixed >> cause::kParentShift, parent >> cause::kParentShift);
  EXPECT_NE(cause::mix_identity(parent, 43), mixed);
  EXPECT_EQ(cause::mix_identity(parent, 42), mixed);  // a function of the packet, whichever rank
}

TEST(Cause, ReferenceKeyIsExecutionNumberThenChild) {
  EXPECT_EQ(cause::reference_key(Cause{0, 7, 3}), (7ull << 20) | 3u);
  EXPECT_EQ(cause::reference_key(Cause{0, 7, (1u << 20) + 3}), (7ull << 20) | 3u);
  EXPECT_LT(cause::reference_key(Cause{0, 7, (1u << 20) - 1}), cause::reference_key(Cause{0, 8, 0}));
}
