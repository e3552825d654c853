# Finds MPFI (interval arithmetic over MPFR); defines the imported target MPFI::MPFI.
find_package(MPFR REQUIRED)
find_path(MPFI_INCLUDE_DIR mpfi.h)
find_library(MPFI_LIBRARY mpfi)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MPFI REQUIRED_VARS MPFI_LIBRARY MPFI_INCLUDE_DIR)
if(MPFI_FOUND AND NOT TARGET MPFI::MPFI)
  add_library(MPFI::MPFI UNKNOWN IMPORTED)
  set_target_properties(MPFI::MPFI PROPERTIES IMPORTED_LOCATION "${MPFI_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${MPFI_INCLUDE_DIR}" INTERFACE_LINK_LIBRARIES MPFR::MPFR)
endif()
mark_as_advanced(MPFI_INCLUDE_DIR MPFI_LIBRARY)
