// graph-contract (and analysis/graph_contract.h under it): one line per graph of what it names and bakes in; a
// graph whose nodes could not be read is not audited; a trace without manifests has no note.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/graph_contract.h"
#include "checks/checks.h"
#include "tests/checks/trace/contract_test_util.h"

namespace graphcheck::testing_trace {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(GraphContractTest, OneLinePerGraphSaysWhatItNamesAndBakesIn) {
  TraceBuilder b;
  Allocation(b, 100, trace::AllocatorEvent::Action::kAlloc, 0x7f0000500000, 4096);
  Capture(b);
  const trace::Trace trace = b.Build();
  const analysis::TraceAnalysis analysis(trace);
  const std::vector<analysis::GraphContract> contracts = analysis::ReadGraphContracts(analysis);
  ASSERT_THAT(contracts, SizeIs(1));
  EXPECT_EQ(contracts[0].pool_addresses, 1u);
  EXPECT_EQ(contracts[0].program_blocks, 1u);
  EXPECT_EQ(analysis::DescribeContract(trace, contracts[0]),
            "1 kernel, 0 copies, 0 sets; names 1 parameter (256 KiB), 1 buffer (1 KiB), 1 other block of the "
            "program's memory; 1 address in graph pools; bakes in 3 host values the probe watches, from 2 modules");
  const std::vector<Finding> findings = RunCheck(*checks::NewGraphContractCheck(), trace);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].severity, Severity::kNote);
  EXPECT_THAT(findings[0].evidence[0], HasSubstr("graph 55 (captured at /home/me/train.py"));
}

TEST(GraphContractTest, AGraphWhoseNodesCouldNotBeReadIsNotAudited) {
  TraceBuilder b;
  Capture(b);
  b.trace().graph_manifests[0].unread_nodes = 3;
  b.trace().graph_manifests[0].unread_reason = b.Intern("this driver has no cuFuncGetParamInfo (CUDA 12.4 or later)");
  const std::vector<Finding> findings = Findings(checks::NewGraphContractCheck(), b);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_THAT(findings[0].message, HasSubstr("(1 not audited: their nodes could not all be read)"));
  EXPECT_THAT(findings[0].evidence[0],
              HasSubstr("not audited: 3 nodes unread (this driver has no cuFuncGetParamInfo (CUDA 12.4 or later))"));
}

TEST(GraphContractTest, ATraceWithoutManifestsHasNoNote) {
  TraceBuilder b;
  Capture(b);
  b.trace().graph_manifests.clear();
  EXPECT_THAT(Findings(checks::NewGraphContractCheck(), b), IsEmpty());
}

}  // namespace
}  // namespace graphcheck::testing_trace
