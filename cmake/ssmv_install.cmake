# `cmake --install` rules: ssmv as a CMake package for kernel authors,
#   find_package(ssmv CONFIG REQUIRED)
#   target_link_libraries(my_test PRIVATE ssmv::verify GTest::gtest_main)
# (README.md, "C++"). Installed: the judging libraries of docs/design.md §5 — none links a
# kernel or CUDA — their headers under include/ with the paths the code uses
# ("verify/reports/gtest_contract.h"), and lib/cmake/ssmv/ (ssmvConfig.cmake, the exported targets
# ssmvTargets.cmake, FindMPFR). Not installed: ssmv_run, ssmv_ssu, ssmv_chunk_scan
# (the bundled kernels), the build tree's ssmv_verify (it links ssmv_run). The ssmv command is
# installed to bin/ by its own rule (verify/cli/CMakeLists.txt), outside the exported package.
# CI checks the package from outside: the cmake_package_consumer test
# (scripts/cmake_package_consumer.sh, cmake/consumer_test/).
include(CMakePackageConfigHelpers)

# ssmv::verify: everything a GoogleTest of an external kernel needs (check_outputs /
# check_external, EXPECT_WITHIN_CONTRACT, contract presets and files, reports, tensor
# files). Distinct from the build tree's ssmv_verify, which also links the kernels.
add_library(ssmv_verify_lib INTERFACE)
target_link_libraries(ssmv_verify_lib INTERFACE ssmv_judge ssmv_sharp ssmv_reports ssmv_contracts ssmv_tensor_file
  ssmv_bound)

set(ssmv_installed_targets
  ssmv_spec ssmv_reference ssmv_bound ssmv_judge ssmv_sharp ssmv_contracts ssmv_reports ssmv_json
  ssmv_tensor_file ssmv_ssu_contract ssmv_chunk_scan_contract ssmv_fast_common ssmv_verify_lib)
# Exported as ssmv::<name without the ssmv_ prefix> (ssmv_verify_lib: ssmv::verify), with
# the same names as aliases in this build tree.
foreach(t IN LISTS ssmv_installed_targets)
  string(REGEX REPLACE "^ssmv_" "" name ${t})
  string(REGEX REPLACE "_lib$" "" name ${name})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${name})
  add_library(ssmv::${name} ALIAS ${t})
  target_compile_features(${t} INTERFACE cxx_std_20)  # the headers are C++20
endforeach()

# What is installed must not reach a kernel or CUDA (docs/design.md §5): checked here,
# when CMake configures.
ssmv_forbid_links(TARGETS ${ssmv_installed_targets}
  FORBIDDEN ssmv_run ssmv_verify ssmv_ssu ssmv_chunk_scan ssmv_fast_device ssmv_cuda_common
            CUDA::cudart CUDA::cudart_static)

install(TARGETS ${ssmv_installed_targets}
  EXPORT ssmvTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})  # include/: target_include_directories' INSTALL_INTERFACE

# Headers, at the include paths the sources use. verify/run/ (ssmv_run: it includes the
# kernels) is not installed.
set(ssmv_header_dirs spec reference verify/bound verify/json verify/tensor_file verify/judge verify/sharp verify/contracts
  verify/reports)
foreach(dir IN LISTS ssmv_header_dirs)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir}
    FILES_MATCHING PATTERN "*.h"
    PATTERN tests EXCLUDE PATTERN fuzz EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/fast/common/hd.h ${PROJECT_SOURCE_DIR}/fast/common/fast_math.h
  ${PROJECT_SOURCE_DIR}/fast/common/fast_math_budgets.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fast/common)
install(FILES ${PROJECT_SOURCE_DIR}/fast/ssu/contract.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fast/ssu)
install(FILES ${PROJECT_SOURCE_DIR}/fast/chunk_scan/contract.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fast/chunk_scan)

# The package: config, version, exported targets, the find modules the config uses.
set(ssmv_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ssmv)
install(EXPORT ssmvTargets NAMESPACE ssmv:: DESTINATION ${ssmv_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ssmvConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ssmvConfig.cmake INSTALL_DESTINATION ${ssmv_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ssmvConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor version may break the API
install(FILES ${PROJECT_BINARY_DIR}/ssmvConfig.cmake ${PROJECT_BINARY_DIR}/ssmvConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindMPFR.cmake
  DESTINATION ${ssmv_cmake_dir})

# CI: install this build into a temporary prefix, build a consumer project against it
# with find_package(ssmv CONFIG) and run its test (a kernel of its own judged with
# EXPECT_WITHIN_CONTRACT). Not in the sanitizer build (its libraries need -fsanitize).
if(NOT SSMV_SANITIZE)
  add_test(NAME cmake_package_consumer
    COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/cmake_package_consumer.sh
            ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/cmake/consumer_test ${CMAKE_CXX_COMPILER})
  set_tests_properties(cmake_package_consumer PROPERTIES LABELS unit TIMEOUT 300)
endif()
