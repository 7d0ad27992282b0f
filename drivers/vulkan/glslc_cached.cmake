# Compiles one shader variant with glslc through a cache keyed by content, so
# that a fresh build folder (a second clone, CI's checkout) copies the SPIR-V
# another folder compiled instead of running glslc again: ccache covers only
# C and C++. Run by the build as a script (cmake -P), one call per variant:
#
#   -DGLSLC=<glslc>  -DGLSLC_ID=<hash of `glslc --version`>
#   -DCACHE_DIR=<folder; empty: no cache>  -DINCLUDE_DIR=<the -I folder>
#   -DSOURCE=<.comp>  -DOUTPUT=<.inc>  -DDEFINES=<NAME[=VALUE]|...>
#
# The key hashes glslc's version, the flags, the defines, and the contents
# (and names relative to INCLUDE_DIR) of the source and of every file it
# #includes, followed recursively; an include inside a disabled #if is
# hashed too, which only costs a miss. The depfile lists the same files, so
# the build reruns the variant when any of them changes.
cmake_minimum_required(VERSION 3.25)

# The flags every variant shares; the key hashes them (the -I folder is this
# checkout's own and stays out).
set(_shared_flags --target-env=vulkan1.2 -O -fshader-stage=comp)
set(_flags ${_shared_flags} -I ${INCLUDE_DIR})
string(REPLACE "|" ";" _defines "${DEFINES}")
foreach(_define IN LISTS _defines)
  list(APPEND _flags -D${_define})
endforeach()

# The source and its include closure, in a fixed order.
set(_files ${SOURCE})
set(_pending ${SOURCE})
while(_pending)
  list(POP_FRONT _pending _file)
  get_filename_component(_dir ${_file} DIRECTORY)
  file(STRINGS ${_file} _includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(_line IN LISTS _includes)
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" _name "${_line}")
    if(EXISTS ${_dir}/${_name})
      set(_found ${_dir}/${_name})
    elseif(EXISTS ${INCLUDE_DIR}/${_name})
      set(_found ${INCLUDE_DIR}/${_name})
    else()
      continue()  # glslc reports it
    endif()
    get_filename_component(_found ${_found} REALPATH)
    if(NOT _found IN_LIST _files)
      list(APPEND _files ${_found})
      list(APPEND _pending ${_found})
    endif()
  endforeach()
endwhile()

set(_key_text "${GLSLC_ID}\n${_shared_flags}\n${DEFINES}\n")
foreach(_file IN LISTS _files)
  file(SHA256 ${_file} _hash)
  file(RELATIVE_PATH _name ${INCLUDE_DIR} ${_file})
  string(APPEND _key_text "${_name} ${_hash}\n")
endforeach()
string(SHA256 _key "${_key_text}")

string(REPLACE " " "\\ " _escaped "${_files}")
list(JOIN _escaped " " _deps)
file(WRITE ${OUTPUT}.d "${OUTPUT}: ${_deps}\n")

if(CACHE_DIR)
  set(_cached ${CACHE_DIR}/${_key}.inc)
  if(EXISTS ${_cached})
    file(COPY_FILE ${_cached} ${OUTPUT})
    file(TOUCH_NOCREATE ${_cached})  # recently used: kept by the pruning
    return()
  endif()
endif()

execute_process(COMMAND ${GLSLC} ${_flags} -mfmt=c ${SOURCE} -o ${OUTPUT}
                RESULT_VARIABLE _status)
if(NOT _status EQUAL 0)
  file(REMOVE ${OUTPUT})
  message(FATAL_ERROR "glslc failed on ${SOURCE} (${DEFINES})")
endif()
if(CACHE_DIR)
  # Written under a unique name, then renamed: two builds filling the cache
  # at once never leave a partial entry.
  string(RANDOM LENGTH 12 _suffix)
  file(MAKE_DIRECTORY ${CACHE_DIR})
  file(COPY_FILE ${OUTPUT} ${_cached}.${_suffix})
  file(RENAME ${_cached}.${_suffix} ${_cached})
endif()
