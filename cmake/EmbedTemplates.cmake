# Embeds every templates/*.cuh into one generated C++ file as raw string literals, so an installed
# tbtune needs no source tree. The lookup function `tbtune::embedded_template(name)` is declared in
# tuner/codegen/templates.hpp.
function(tbtune_embed_templates out_var dir)
  file(GLOB cuh_files CONFIGURE_DEPENDS ${dir}/*.cuh)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded_templates.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DDIR=${dir} -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_run.cmake
    DEPENDS ${cuh_files} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_run.cmake
    COMMENT "Embedding kernel templates")
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()
