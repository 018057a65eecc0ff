// ScratchDir: a fresh, empty directory for the running test, <tmp>/<prefix>_<pid>_<test name>,
// removed (with everything in it) when the object goes away. Construct it inside a test or a
// fixture (GoogleTest's current test names it). Header-only, for every test binary.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace vmm {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : dir_(std::filesystem::temp_directory_path() /
             (prefix + "_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // The path of `name` inside the directory.
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  // Writes `text` to `name` (binary) and returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace vmm
