# Finds the Open MPI flavour of parallel HDF5 and fails the configure otherwise
# (a serial libhdf5-dev would otherwise be picked silently; Debian ships both).
set(HDF5_PREFER_PARALLEL ON)
set(HDF5_NO_FIND_PACKAGE_CONFIG_FILE ON)
if(NOT HDF5_C_COMPILER_EXECUTABLE)
  find_program(WH_H5PCC NAMES h5pcc.openmpi h5pcc)
  if(WH_H5PCC)
    set(HDF5_C_COMPILER_EXECUTABLE ${WH_H5PCC} CACHE FILEPATH "parallel HDF5 compiler wrapper")
  endif()
endif()
find_package(HDF5 1.10 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "Serial HDF5 found (${HDF5_INCLUDE_DIRS}); wormhole needs parallel HDF5: "
                      "install libhdf5-openmpi-dev (scripts/setup.sh) and remove libhdf5-dev")
endif()
if(NOT "${HDF5_INCLUDE_DIRS}" MATCHES "openmpi")
  message(FATAL_ERROR "Parallel HDF5 is not the Open MPI flavour: ${HDF5_INCLUDE_DIRS}; "
                      "install libhdf5-openmpi-dev or pass -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.openmpi")
endif()
message(STATUS "Parallel HDF5 (Open MPI): ${HDF5_INCLUDE_DIRS}")
add_library(wh::hdf5 INTERFACE IMPORTED)
target_link_libraries(wh::hdf5 INTERFACE HDF5::HDF5 MPI::MPI_C)
