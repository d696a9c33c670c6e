// InputError's message: binary input shown as \xNN, whole UTF-8 characters kept.
#include <gtest/gtest.h>

#include "wormhole/core/input_error.h"

using namespace wh;

TEST(InputError, KeepsUtf8AndEscapesWhatIsNotText) {
  EXPECT_EQ(InputError::printable("8 hosts of a k=2 fat tree (k³/4), 5 µs"), "8 hosts of a k=2 fat tree (k³/4), 5 µs");
  EXPECT_EQ(InputError::printable("a\tb\x01"), "a\\x09b\\x01");
  EXPECT_EQ(InputError::printable("\xff\xfe"), "\\xff\\xfe");                  // never UTF-8
  EXPECT_EQ(InputError::printable("x\xc2"), "x\\xc2");                         // cut short at the end
  EXPECT_EQ(InputError::printable("\xe2\x82z"), "\\xe2\\x82z");                // a continuation byte missing
  EXPECT_EQ(InputError::printable("\xf0\x9f\x98\x80!"), "\xf0\x9f\x98\x80!");  // four bytes
  // It was all escaped: "k\xc2\xb3/4".
  const InputError e("topology", 0, "exceed the 2 hosts of a k=2 fat tree (k³/4)", "raise k");
  EXPECT_STREQ(e.what(), "topology: exceed the 2 hosts of a k=2 fat tree (k³/4) (fix: raise k)");
}
