# The consumer-project test: installs opgen's lookup library from BUILD_DIR into a fresh prefix,
# configures and builds tests/consumer against it with find_package(opgen), runs it and checks
# its answers; then takes the cache in which the real opgen command tuned matmul, conv2d_nchw and
# softmax (storing their code) and built their shape-generic kernels (the code tests' shared
# fixture, made once per test run by FIXTURE_EXE), runs exact, derived and never-tuned shapes of
# each in consumer_kernels against naive loops, and checks with ldd that the program loads no
# Halide and no LLVM. Run as:
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DOPGEN_EXE=... -DFIXTURE_EXE=... -P run.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR OPGEN_EXE FIXTURE_EXE)
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

# Kernels from the cache: tuned by the real command (each winner's code is stored), with their
# shape-generic kernels, in the shared fixture; run by the C program.
run(${FIXTURE_EXE} code-generic)
string(STRIP "${run_output}" fixture)
set(kernels ${WORK_DIR}/kernels.db)
file(COPY_FILE ${fixture}/g.db ${kernels})
run(${OPGEN_EXE} db stats --db ${kernels} --json)
string(JSON target GET "${run_output}" by_target_and_op 0 target)
string(JSON with_code GET "${run_output}" kernels_with_code)
if(NOT with_code EQUAL 3)
    message(FATAL_ERROR "expected 3 kernels with code, the cache has ${with_code}")
endif()
string(JSON generic GET "${run_output}" generic_code)
if(NOT generic EQUAL 3)
    message(FATAL_ERROR "expected 3 generic kernels, the cache has ${generic}")
endif()
run(${WORK_DIR}/build/consumer_kernels ${kernels} ${target})
message(STATUS "consumer_kernels:\n${run_output}")
foreach(kind exact derived never-tuned)
    foreach(op matmul conv2d_nchw softmax)
        if(NOT run_output MATCHES "${kind} ${op} [^\n]*: call 0,")
            message(FATAL_ERROR "consumer_kernels ran no ${kind} ${op}:\n${run_output}")
        endif()
    endforeach()
endforeach()
# Only trusted code runs: the fixture's code is signed with the tests' key (OPGEN_SIGNING_KEY).
# A program trusting that key runs it; trusting another key, or after each of an attacker's moves
# on the file, it refuses the code, counts the refusal and maps nothing.
if(NOT DEFINED ENV{OPGEN_SIGNING_KEY})
    message(FATAL_ERROR "OPGEN_SIGNING_KEY is not set: run this test through ctest")
endif()
run(${OPGEN_EXE} key public $ENV{OPGEN_SIGNING_KEY})
string(STRIP "${run_output}" test_key)
run(${WORK_DIR}/build/consumer_trust ${kernels} ${target} ${test_key} runs)
file(REMOVE ${WORK_DIR}/other.key ${WORK_DIR}/other.key.pub)
run(${OPGEN_EXE} key new ${WORK_DIR}/other.key)
run(${OPGEN_EXE} key public ${WORK_DIR}/other.key)
string(STRIP "${run_output}" other_key)
run(${WORK_DIR}/build/consumer_trust ${kernels} ${target} ${other_key} "is not a trusted key")
foreach(attack swap-bytes:does.not.verify copy-signature:does.not.verify untrusted-key:is.not.a.trusted.key
               truncate-signature:does.not.verify unsigned:it.is.unsigned)
    string(REPLACE ":" ";" parts ${attack})
    list(GET parts 0 move)
    list(GET parts 1 expect)
    string(REPLACE "." " " expect "${expect}")
    file(COPY_FILE ${kernels} ${WORK_DIR}/attacked.db)
    run(${FIXTURE_EXE} attack ${move} ${WORK_DIR}/attacked.db)
    run(${WORK_DIR}/build/consumer_trust ${WORK_DIR}/attacked.db ${target} ${test_key} "${expect}")
    message(STATUS "${move}: ${run_output}")
endforeach()
# The README's demo: the same program refuses the file once any row is re-signed with another key.
file(COPY_FILE ${kernels} ${WORK_DIR}/resigned.db)
run(${OPGEN_EXE} db sign --db ${WORK_DIR}/resigned.db --signing-key ${WORK_DIR}/other.key)
run(${WORK_DIR}/build/consumer_trust ${WORK_DIR}/resigned.db ${target} ${test_key} "is not a trusted key")
# A private key others can read signs nothing.
file(COPY_FILE ${WORK_DIR}/other.key ${WORK_DIR}/loose.key)
file(CHMOD ${WORK_DIR}/loose.key PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
execute_process(COMMAND ${OPGEN_EXE} db sign --db ${WORK_DIR}/resigned.db --signing-key ${WORK_DIR}/loose.key
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "error: signing key '[^']*loose.key' is open to others \\(mode 0644\\)")
    message(FATAL_ERROR "a key file of mode 0644 signed the cache (${rc}): ${err}")
endif()

run(ldd ${WORK_DIR}/build/consumer_kernels)
message(STATUS "ldd consumer_kernels:\n${run_output}")
if(run_output MATCHES "[Hh]alide|LLVM|llvm")
    message(FATAL_ERROR "consumer_kernels links Halide or LLVM:\n${run_output}")
endif()
if(NOT run_output MATCHES "libopgen_cache")
    message(FATAL_ERROR "consumer_kernels does not link opgen_cache:\n${run_output}")
endif()

# The manifest's winners as one static library (`opgen library`), installed into the prefix that
# holds opgen's package and linked by another project through find_package(opgen_library) beside
# find_package(opgen); a shape the manifest lists but nobody tuned is reported.
file(WRITE ${WORK_DIR}/library.json [=[
{"entries": [{"op": "matmul", "shapes": ["M=24,N=56,K=40", "M=25,N=56,K=40"]},
             {"op": "conv2d_nchw", "shapes": ["N=1,C=8,H=10,W=10,F=16"]},
             {"op": "softmax", "shapes": ["M=16,N=100"]}]}
]=])
run(${OPGEN_EXE} library ${WORK_DIR}/library.json -o ${WORK_DIR}/prefix --db ${kernels} --threads 1)
if(NOT run_output MATCHES "3 kernel\\(s\\), 1 task\\(s\\) without a tuned kernel, 3 generic kernel\\(s\\)")
    message(FATAL_ERROR "opgen library printed:\n${run_output}")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer/library -B ${WORK_DIR}/library-build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/library-build)
run(${WORK_DIR}/library-build/library_consumer)
message(STATUS "library_consumer:\n${run_output}")