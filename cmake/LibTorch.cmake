# LibTorch from the unpacked PyPI wheel (scripts/setup.sh puts it in .deps/site/torch) and the CUDA toolkit.
#
# We declare the imported target by hand instead of calling find_package(Torch): TorchConfig.cmake re-detects CUDA,
# cuDNN and NVTX through Caffe2's own scripts, which break on toolkit layouts other than the one the wheel was built
# on; the wheel's libraries and headers are all we need.
set(_default_site "${PROJECT_SOURCE_DIR}/.deps/site")
if(GRAPHCHECK_WHEEL AND NOT EXISTS "${_default_site}/torch/lib/libtorch_cuda.so")
  # `pip install --no-build-isolation .` in an environment with torch: build against that torch.
  find_package(Python REQUIRED COMPONENTS Interpreter)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
            "import importlib.util, os; print(os.path.dirname(os.path.dirname(importlib.util.find_spec('torch').origin)))"
    OUTPUT_VARIABLE _default_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
set(GRAPHCHECK_SITE_DIR "${_default_site}" CACHE PATH "Folder holding torch/ and nvidia/ from the wheels")
set(_torch "${GRAPHCHECK_SITE_DIR}/torch")
if(NOT EXISTS "${_torch}/lib/libtorch_cuda.so" OR NOT EXISTS "${_torch}/include/torch/csrc/api/include/torch/torch.h")
  message(FATAL_ERROR "LibTorch not found in ${_torch}: run scripts/setup.sh (or set GRAPHCHECK_SITE_DIR)")
endif()

find_package(CUDAToolkit 13 REQUIRED)

add_library(graphcheck_libtorch INTERFACE)
target_include_directories(graphcheck_libtorch SYSTEM INTERFACE
  "${_torch}/include" "${_torch}/include/torch/csrc/api/include")
# libtorch_cuda registers the CUDA backend from static initializers: keep it even though no symbol is referenced.
target_link_libraries(graphcheck_libtorch INTERFACE
  "-Wl,--no-as-needed" "${_torch}/lib/libtorch_cuda.so" "${_torch}/lib/libc10_cuda.so" "-Wl,--as-needed"
  "${_torch}/lib/libtorch_cpu.so" "${_torch}/lib/libtorch.so" "${_torch}/lib/libc10.so" CUDA::cudart)
# libtorch_cuda's own RPATH finds cufile/cusparseLt/nvshmem next to it; the linker needs to be told.
target_link_options(graphcheck_libtorch INTERFACE
  "LINKER:-rpath-link,${GRAPHCHECK_SITE_DIR}/nvidia/cu13/lib"
  "LINKER:-rpath-link,${GRAPHCHECK_SITE_DIR}/nvidia/cusparselt/lib"
  "LINKER:-rpath-link,${GRAPHCHECK_SITE_DIR}/nvidia/nvshmem/lib")
# The build tree's binaries find this LibTorch by path; the wheel's find the user's torch (cmake/Wheel.cmake).
if(NOT GRAPHCHECK_WHEEL)
  target_link_options(graphcheck_libtorch INTERFACE "LINKER:-rpath,${_torch}/lib")
endif()
