# Finds METIS (Debian's libmetis-dev ships neither a CMake package nor a .pc file).
# Honours METIS_DIR (hint or environment). Defines METIS::METIS and METIS_VERSION.
find_path(METIS_INCLUDE_DIR metis.h HINTS ${METIS_DIR} ENV METIS_DIR PATH_SUFFIXES include include/metis)
find_library(METIS_LIBRARY metis HINTS ${METIS_DIR} ENV METIS_DIR PATH_SUFFIXES lib lib64)
if(METIS_INCLUDE_DIR AND EXISTS "${METIS_INCLUDE_DIR}/metis.h")
  foreach(part MAJOR MINOR SUBMINOR)
    file(STRINGS "${METIS_INCLUDE_DIR}/metis.h" line REGEX "#define METIS_VER_${part}[ \t]+[0-9]+")
    string(REGEX REPLACE ".*METIS_VER_${part}[ \t]+([0-9]+).*" "\\1" METIS_VER_${part} "${line}")
  endforeach()
  set(METIS_VERSION "${METIS_VER_MAJOR}.${METIS_VER_MINOR}.${METIS_VER_SUBMINOR}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(METIS REQUIRED_VARS METIS_LIBRARY METIS_INCLUDE_DIR VERSION_VAR METIS_VERSION)
if(METIS_FOUND AND NOT TARGET METIS::METIS)
  add_library(METIS::METIS UNKNOWN IMPORTED)
  set_target_properties(METIS::METIS PROPERTIES IMPORTED_LOCATION "${METIS_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${METIS_INCLUDE_DIR}")
endif()
mark_as_advanced(METIS_INCLUDE_DIR METIS_LIBRARY)
