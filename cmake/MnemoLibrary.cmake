# add_mnemo_library(name SOURCES...
#   [DEPENDS targets...] [LINK_LIBS mnemo libraries...] [MLIR_LIBS upstream...])
#
# A project library that is never part of libMLIR.so. Upstream MLIR libraries
# go through mlir_target_link_libraries so that MLIR_LINK_MLIR_DYLIB=ON links
# the single libMLIR.so instead of mixing it with static archives.
function(add_mnemo_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_mlir_library(${name} ${ARG_UNPARSED_ARGUMENTS}
    EXCLUDE_FROM_LIBMLIR
    DEPENDS ${ARG_DEPENDS}
    LINK_LIBS PUBLIC ${ARG_LINK_LIBS})
  if(ARG_MLIR_LIBS)
    mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  endif()
endfunction()
