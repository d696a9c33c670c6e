// PortArray (wormhole/net/port_array.h): ports made one by one in reserved address space; the ports
// not made take no memory.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "wormhole/net/port_array.h"

namespace wh {
namespace {

// This process's resident set (VmRSS), bytes.
uint64_t resident_bytes() {
  std::ifstream f("/proc/self/status");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key) {
    if (key == "VmRSS:") {
      f >> kib >> unit;
      return kib * 1024;
    }
    std::getline(f, unit);
  }
  return 0;
}

TEST(PortArray, MakesPortsOneByOneWithTheirDefaults) {
  PortArray a(10);
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(a.made_count(), 0u);
  Port& p = a.make(7);
  EXPECT_TRUE(a.made(7));
  EXPECT_FALSE(a.made(6));
  EXPECT_EQ(p.pfc_shift, 3);  // a default-built port
  EXPECT_EQ(p.wake_at, -1);
  EXPECT_TRUE(p.up);
  p.qps.push_back(42);
  EXPECT_EQ(&a.make(7), &p);  // made already: as it is
  EXPECT_EQ(a[7].qps.size(), 1u);
  EXPECT_EQ(a.made_count(), 1u);
  PortArray b = std::move(a);
  EXPECT_EQ(b.size(), 10u);
  EXPECT_EQ(b[7].qps[0], 42u);
  EXPECT_EQ(a.size(), 0u);
}

TEST(PortArray, PortsNotMadeTakeNoMemory) {
  // Room for a million ports (768 MB); a thousand made, spread over the range, take about a page
  // each (4 KB, of which their 768 B), the rest nothing. A vector of them all would take 768 MB.
  const uint64_t before = resident_bytes();
  PortArray a(1'000'000);
  for (size_t p = 0; p < a.size(); p += 1000) a.make(p).qps.push_back(uint32_t(p));
  const uint64_t grown = resident_bytes() - before;
  EXPECT_EQ(a.made_count(), 1000u);
  EXPECT_LT(grown, 16u << 20) << grown << " B";
  EXPECT_EQ(a[999'000].qps[0], 999'000u);
}

}  // namespace
}  // namespace wh
