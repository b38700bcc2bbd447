# compute-sanitizer memcheck and racecheck over the small GPU case
# (test_gpu_forward with SGLA_GPU_SMALL=1); label gpu, so CI (-LE gpu) skips them.
if(SGLA_HAVE_CUDA AND TARGET test_gpu_forward)
  find_program(SGLA_COMPUTE_SANITIZER compute-sanitizer
    HINTS ${CUDAToolkit_BIN_DIR} ${CUDAToolkit_BIN_DIR}/../compute-sanitizer)
  if(SGLA_COMPUTE_SANITIZER)
    add_test(NAME gpu_sanitize_memcheck
      COMMAND ${SGLA_COMPUTE_SANITIZER} --tool memcheck --error-exitcode 1 $<TARGET_FILE:test_gpu_forward>)
    set_tests_properties(gpu_sanitize_memcheck PROPERTIES LABELS gpu ENVIRONMENT "SGLA_GPU_SMALL=1")
    # racecheck runs on v8: the default (v9) fills its stages from a producer warpgroup
    # whose cp.async completions reach the consumers through mbarriers
    # (cp.async.mbarrier.arrive.noinc), an ordering racecheck does not follow: it reports
    # every producer-copy / consumer-read pair (14 sites on 2026-11-29, docs/perf.md).  v8
    # has v9's math, shared-memory layout and S hand-over under block barriers.
    add_test(NAME gpu_sanitize_racecheck
      COMMAND ${SGLA_COMPUTE_SANITIZER} --tool racecheck --error-exitcode 1 $<TARGET_FILE:test_gpu_forward>)
    set_tests_properties(gpu_sanitize_racecheck PROPERTIES LABELS gpu ENVIRONMENT "SGLA_GPU_SMALL=1;SGLA_CUDA_VERSION=8")
  endif()
endif()
