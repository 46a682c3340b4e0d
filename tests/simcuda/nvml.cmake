# The simulated NVML, ${VT_SIMCUDA_DIR}/libnvidia-ml.so.1 (target simnvml), included
# from tests/simcuda/CMakeLists.txt. It asks the simulated driver for the device's
# memory (cuSimcudaDeviceMemory, src/nvml_bridge.c, compiled into simcuda_driver) and
# finds it through DT_NEEDED libcuda.so.1 + RUNPATH $ORIGIN. docs/simcuda.md "NVML".
add_library(simnvml SHARED ${SIMCUDA_SRC}/nvml_device.c ${SIMCUDA_SRC}/nvml_ecc.c)
target_include_directories(simnvml PRIVATE ${VT_CUDA_INCLUDE} ${SIMCUDA_SRC} ${CMAKE_SOURCE_DIR}/common)
target_link_libraries(simnvml PRIVATE simcuda_driver ${CMAKE_DL_LIBS} Threads::Threads)
target_link_options(simnvml PRIVATE
  -Wl,--version-script=${SIMCUDA_SRC}/libnvidia-ml.map
  -Wl,-soname,libnvidia-ml.so.1
  -Wl,--enable-new-dtags)
set_target_properties(simnvml PROPERTIES
  C_VISIBILITY_PRESET default
  OUTPUT_NAME nvidia-ml
  SUFFIX ".so.1"
  NO_SONAME ON
  BUILD_RPATH "\$ORIGIN"
  LIBRARY_OUTPUT_DIRECTORY ${VT_SIMCUDA_DIR}
  LINK_DEPENDS ${SIMCUDA_SRC}/libnvidia-ml.map)
# Built with the runtime, so every test that uses ${VT_SIMCUDA_ENV} has it.
add_dependencies(simcudart simnvml)
