// ReadGraphManifest over a fake driver (the seam of capture/graph_manifest.h): what a captured graph's nodes name of
// device memory, found in kernel arguments (pointers passed directly and inside structures passed by value), copies,
// sets and child graphs; and nodes that cannot be read (a driver without cuFuncGetParamInfo, a failing call) marked
// as not audited with the reason, never a crash.
#include "capture/graph_manifest.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace graphcheck::capture {
namespace {

using ::testing::ElementsAre;
using trace::GraphMemoryUse;

constexpr uint64_t kWeight = 0x7f0000100000;
constexpr uint64_t kInput = 0x7f0000200000;
constexpr uint64_t kOutput = 0x7f0000300000;

// A graph's nodes: each node is an index into `nodes`, handed out as a fake handle.
struct FakeNode {
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  std::vector<std::vector<unsigned char>> arguments;  // kernel
  CUresult params_result = CUDA_SUCCESS;
  CUDA_MEMCPY3D copy{};
  CUDA_MEMSET_NODE_PARAMS set{};
  int child = -1;  // index into graphs
};
struct FakeGraph {
  std::vector<FakeNode> nodes;
};

std::vector<FakeGraph> graphs;
std::vector<std::vector<void*>> argument_pointers;  // kept alive for the kernel params handed out

CUgraph GraphHandle(size_t i) { return reinterpret_cast<CUgraph>(i + 1); }
FakeNode& NodeOf(CUgraphNode node) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(node);
  return graphs[(v >> 16) - 1].nodes[(v & 0xffff) - 1];
}
CUfunction FunctionOf(CUgraphNode node) { return reinterpret_cast<CUfunction>(node); }

CUresult GetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  const FakeGraph& g = graphs[reinterpret_cast<uintptr_t>(graph) - 1];
  if (nodes != nullptr) {
    for (size_t i = 0; i < g.nodes.size() && i < *count; ++i) {
      nodes[i] = reinterpret_cast<CUgraphNode>((reinterpret_cast<uintptr_t>(graph) << 16) | (i + 1));
    }
  }
  *count = g.nodes.size();
  return CUDA_SUCCESS;
}
CUresult NodeType(CUgraphNode node, CUgraphNodeType* type) {
  *type = NodeOf(node).type;
  return CUDA_SUCCESS;
}
CUresult KernelParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* params) {
  FakeNode& n = NodeOf(node);
  if (n.params_result != CUDA_SUCCESS) return n.params_result;
  std::vector<void*>& pointers = argument_pointers.emplace_back();
  for (std::vector<unsigned char>& argument : n.arguments) pointers.push_back(argument.data());
  params->func = FunctionOf(node);
  params->kernelParams = pointers.empty() ? nullptr : pointers.data();
  return CUDA_SUCCESS;
}
CUresult ParamInfo(CUfunction function, size_t index, size_t* offset, size_t* bytes) {
  const FakeNode& n = NodeOf(reinterpret_cast<CUgraphNode>(function));
  if (index >= n.arguments.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  *bytes = n.arguments[index].size();
  return CUDA_SUCCESS;
}
CUresult CopyParams(CUgraphNode node, CUDA_MEMCPY3D* copy) {
  *copy = NodeOf(node).copy;
  return CUDA_SUCCESS;
}
CUresult SetParams(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS* set) {
  *set = NodeOf(node).set;
  return CUDA_SUCCESS;
}
CUresult ChildGraph(CUgraphNode node, CUgraph* child) {
  *child = GraphHandle(static_cast<size_t>(NodeOf(node).child));
  return CUDA_SUCCESS;
}

GraphDriver Fake() {
  GraphDriver driver;
  driver.get_nodes = GetNodes;
  driver.node_type = NodeType;
  driver.kernel_params = KernelParams;
  driver.copy_params = CopyParams;
  driver.set_params = SetParams;
  driver.child_graph = ChildGraph;
  driver.function_param_info = ParamInfo;
  return driver;
}

template <typename T>
std::vector<unsigned char> Bytes(const T& value) {
  std::vector<unsigned char> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

// A kernel whose arguments are a pointer, an int, and a structure holding a size, a pointer and a stride.
FakeNode Kernel() {
  struct Iterator {
    int64_t numel;
    uint64_t data;
    int64_t stride;
  };
  FakeNode node;
  node.type = CU_GRAPH_NODE_TYPE_KERNEL;
  node.arguments = {Bytes(kWeight), Bytes(int32_t{7}), Bytes(Iterator{1 << 20, kInput + 64, 4})};
  return node;
}

trace::GraphManifest Read(const GraphDriver& driver, std::vector<std::string>* reasons = nullptr) {
  return ReadGraphManifest(GraphHandle(0), driver, [&](absl::string_view reason) {
    if (reasons != nullptr) reasons->emplace_back(reason);
    return trace::StringId{1};
  });
}

TEST(GraphManifestTest, KernelArgumentsCopiesSetsAndChildGraphsAreRead) {
  FakeNode copy;
  copy.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  copy.copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.copy.dstDevice = kOutput;
  copy.copy.WidthInBytes = 256;
  copy.copy.Height = 1;
  copy.copy.Depth = 1;
  FakeNode set;
  set.type = CU_GRAPH_NODE_TYPE_MEMSET;
  set.set.dst = kOutput + 4096;
  set.set.elementSize = 4;
  set.set.width = 100;
  set.set.height = 1;
  FakeNode child;
  child.type = CU_GRAPH_NODE_TYPE_GRAPH;
  child.child = 1;
  FakeNode host;
  host.type = CU_GRAPH_NODE_TYPE_HOST;
  graphs = {FakeGraph{{Kernel(), copy, set, child, host}}, FakeGraph{{Kernel()}}};
  const trace::GraphManifest manifest = Read(Fake());
  EXPECT_EQ(manifest.kernel_nodes, 2u);
  EXPECT_EQ(manifest.copy_nodes, 1u);
  EXPECT_EQ(manifest.set_nodes, 1u);
  EXPECT_EQ(manifest.other_nodes, 1u);
  EXPECT_TRUE(manifest.Audited());
  // The int, the size and the stride are not addresses; the two kernels' same pointers are kept once.
  EXPECT_THAT(manifest.uses, ElementsAre(GraphMemoryUse{GraphMemoryUse::Access::kArgument, kWeight, 0},
                                         GraphMemoryUse{GraphMemoryUse::Access::kArgument, kInput + 64, 0},
                                         GraphMemoryUse{GraphMemoryUse::Access::kCopyWrite, kOutput, 256},
                                         GraphMemoryUse{GraphMemoryUse::Access::kSet, kOutput + 4096, 400}));
}

TEST(GraphManifestTest, ADriverWithoutParameterInfoLeavesTheGraphNotAudited) {
  graphs = {FakeGraph{{Kernel(), Kernel()}}};
  GraphDriver driver = Fake();
  driver.function_param_info = nullptr;
  std::vector<std::string> reasons;
  const trace::GraphManifest manifest = Read(driver, &reasons);
  EXPECT_FALSE(manifest.Audited());
  EXPECT_EQ(manifest.unread_nodes, 2u);
  EXPECT_TRUE(manifest.uses.empty());
  EXPECT_THAT(reasons, ElementsAre("this driver has no cuFuncGetParamInfo (CUDA 12.4 or later)"));
}

TEST(GraphManifestTest, ANodeWhoseParametersCannotBeReadIsCountedWithItsCode) {
  FakeNode unknown = Kernel();
  unknown.params_result = CUDA_ERROR_INVALID_VALUE;
  graphs = {FakeGraph{{unknown, Kernel()}}};
  std::vector<std::string> reasons;
  const trace::GraphManifest manifest = Read(Fake(), &reasons);
  EXPECT_EQ(manifest.unread_nodes, 1u);
  EXPECT_THAT(reasons, ElementsAre("cuGraphKernelNodeGetParams returned 1"));
  EXPECT_EQ(manifest.uses.size(), 2u);  // the other kernel is still read
}

TEST(GraphManifestTest, OnlyWordsThatCouldBeDeviceAddressesCount) {
  EXPECT_FALSE(CouldBeDeviceAddress(0));
  EXPECT_FALSE(CouldBeDeviceAddress(uint64_t{1} << 31));
  EXPECT_TRUE(CouldBeDeviceAddress(kWeight));
  EXPECT_FALSE(CouldBeDeviceAddress(uint64_t{1} << 63));
}

}  // namespace
}  // namespace graphcheck::capture
