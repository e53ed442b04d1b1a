# The Python wheel's layout (pyproject.toml, scikit-build-core): the three binaries of the CMake build in
# graphcheck/bin/ inside the Python package, with the C++ libraries they load from this machine (Abseil, yaml-cpp,
# pugixml) copied beside them, auditwheel-style, and a DT_RPATH of $ORIGIN: unlike RUNPATH it also serves the copied
# libraries' own dependencies on each other. torch, the CUDA runtime and CUPTI are the user's environment's: the
# launcher (python/graphcheck/_launcher.py) puts their folders on the library path.
if(NOT GRAPHCHECK_WITH_CAPTURE)
  message(FATAL_ERROR "GRAPHCHECK_WHEEL needs GRAPHCHECK_WITH_CAPTURE (the wheel holds the recorder and the engine)")
endif()

set(_wheel_bin "graphcheck/bin")  # relative to the wheel's platlib, scikit-build-core's install prefix
set(_wheel_targets graphcheck graphcheck-engine graphcheck_inject)
set_target_properties(${_wheel_targets} PROPERTIES INSTALL_RPATH "$ORIGIN")
foreach(_target IN LISTS _wheel_targets)
  target_link_options(${_target} PRIVATE "LINKER:--disable-new-dtags")
endforeach()
install(TARGETS ${_wheel_targets} RUNTIME DESTINATION "${_wheel_bin}" COMPONENT wheel
        LIBRARY DESTINATION "${_wheel_bin}" COMPONENT wheel)

# The Python probe beside the binaries, where `graphcheck run` looks for it (ExecutableDir()/probe).
file(GLOB _wheel_probe "${PROJECT_SOURCE_DIR}/python/probe/*.py")
install(FILES ${_wheel_probe} DESTINATION "${_wheel_bin}/probe" COMPONENT wheel)
file(GLOB _wheel_probe_package "${PROJECT_SOURCE_DIR}/python/probe/graphcheck_probe/*.py")
install(FILES ${_wheel_probe_package} DESTINATION "${_wheel_bin}/probe/graphcheck_probe" COMPONENT wheel)

# Each copied library under its soname, as a file (a wheel holds no symbolic links).
install(CODE "set(_wheel_bin \"${_wheel_bin}\")" COMPONENT wheel)
install(CODE [[
  file(GET_RUNTIME_DEPENDENCIES
    EXECUTABLES "$<TARGET_FILE:graphcheck>" "$<TARGET_FILE:graphcheck-engine>"
    LIBRARIES "$<TARGET_FILE:graphcheck_inject>"
    RESOLVED_DEPENDENCIES_VAR _resolved
    PRE_INCLUDE_REGEXES "^libabsl_" "^libyaml-cpp" "^libpugixml"
    PRE_EXCLUDE_REGEXES ".*")
  foreach(_library IN LISTS _resolved)
    get_filename_component(_soname "${_library}" NAME)
    get_filename_component(_real "${_library}" REALPATH)
    message(STATUS "Vendoring: ${_soname}")
    file(COPY_FILE "${_real}" "${CMAKE_INSTALL_PREFIX}/${_wheel_bin}/${_soname}" ONLY_IF_DIFFERENT)
  endforeach()
]] COMPONENT wheel)

# The torch the engine was built against, for the launcher's refusal of any other.
include("${GRAPHCHECK_SITE_DIR}/torch/share/cmake/Torch/TorchConfigVersion.cmake")
set(GRAPHCHECK_TORCH_VERSION "${PACKAGE_VERSION}")
set(GRAPHCHECK_TORCH_CUDA "${CUDAToolkit_VERSION_MAJOR}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/wheel_build_info.py.in" "${PROJECT_BINARY_DIR}/wheel/_build_info.py"
               @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/wheel/_build_info.py" DESTINATION graphcheck COMPONENT wheel)
