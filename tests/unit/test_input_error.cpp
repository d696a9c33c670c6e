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
  // Well-formed but a terminal acts on it or it reorders the line: escaped.
  EXPECT_EQ(InputError::printable("\xc2\x9b" "31m"), "\\xc2\\x9b31m");            // C1 CSI
  EXPECT_EQ(InputError::printable("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xae" "b");        // right-to-left override
  EXPECT_EQ(InputError::printable("\xe2\x81\xa6"), "\\xe2\\x81\\xa6");            // left-to-right isolate
  EXPECT_EQ(InputError::printable("\xe2\x80\xa8"), "\\xe2\\x80\\xa8");            // line separator
  EXPECT_EQ(InputError::printable("\xef\xbb\xbf" "x"), "\\xef\\xbb\\xbf" "x");          // byte-order mark
  EXPECT_EQ(InputError::printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(InputError::printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");            // a surrogate
  EXPECT_EQ(InputError::printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");            // overlong "/"
  // It was all escaped: "k\xc2\xb3/4".
  const InputError e("topology", 0, "exceed the 2 hosts of a k=2 fat tree (k³/4)", "raise k");
  EXPECT_STREQ(e.what(), "topology: exceed the 2 hosts of a k=2 fat tree (k³/4) (fix: raise k)");
}
