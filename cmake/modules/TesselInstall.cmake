# What `cmake --install` puts under the prefix, and the pip-installable
# Python package (included by the top-level CMakeLists.txt last, once every
# library and tool exists):
#   bin/                      the tools
#   lib/libTesselC.so*        the C API (Tessel::CAPI)
#   lib/libTessel*.a          the C++ libraries (Tessel::Runtime and what it
#                             links; consumers also need Debian's MLIR/LLVM)
#   include/tessel-c, include/tessel
#   lib/cmake/Tessel/         TesselConfig.cmake: find_package(Tessel)
#   lib/python3/site-packages/tessel
#   share/doc/tessel/LICENSE
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSEL_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessel)
set(TESSEL_INSTALL_PYTHON_DIR ${CMAKE_INSTALL_LIBDIR}/python3/site-packages)

# Tools find libMLIR/libLLVM where Debian keeps them, and libTesselC beside.
set(TESSEL_TOOLS_INSTALLED tessel-opt tesselc tessel-gen tessel-layout
    tessel-run tessel-perf tessel-tune tessel-bench-compile)
foreach(tool ${TESSEL_TOOLS_INSTALLED})
  set_target_properties(${tool} PROPERTIES
    INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
endforeach()
install(TARGETS ${TESSEL_TOOLS_INSTALLED} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The libraries, exported as Tessel:: targets.
get_property(tessel_libs GLOBAL PROPERTY TESSEL_ALL_LIBS)
set_target_properties(TesselC PROPERTIES EXPORT_NAME CAPI
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
set_target_properties(TesselRuntime PROPERTIES EXPORT_NAME Runtime)
foreach(lib TesselC ${tessel_libs})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS TesselC ${tessel_libs} EXPORT TesselTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT TesselTargets NAMESPACE Tessel::
  DESTINATION ${TESSEL_INSTALL_CMAKE_DIR})

# Headers: the sources' and the generated ones (TableGen, git revision).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessel-c
                  ${PROJECT_SOURCE_DIR}/include/tessel
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/tessel
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.inc")

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/modules/TesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/Tessel/TesselConfig.cmake
  INSTALL_DESTINATION ${TESSEL_INSTALL_CMAKE_DIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/Tessel/TesselConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lib/cmake/Tessel/TesselConfig.cmake
              ${PROJECT_BINARY_DIR}/lib/cmake/Tessel/TesselConfigVersion.cmake
  DESTINATION ${TESSEL_INSTALL_CMAKE_DIR})

# The Python package, finding the prefix's libTesselC through _install.py.
file(RELATIVE_PATH tessel_library_from_package
  ${CMAKE_INSTALL_PREFIX}/${TESSEL_INSTALL_PYTHON_DIR}/tessel
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libTesselC.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tessel
  DESTINATION ${TESSEL_INSTALL_PYTHON_DIR}
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(CODE "
  file(RELATIVE_PATH library
    \"\${CMAKE_INSTALL_PREFIX}/${TESSEL_INSTALL_PYTHON_DIR}/tessel\"
    \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libTesselC.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${TESSEL_INSTALL_PYTHON_DIR}/tessel/_install.py\"
    \"# Written by cmake --install: libTesselC relative to this package.\\nLIBRARY = \\\"\${library}\\\"\\n\")")
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
  DESTINATION ${CMAKE_INSTALL_DOCDIR})

# <build>/python-package: what `pip install` takes (pyproject.toml, the
# sources and the library under its SONAME).
set(tessel_package ${PROJECT_BINARY_DIR}/python-package)
set(tessel_soname libTesselC.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
configure_file(${PROJECT_SOURCE_DIR}/python/pyproject.toml.in
               ${tessel_package}/pyproject.toml @ONLY)
file(GLOB tessel_python_sources ${PROJECT_SOURCE_DIR}/python/tessel/*.py)
add_custom_command(
  OUTPUT ${tessel_package}/tessel/${tessel_soname}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${tessel_package}/tessel
  COMMAND ${CMAKE_COMMAND} -E copy ${tessel_python_sources}
          ${tessel_package}/tessel/
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:TesselC>
          ${tessel_package}/tessel/${tessel_soname}
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/LICENSE
          ${tessel_package}/LICENSE
  DEPENDS TesselC ${tessel_python_sources} ${PROJECT_SOURCE_DIR}/LICENSE
  COMMENT "Staging the pip-installable Python package")
add_custom_target(tessel-python-package ALL
  DEPENDS ${tessel_package}/tessel/${tessel_soname})
