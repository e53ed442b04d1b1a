// The driver's own graph calls for ReadGraphManifest (graph_manifest.h), apart from the reader so that tests of the
// reader link no driver.
#include "capture/graph_manifest.h"

namespace graphcheck::capture {
namespace {

// A driver entry point of CUDA 12.4 or later, or null when this driver lacks it.
template <typename Fn>
Fn Lookup(const char* symbol) {
  void* function = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (cuGetProcAddress(symbol, &function, 12040, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
      found != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return reinterpret_cast<Fn>(function);
}

}  // namespace

GraphDriver DriverGraphCalls() {
  GraphDriver driver;
  driver.get_nodes = cuGraphGetNodes;
  driver.node_type = cuGraphNodeGetType;
  driver.kernel_params = cuGraphKernelNodeGetParams;
  driver.copy_params = cuGraphMemcpyNodeGetParams;
  driver.set_params = cuGraphMemsetNodeGetParams;
  driver.child_graph = cuGraphChildGraphNodeGetGraph;
  driver.function_param_info = Lookup<decltype(driver.function_param_info)>("cuFuncGetParamInfo");
  driver.kernel_param_info = Lookup<decltype(driver.kernel_param_info)>("cuKernelGetParamInfo");
  return driver;
}

}  // namespace graphcheck::capture
