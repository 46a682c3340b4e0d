cmake_minimum_required(VERSION 3.20)
# cmake -DVT=<vramtrace> -DIN=<vramtrace.1.in> -DOUT=<vramtrace.1> -DVERSION=<x.y.z> -P manpage.cmake
# Writes the man page: IN with @USAGE@ replaced by `VT --help` (roff-escaped:
# backslashes doubled, a leading '.' or '\'' and every '-' made literal) and @VERSION@.
# Fails (and writes nothing) when the command does not run or prints no usage.
execute_process(COMMAND ${VT} --help OUTPUT_VARIABLE usage RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT usage MATCHES "usage:")
  message(FATAL_ERROR "manpage.cmake: ${VT} --help failed (${rc})")
endif()
string(REPLACE "\\" "\\\\" usage "${usage}")
string(REPLACE "-" "\\-" usage "${usage}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" usage "${usage}")
string(REGEX REPLACE "\n$" "" usage "${usage}")
file(READ ${IN} page)
string(REPLACE "@USAGE@" "${usage}" page "${page}")
string(REPLACE "@VERSION@" "${VERSION}" page "${page}")
file(WRITE ${OUT}.tmp "${page}")
file(RENAME ${OUT}.tmp ${OUT})
