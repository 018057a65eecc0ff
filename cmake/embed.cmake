# vmm_embed_text(TARGET SYMBOL FILE): compiles FILE's text into TARGET as
#   extern const char* const SYMBOL;   (namespace vmm::embedded)
# regenerated whenever FILE changes, so binaries never read schemas from the source tree.
function(vmm_embed_text target symbol file)
  set(out ${PROJECT_BINARY_DIR}/generated/embed_${symbol}.cc)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${file}")
  target_sources(${target} PRIVATE ${out})
endfunction()
