#include "runner/base/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace vmm {
namespace {

namespace fs = std::filesystem;

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vmm_input_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(InputFileTest, ReadsARegularFile) {
  StatusOr<std::string> text = ReadInputFile(Write("a.yaml", "name: a\n"), 100);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "name: a\n");
}

TEST_F(InputFileTest, RefusesAFifoAtOnce) {
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> text = ReadInputFile(fifo, Limit::kInputBytes);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kInvalidInput);
  EXPECT_EQ(text.status().message(),
            "cannot read the file: it is a FIFO (named pipe); expected a regular file");
}

TEST_F(InputFileTest, RefusesADirectoryAndADevice) {
  StatusOr<std::string> dir = ReadInputFile(dir_.string(), Limit::kInputBytes);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(),
            "cannot read the file: it is a directory; expected a regular file");
  StatusOr<std::string> zero = ReadInputFile("/dev/zero", Limit::kInputBytes);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(),
            "cannot read the file: it is a character device; expected a regular file");
}

TEST_F(InputFileTest, RefusesAFileOverTheLimit) {
  StatusOr<std::string> text = ReadInputFile(Write("big.yaml", std::string(2048, 'x')), 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            "the file is 2048 bytes; the limit is 1 KiB (see docs/limits-and-safety.md)");
  EXPECT_TRUE(ReadInputFile(Write("edge.yaml", std::string(1024, 'x')), 1024).ok());
}

TEST_F(InputFileTest, MissingFileSaysWhy) {
  StatusOr<std::string> text = ReadInputFile((dir_ / "nope.yaml").string(), 100);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "cannot read the file: No such file or directory");
}

}  // namespace
}  // namespace vmm
