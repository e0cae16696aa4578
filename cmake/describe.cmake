# The package, hook and action descriptions, generated from the rule list (`gpuopt-lint
# --list-rules`), so that none of them names fewer rules than the binary has.
#   cmake -DBIN=gpuopt-lint -DMODE=generate -DOUT=DIR -P describe.cmake
#       DIR/description-debian.txt (the .deb's extended description, CPack formats it)
#   cmake -DBIN=gpuopt-lint -DMODE=check|update -DSRC=REPO -P describe.cmake
#       compares (check) or rewrites (update) the `description:` of REPO/.pre-commit-hooks.yaml and
#       REPO/action.yml, which are committed (pre-commit and GitHub read them from the repository).
execute_process(COMMAND ${BIN} --list-rules OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "describe: ${BIN} --list-rules failed (${rc})")
endif()
string(REGEX MATCHALL "(^|\n)[a-z][a-z0-9-]*" ids "${listing}")
list(TRANSFORM ids STRIP)
list(LENGTH ids n)
if(n LESS 1)
  message(FATAL_ERROR "describe: no rule in the output of ${BIN} --list-rules")
endif()
list(JOIN ids ", " idlist)

set(hook "CUDA performance and correctness linter with ${n} rules (${idlist})")
# GitHub's Marketplace takes at most 125 characters: the count, not the list.
set(action "Lint CUDA code with gpuopt-lint (${n} rules), upload SARIF to code scanning, fail on findings")

if(MODE STREQUAL "generate")
  # Debian's extended description: lines of at most 79 characters.
  set(words "Its ${n} rules: ${idlist}.")
  string(REPLACE " " ";" words "${words}")
  set(para "")
  set(line "")
  foreach(w IN LISTS words)
    string(LENGTH "${line} ${w}" len)
    if(line STREQUAL "")
      set(line "${w}")
    elseif(len GREATER 78)
      string(APPEND para "${line}\n")
      set(line "${w}")
    else()
      string(APPEND line " ${w}")
    endif()
  endforeach()
  string(APPEND para "${line}")
  file(WRITE ${OUT}/description-debian.txt
"gpuopt-lint reads CUDA source with Clang and reports the performance and
correctness mistakes every CUDA course teaches, each with how bad it is and
how to fix it. It runs on the command line, as a pre-commit or git hook, in CI
(SARIF for code scanning) and in editors (a language server).

${para}
")
  return()
endif()

set(bad "")
foreach(pair "action.yml|\ndescription: [^\n]*|\ndescription: ${action}"
             ".pre-commit-hooks.yaml|\n  description: [^\n]*|\n  description: ${hook}")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 file)
  list(GET pair 1 pattern)
  list(GET pair 2 wanted)
  file(READ ${SRC}/${file} text)
  string(REGEX MATCH "${pattern}" have "${text}")
  if(have STREQUAL "")
    message(FATAL_ERROR "describe: ${file} has no description line")
  endif()
  if(NOT have STREQUAL wanted)
    if(MODE STREQUAL "update")
      string(REPLACE "${have}" "${wanted}" text "${text}")
      file(WRITE ${SRC}/${file} "${text}")
      message(STATUS "describe: updated ${file}")
    else()
      string(STRIP "${have}" have)
      string(STRIP "${wanted}" wanted)
      string(APPEND bad "${file}:\n  has    '${have}'\n  wanted '${wanted}'\n")
    endif()
  endif()
endforeach()
if(NOT bad STREQUAL "")
  message(FATAL_ERROR "describe: descriptions out of date with the rule list (run `cmake -DBIN=build/bin/gpuopt-lint -DMODE=update -DSRC=. -P cmake/describe.cmake`):\n${bad}")
endif()
