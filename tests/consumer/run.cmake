# The consumer-project test: installs opgen's lookup library from BUILD_DIR into a fresh prefix,
# configures and builds tests/consumer against it with find_package(opgen), runs it and checks
# its answers. Run as: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P run.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run.cmake needs -D${var}=...")
    endif()
endforeach()

function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
    endif()
    set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component opgen_cache)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer ${WORK_DIR}/cache.db)
set(expected "c++: exact K=64,M=64,N=64\nc: exact K=64,M=64,N=64 0.250\nc: none  0.000\n")
if(NOT run_output STREQUAL expected)
    message(FATAL_ERROR "consumer printed:\n${run_output}\nexpected:\n${expected}")
endif()
message(STATUS "consumer built against ${WORK_DIR}/prefix and answered as expected")
