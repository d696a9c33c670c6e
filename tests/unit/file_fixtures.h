// Scratch files and expected errors shared by the tests that read input files.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "wormhole/core/input_error.h"

namespace wh::test {

/// An empty folder of the running test's own (TempDir()/`group`/<suite>.<test>), made afresh.
inline std::filesystem::path test_dir(const std::string& group) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path d = std::filesystem::path(::testing::TempDir()) / group /
                            (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// Writes `text` to `p` byte for byte (its folder created); returns the path.
inline std::string write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

/// The InputError `f` throws; a test failure (and an empty error) if it throws none.
template <class F>
InputError input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("", 0, "", "");
}

}  // namespace wh::test
