// The reader on damaged traces: specific damage (truncation, a torn chunk, a corrupted record, an unknown record type)
// is read up to the damage with a warning naming the offset, and a deterministic replay of a few hundred random
// mutations and truncations of a valid trace (the same kind of input the libFuzzer target explores) never crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <regex>
#include <string>

#include "tests/trace/trace_test_events.h"
#include "trace/internal/format.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace graphcheck::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

constexpr size_t kChunk = 4096;
constexpr size_t kData = 4096;  // the header page on a 4 KiB-page machine
constexpr int kRecords = 600;

// A valid trace over several 4 KiB chunks, with every record type.
std::string ValidTrace() {
  const std::string path = testing::TempDir() + "/valid.gctrace";
  TraceWriter::Options options;
  options.chunk_bytes = kChunk;
  auto writer = *TraceWriter::Create(path, testing::SampleProcess(), options);
  const StringId api = writer->InternString("cudaLaunchKernel");
  for (int i = 0; i < kRecords; ++i) {
    const StringId kernel = writer->InternString("kernel_" + std::to_string(i % 40));
    ApiCallRecord c = testing::LaunchCall(i, api, kernel);
    c.backtrace = writer->AddBacktrace({api, kernel});
    writer->WriteApiCall(c);
    writer->WriteKernel(testing::KernelRun(i, kernel));
  }
  writer->WriteNvtx(NvtxEvent{NvtxEvent::Kind::kPush, 1, 2, 0, api, 0});
  Environment env;
  env.Set("CUDA_LAUNCH_BLOCKING", "1");
  writer->WriteEnvironment(env);
  return testing::FileBytes(path);
}

const std::string& Valid() {
  static const std::string* bytes = new std::string(ValidTrace());
  return *bytes;
}

void ExpectWarningsNameOffsets(const Trace& trace) {
  for (const std::string& w : trace.read_warnings) EXPECT_THAT(w, MatchesRegex("offset [0-9]+: .+")) << w;
}

TEST(TraceDamageTest, ValidTraceHasNoWarningsAndSpansChunks) {
  TraceFileStats stats;
  absl::StatusOr<Trace> trace = ReadTraceFromBytes(Valid(), &stats);
  ASSERT_TRUE(trace.ok());
  EXPECT_THAT(trace->read_warnings, IsEmpty());
  EXPECT_EQ(trace->api_calls.size(), static_cast<size_t>(kRecords));
  EXPECT_GT(stats.chunks, 3u);
  EXPECT_EQ(Valid().size(), kData + stats.chunks * kChunk);
}

TEST(TraceDamageTest, TruncatedFileKeepsEarlierChunksAndNamesTheOffset) {
  const size_t cut = kData + 2 * kChunk + 1000;  // inside the third chunk
  absl::StatusOr<Trace> trace = ReadTraceFromBytes(Valid().substr(0, cut));
  ASSERT_TRUE(trace.ok());
  // The cut chunk, and (format 1.2) the header's expected length, which the file falls short of.
  ASSERT_EQ(trace->read_warnings.size(), 2u);
  EXPECT_THAT(trace->read_warnings[0], HasSubstr("the file ends " + std::to_string(Valid().size() - cut) + " bytes"));
  EXPECT_THAT(trace->read_warnings[1], HasSubstr("offset " + std::to_string(kData + 2 * kChunk) + ": truncated chunk"));
  EXPECT_GT(trace->api_calls.size(), 0u);
  EXPECT_LT(trace->api_calls.size(), static_cast<size_t>(kRecords));
  for (size_t i = 1; i < trace->api_calls.size(); ++i) {
    EXPECT_EQ(trace->api_calls[i].correlation_id, trace->api_calls[i - 1].correlation_id + 1);
  }
}

// A size field that claims 4 GiB (or more) must not make the reader allocate it: capacities over 64 MiB are damage.
TEST(TraceDamageTest, AChunkClaimingFourGibibytesIsSkippedWithoutAllocatingIt) {
  std::string bytes = Valid();
  const size_t second_chunk = kData + kChunk;
  for (int i = 0; i < 8; ++i) bytes[second_chunk + 8 + i] = i == 4 ? 1 : 0;  // capacity = 2^32
  absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes);
  ASSERT_TRUE(trace.ok());
  ASSERT_FALSE(trace->read_warnings.empty());
  EXPECT_THAT(trace->read_warnings[0], HasSubstr("impossible chunk capacity 4294967296"));
  EXPECT_GT(trace->api_calls.size(), 0u);
}

TEST(TraceDamageTest, CorruptedChunkIsSkippedAndTheNextOneRead) {
  std::string bytes = Valid();
  const size_t second_chunk = kData + kChunk;
  bytes[second_chunk + internal::kChunkHeaderBytes] = 99;  // the first record's type
  absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes);
  ASSERT_TRUE(trace.ok());
  EXPECT_THAT(trace->read_warnings,
              ElementsAre(HasSubstr("offset " + std::to_string(second_chunk + internal::kChunkHeaderBytes) +
                                    ": unknown record type 99")));
  absl::StatusOr<Trace> valid = ReadTraceFromBytes(Valid());
  EXPECT_LT(trace->api_calls.size(), valid->api_calls.size());
  EXPECT_GT(trace->api_calls.size() + trace->kernels.size(), (valid->api_calls.size() + valid->kernels.size()) / 2);
}

TEST(TraceDamageTest, BadChunkMagicAndImpossibleCapacityAreSkipped) {
  std::string bytes = Valid();
  bytes[kData] = 'X';
  internal::StoreLe64(reinterpret_cast<uint8_t*>(bytes.data()) + kData + kChunk + internal::kChunkCapacityOffset,
                      12345);
  absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes);
  ASSERT_TRUE(trace.ok());
  EXPECT_THAT(trace->read_warnings,
              ElementsAre(HasSubstr("offset " + std::to_string(kData) + ": bad chunk magic"),
                          HasSubstr("offset " + std::to_string(kData + kChunk) + ": impossible chunk capacity 12345")));
  EXPECT_GT(trace->kernels.size(), 0u);
}

TEST(TraceDamageTest, CommittedCountBeyondCapacityIsClamped) {
  std::string bytes = Valid();
  internal::StoreLe64(reinterpret_cast<uint8_t*>(bytes.data()) + kData + internal::kChunkCommittedOffset, 1 << 30);
  absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes);
  ASSERT_TRUE(trace.ok());
  ASSERT_FALSE(trace->read_warnings.empty());
  EXPECT_THAT(trace->read_warnings[0], HasSubstr("offset " + std::to_string(kData) + ": committed count"));
  ExpectWarningsNameOffsets(*trace);
}

TEST(TraceDamageTest, NotATraceIsAnErrorNotAWarning) {
  EXPECT_FALSE(ReadTraceFromBytes("").ok());
  EXPECT_FALSE(ReadTraceFromBytes(Valid().substr(0, 40)).ok());
  std::string bytes = Valid();
  bytes[0] = 'X';
  EXPECT_EQ(ReadTraceFromBytes(bytes).status().code(), absl::StatusCode::kInvalidArgument);
}

// Deterministic replay: random byte flips, overwrites with boundary values, truncations, zeroed ranges.
TEST(TraceDamageTest, RandomMutationsNeverCrashAndAlwaysNameOffsets) {
  std::mt19937_64 rng(20261121);
  const std::string& valid = Valid();
  int read_ok = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::string bytes = valid;
    const int mutations = 1 + static_cast<int>(rng() % 8);
    for (int m = 0; m < mutations; ++m) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 5) {
        case 0:
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          bytes[at] = static_cast<char>(rng() % 2 ? 0xff : 0x80);
          break;
        case 2:
          bytes.resize(std::max<size_t>(at, internal::kFileHeaderBytes));
          break;
        case 3:
          std::fill(bytes.begin() + at, bytes.begin() + std::min(bytes.size(), at + 64), '\0');
          break;
        case 4:
          bytes[at] = static_cast<char>(rng());
          break;
      }
    }
    TraceFileStats stats;
    absl::StatusOr<Trace> trace = ReadTraceFromBytes(bytes, &stats);
    if (!trace.ok()) continue;  // the header itself was hit
    ++read_ok;
    ExpectWarningsNameOffsets(*trace);
    EXPECT_LE(trace->api_calls.size() + trace->kernels.size() + trace->nvtx.size(), 2u * kRecords + 1);
    // Strings referenced by what was read resolve or are empty, never out of the table.
    for (const ApiCall& c : trace->api_calls) (void)trace->String(trace->Detail(c).kernel_name);
  }
  EXPECT_GT(read_ok, 300);
}

}  // namespace
}  // namespace graphcheck::trace
