# Install rules (cmake --install build --prefix PREFIX), the Debian package
# (cpack -G DEB from the build folder) and the Python wheel (target `wheel`).
#
# Layout under PREFIX (docs/architecture.md "Install layout"):
#   lib/libvramtrace.so.N.M.P, lib/libvramtrace.so.N -> it, lib/libvramtrace.so -> .so.N
#   lib/pkgconfig/vramtrace.pc        (relocatable: prefix from ${pcfiledir})
#   bin/vramtrace                     (finds ../lib/libvramtrace.so.N itself: vt_run.c)
#   include/vramtrace.h
#   share/vramtrace/python/vramtrace  (the Python helper; `run --tensors` finds it there)
#   share/vramtrace/monitoring        (Prometheus alert rules, Grafana dashboard)
#   share/vramtrace/container         (Dockerfile and Kubernetes Job examples)
#   share/man/man1/vramtrace.1        (made from `vramtrace --help` at build time)
# lib is CMAKE_INSTALL_LIBDIR ("lib" unless the prefix is /usr at configure time on
# a multiarch system); the command reaches it through VT_LIBDIR_FROM_BINDIR.
if(NOT (TARGET vramtrace AND TARGET vramtrace_cli))
  message(STATUS "vramtrace: preload or command not built; no install rules")
  return()
endif()

# Installing and packaging never build: `cmake --build build` first, then `cmake --install`
# or `cpack` (cpack's preinstall step would otherwise rebuild whatever is out of date,
# relinking binaries that other processes, e.g. running tests, are using).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set_target_properties(vramtrace PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${VT_SOVERSION})
install(TARGETS vramtrace LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS vramtrace_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/vramtrace.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

file(RELATIVE_PATH VT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" VT_PC_TO_PREFIX "${VT_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/vramtrace.pc.in ${CMAKE_BINARY_DIR}/vramtrace.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/vramtrace.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/vramtrace DESTINATION ${CMAKE_INSTALL_DATADIR}/vramtrace/python
        PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/monitoring/ DESTINATION ${CMAKE_INSTALL_DATADIR}/vramtrace/monitoring)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/container/ DESTINATION ${CMAKE_INSTALL_DATADIR}/vramtrace/container)

# vramtrace(1): the usage text of the command just built, wrapped in roff
# (cmake/manpage.cmake), so the page says what the binary says.
set(VT_MANPAGE ${CMAKE_BINARY_DIR}/man/vramtrace.1)
add_custom_command(OUTPUT ${VT_MANPAGE}
  COMMAND ${CMAKE_COMMAND} -DVT=$<TARGET_FILE:vramtrace_cli> -DIN=${CMAKE_CURRENT_LIST_DIR}/vramtrace.1.in
          -DOUT=${VT_MANPAGE} -DVERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_DIR}/manpage.cmake
  DEPENDS vramtrace_cli ${CMAKE_CURRENT_LIST_DIR}/vramtrace.1.in ${CMAKE_CURRENT_LIST_DIR}/manpage.cmake
  COMMENT "vramtrace.1 from vramtrace --help")
add_custom_target(vramtrace_man ALL DEPENDS ${VT_MANPAGE})
install(FILES ${VT_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# ---- Debian package: cpack -G DEB (in the build folder) ----
# Depends: dpkg-shlibdeps reads the NEEDED entries of the binaries (the command's
# libjansson4, libdw1, libzstd1, ...; the preload's libc6); the libraries the
# preload loads with dlopen (preload/sys/vt_dlib.h) are invisible to it and are
# named here. tests/install checks that the list covers both.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vramtrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "vramtrace")
set(CPACK_PACKAGE_CONTACT "vramtrace maintainers <vramtrace@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU memory tracer: LD_PRELOAD library and analyzer for CUDA allocations")
set(CPACK_PACKAGE_DESCRIPTION "vramtrace traces every GPU allocation of a CUDA process with no code change
(libvramtrace.so, an LD_PRELOAD library) and reports leaks per call site, growth per
training step and the cause of out-of-memory failures (the vramtrace command).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libunwind8, libelf1")   # libzstd1: the command links it (shlibdeps)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3")
include(CPack)

# ---- Python wheel: cmake --build build --target wheel -> build/wheel/*.whl ----
# scripts/build_wheel.py installs into a staging prefix, vendors the non-glibc
# libraries next to the command and the preload (patchelf, $ORIGIN run paths) and
# calls python/build_backend with the staged folder.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_custom_target(wheel
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/build_wheel.py
            --build ${CMAKE_BINARY_DIR} --out ${CMAKE_BINARY_DIR}/wheel
    DEPENDS vramtrace vramtrace_cli vramtrace_man
    USES_TERMINAL)
endif()
