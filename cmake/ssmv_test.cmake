# ssmv_add_test(NAME <target> LABEL <unit|property|gpu> SOURCES ... LIBS ...
#               [TIMEOUT seconds] [ENVIRONMENT VAR=value])
# One GoogleTest executable; its tests are registered with CTest under LABEL, with the one
# ENVIRONMENT variable (no spaces or semicolons in it) set for each test.
# Tests labelled gpu call GTEST_SKIP() when no CUDA device is present.
function(ssmv_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT;ENVIRONMENT" "SOURCES;LIBS" ${ARGN})
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
    PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT} ${env_property})
endfunction()
