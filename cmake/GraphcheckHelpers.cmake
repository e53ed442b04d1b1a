# Helpers shared by the per-area CMakeLists.

# graphcheck_test(NAME SOURCES... LIBS... [LABELS ...] [ENVIRONMENT VAR=VALUE...]): a GoogleTest binary registered
# with ctest, one ctest entry per test case, so failures name the case.
include(GoogleTest)
function(graphcheck_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS;ENVIRONMENT" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  # GoogleTest and GoogleMock are parsed once per binary, not once per file (2.4 s a file with clang-14).
  target_precompile_headers(${name} PRIVATE <gmock/gmock.h> <gtest/gtest.h>)
  target_compile_options(${name} PRIVATE ${GRAPHCHECK_TEST_COMPILE_OPTIONS})
  target_compile_definitions(${name} PRIVATE GRAPHCHECK_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             GRAPHCHECK_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(labels unit)
  if(ARG_LABELS)
    set(labels ${ARG_LABELS})
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${labels}" ENVIRONMENT "${ARG_ENVIRONMENT}" DISCOVERY_TIMEOUT 60)
endfunction()
