# ssmv_add_test(NAME <target> LABEL <unit|property|gpu> [sanitize] SOURCES ... LIBS ...
#               [TIMEOUT seconds] [ENVIRONMENT VAR=value])
# One GoogleTest executable; its tests are registered with CTest under LABEL's labels
# (`sanitize`: also run by .ci/run in the AddressSanitizer/UBSan build), with the one
# ENVIRONMENT variable (no spaces or semicolons in it) set for each test.
# Tests labelled gpu call GTEST_SKIP() when no CUDA device is present.
function(ssmv_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;ENVIRONMENT" "LABEL;SOURCES;LIBS" ${ARGN})
  # The sanitizer build (SSMV_SANITIZE) builds and registers only the tests labelled
  # sanitize: the parsers, judging and reports that read untrusted input (tensor files,
  # JSON) and run on every check. The twins and the reference are exercised by the
  # property suites of the normal build.
  if(SSMV_SANITIZE AND NOT "sanitize" IN_LIST T_LABEL)
    return()
  endif()
  list(GET T_LABEL 0 label)  # the CTest label: unit, property or gpu
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  set(env_property)
  if(T_ENVIRONMENT)
    set(env_property ENVIRONMENT ${T_ENVIRONMENT})
  endif()
  gtest_discover_tests(${T_NAME}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS ${label} TIMEOUT ${T_TIMEOUT} ${env_property})
endfunction()
