# Script mode: writes OUT, a C++ file defining vmm::embedded::SYMBOL as the text of IN.
file(READ ${IN} content)
file(WRITE ${OUT} "// Generated from ${IN}. Do not edit.\nnamespace vmm::embedded {\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = R\"VMMEMBED(${content})VMMEMBED\";\n}  // namespace vmm::embedded\n")
