#include "runner/report/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vmm::report {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vmm_atomic_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every entry of the directory, to show that no temp file is left.
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesAndReplacesARegularFile) {
  ASSERT_TRUE(WriteFileAtomically(Path("r.json"), "one").ok());
  ASSERT_TRUE(WriteFileAtomically(Path("r.json"), "two").ok());
  EXPECT_EQ(Read(Path("r.json")), "two");
  EXPECT_EQ(Entries(), std::vector<std::string>{"r.json"});
  struct stat st {};
  ASSERT_EQ(::stat(Path("r.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFileTest, RefusesAFifoADirectoryAndASymlink) {
  ASSERT_EQ(::mkfifo(Path("fifo.json").c_str(), 0600), 0);
  Status fifo = WriteFileAtomically(Path("fifo.json"), "x");
  EXPECT_EQ(fifo.code(), Code::kInvalidInput);
  EXPECT_EQ(fifo.message(), "'" + Path("fifo.json") +
                                "' is a FIFO (named pipe); vmm-run only replaces regular files: "
                                "remove it or choose another path");
  fs::create_directory(Path("dir.json"));
  EXPECT_EQ(WriteFileAtomically(Path("dir.json"), "x").message(),
            "'" + Path("dir.json") +
                "' is a directory; vmm-run only replaces regular files: remove it or choose "
                "another path");
  std::ofstream(Path("elsewhere")) << "keep";
  fs::create_symlink(Path("elsewhere"), Path("link.json"));
  EXPECT_EQ(WriteFileAtomically(Path("link.json"), "x").message(),
            "'" + Path("link.json") +
                "' is a symbolic link; vmm-run only replaces regular files: remove it or choose "
                "another path");
  EXPECT_EQ(Read(Path("elsewhere")), "keep");
  EXPECT_TRUE(fs::is_fifo(Path("fifo.json")));
  EXPECT_TRUE(fs::is_symlink(Path("link.json")));
  EXPECT_EQ(Entries(),
            (std::vector<std::string>{"dir.json", "elsewhere", "fifo.json", "link.json"}));
}

TEST_F(AtomicFileTest, CheckReplaceableTarget) {
  EXPECT_TRUE(CheckReplaceableTarget(Path("absent.json")).ok());
  std::ofstream(Path("r.json")) << "x";
  EXPECT_TRUE(CheckReplaceableTarget(Path("r.json")).ok());
  EXPECT_FALSE(CheckReplaceableTarget("/dev/null").ok());
}

// The old predictable "<path>.tmp.<pid>" is a plain file here: the writer neither follows nor
// touches it, and leaves no temp file of its own.
TEST_F(AtomicFileTest, NeverFollowsAPlantedTempName) {
  std::ofstream(Path("victim")) << "keep";
  fs::create_symlink(Path("victim"), Path("r.json.tmp." + std::to_string(::getpid())));
  ASSERT_TRUE(WriteFileAtomically(Path("r.json"), "new").ok());
  EXPECT_EQ(Read(Path("victim")), "keep");
  EXPECT_EQ(Read(Path("r.json")), "new");
  EXPECT_EQ(Entries().size(), 3u);
}

TEST_F(AtomicFileTest, AMissingDirectoryFailsWithoutLeavingAnything) {
  Status s = WriteFileAtomically(Path("none/r.json"), "x");
  EXPECT_EQ(s.code(), Code::kRuntime);
  EXPECT_EQ(s.message(), "cannot write '" + Path("none/r.json") + "': No such file or directory");
  EXPECT_TRUE(Entries().empty());
}

}  // namespace
}  // namespace vmm::report
