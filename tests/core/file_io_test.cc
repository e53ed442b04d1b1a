#include "core/file_io.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphcheck {
namespace {

using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/file_io_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(ReadInputFileTest, ReadsRegularFilesWithinTheLimit) {
  const std::string path = FreshDir("read") + "/config.yaml";
  std::ofstream(path) << "a: 1\n";
  absl::StatusOr<std::string> text = ReadInputFile(path, kConfigInput);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "a: 1\n");
}

TEST(ReadInputFileTest, RefusesFilesOverTheLimitWithoutReadingThem) {
  const std::string path = FreshDir("big") + "/big.yaml";
  {
    std::ofstream out(path);
    out << "x";
  }
  // A sparse file of 4 GiB: refusing it must not allocate or read it.
  ASSERT_EQ(truncate(path.c_str(), 4ll << 30), 0);
  absl::StatusOr<std::string> text = ReadInputFile(path, kConfigInput);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr("configuration file"));
  EXPECT_THAT(text.status().message(), HasSubstr("at most 16777216"));
}

TEST(ReadInputFileTest, RefusesDevicesDirectoriesAndPipesAtOnce) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    absl::StatusOr<std::string> text = ReadInputFile(device, kStderrInput);
    ASSERT_FALSE(text.ok()) << device;
    EXPECT_THAT(text.status().message(), HasSubstr("is a device")) << device;
  }
  const std::string dir = FreshDir("dir");
  EXPECT_THAT(ReadInputFile(dir, kReportInput).status().message(), HasSubstr("is a directory"));
  // A FIFO with no writer: opening it for reading must not block.
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> text = ReadInputFile(fifo, kReportInput);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("is a pipe"));
  EXPECT_EQ(ReadInputFile(dir + "/missing", kReportInput).status().code(), absl::StatusCode::kNotFound);
}

TEST(WriteFileAtomicallyTest, WritesWholeAndLeavesNoTemporaryFile) {
  const std::string dir = FreshDir("write");
  ASSERT_TRUE(WriteFileAtomically(dir + "/report.json", "{}\n").ok());
  EXPECT_EQ(Slurp(dir + "/report.json"), "{}\n");
  ASSERT_TRUE(WriteFileAtomically(dir + "/report.json", "{\"a\": 1}\n").ok());
  EXPECT_EQ(Slurp(dir + "/report.json"), "{\"a\": 1}\n");
  EXPECT_EQ(FilesIn(dir), 1u);
  EXPECT_FALSE(WriteFileAtomically(dir + "/missing-dir/x.json", "{}").ok());
  EXPECT_THAT(WriteFileAtomically(dir, "{}").message(), HasSubstr("is a directory"));
}

TEST(WriteFileAtomicallyTest, NeverWritesThroughALinkToAFile) {
  const std::string dir = FreshDir("link");
  const std::string victim = dir + "/victim.txt";
  std::ofstream(victim) << "precious";
  // The old writer used the predictable name OUT.tmp.<pid>: plant links at every name it might use, and at the
  // target itself. None may be written through.
  for (int pid : {getpid(), getpid() + 1}) {
    ASSERT_EQ(symlink(victim.c_str(), (dir + "/out.json.tmp." + std::to_string(pid)).c_str()), 0);
  }
  ASSERT_EQ(symlink(victim.c_str(), (dir + "/out.json").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/out.json", "report").ok());
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_EQ(Slurp(dir + "/out.json"), "report");
  struct stat info;
  ASSERT_EQ(lstat((dir + "/out.json").c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode)) << "the link is replaced by a file";
}

TEST(WriteFileAtomicallyTest, WritesDevicesInPlace) {
  ASSERT_TRUE(WriteFileAtomically("/dev/null", "{}\n").ok());
  struct stat info;
  ASSERT_EQ(stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

TEST(WriteFileAtomicallyTest, AFileSizeLimitFailsTheWriteAndRemovesTheTemporaryFile) {
  const std::string dir = FreshDir("fsize");
  // In a child, so that the lowered limit does not affect the rest of the tests.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit limit = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    const absl::Status status = WriteFileAtomically(dir + "/big.json", std::string(1 << 20, 'x'));
    _exit(status.ok() ? 10 : 20);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus)) << "killed by signal " << WTERMSIG(wstatus);
  EXPECT_EQ(WEXITSTATUS(wstatus), 20);
  EXPECT_EQ(FilesIn(dir), 0u);
}

// A child registers a file (and, unless `covered`, releases it again), then gets `signal`: it must die of that signal
// (re-raised, not swallowed), and the file must be gone when covered, there otherwise.
void ExpectSignalRemovesFile(int signal, bool covered) {
  const std::string dir = FreshDir(absl::StrCat("signal_", signal, covered ? "_covered" : "_uncovered"));
  const std::string path = dir + "/.report.json.AbC123";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::ofstream(path) << "half a report";
    std::optional<RemoveOnSignal> remove_on_signal;
    remove_on_signal.emplace(path);
    if (!covered) remove_on_signal.reset();
    kill(getpid(), signal);
    _exit(0);  // only reached if the signal did not end the process
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "exited with " << WEXITSTATUS(wstatus);
  EXPECT_EQ(WTERMSIG(wstatus), signal);
  EXPECT_EQ(std::filesystem::exists(path), !covered);
}

TEST(RemoveOnSignalTest, EverySignalThatEndsTheProcessRemovesTheFileAndStillEndsIt) {
  ExpectSignalRemovesFile(SIGINT, true);
  ExpectSignalRemovesFile(SIGTERM, true);
  ExpectSignalRemovesFile(SIGHUP, true);
  ExpectSignalRemovesFile(SIGQUIT, true);
  ExpectSignalRemovesFile(SIGPIPE, true);
}

TEST(RemoveOnSignalTest, AFileNoLongerCoveredStays) { ExpectSignalRemovesFile(SIGTERM, false); }

}  // namespace
}  // namespace graphcheck
