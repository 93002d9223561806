# Project wrappers around AddMLIR: every Tessel library records itself in a global
# property so tools link exactly the project's libraries plus a short list of MLIR
# ones, never all of upstream MLIR.

function(add_tessel_library name)
  add_mlir_library(${ARGV} DISABLE_INSTALL DEPENDS tessel-headers)
  set_property(GLOBAL APPEND PROPERTY TESSEL_ALL_LIBS ${name})
endfunction()

function(add_tessel_dialect_library name)
  set_property(GLOBAL APPEND PROPERTY TESSEL_DIALECT_LIBS ${name})
  add_tessel_library(${ARGV})
endfunction()

function(add_tessel_target_library name)
  set_property(GLOBAL APPEND PROPERTY TESSEL_TARGET_LIBS ${name})
  add_tessel_library(${ARGV})
endfunction()

function(add_tessel_tool name)
  add_llvm_executable(${name} ${ARGN})
  llvm_update_compile_flags(${name})
  set_property(GLOBAL APPEND PROPERTY TESSEL_TOOLS ${name})
endfunction()

# Generates a Markdown page from TableGen into <build>/docs/<subdir><out>.md and
# hangs it on the tessel-doc target. The committed copy under docs/ is checked
# against it by test/docs-up-to-date.test.
function(add_tessel_doc td_filename output_file output_directory command)
  set(LLVM_TARGET_DEFINITIONS ${td_filename}.td)
  mlir_tablegen(${output_file}.md ${command} ${ARGN})
  set(gen_doc ${CMAKE_BINARY_DIR}/docs/${output_directory}${output_file}.md)
  add_custom_command(OUTPUT ${gen_doc}
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_BINARY_DIR}/${output_file}.md ${gen_doc}
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${output_file}.md)
  add_custom_target(${output_file}DocGen DEPENDS ${gen_doc})
  add_dependencies(tessel-doc ${output_file}DocGen)
endfunction()
