# cmake/version.cmake - writes OUT (a C header defining MIGRATE_VERSION) at
# every build: the project version, and after it `git describe` of SRC when
# the sources are a git clone (e.g. "0.9.0 (v0.9.0-12-gabc1234-dirty)").
# Run with cmake -DSRC=... -DOUT=... -DVERSION=... -P version.cmake; the
# file is rewritten only when its text changes, so nothing rebuilds for
# nothing.
set(text "${VERSION}")
find_program(GIT git)
if(GIT AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT}" -C "${SRC}" describe --always --tags --dirty
                  OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND describe)
    set(text "${VERSION} (${describe})")
  endif()
endif()
set(header "#define MIGRATE_VERSION \"${text}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL header)
  file(WRITE "${OUT}" "${header}")
endif()
