# cmake -DSCHEMA=<schema.json> -DEXTRA=<tokens.dict> -DOUT=<file.dict> -P make_dict.cmake
# Writes a libFuzzer dictionary: every quoted identifier of the JSON Schema (its property names,
# op names and enum values, and JSON-Schema keywords, which cost nothing), one token per line,
# then the hand-written tokens of EXTRA (syntax the schema does not spell).
file(READ ${SCHEMA} text)
string(REGEX MATCHALL "\"[a-z_][a-z0-9_]*\"" tokens "${text}")
list(REMOVE_DUPLICATES tokens)
list(SORT tokens)
set(out "# generated from ${SCHEMA} and ${EXTRA} by fuzz/make_dict.cmake\n")
foreach(t IN LISTS tokens)
  string(APPEND out "${t}\n")
endforeach()
file(READ ${EXTRA} extra)
file(WRITE ${OUT} "${out}${extra}")
