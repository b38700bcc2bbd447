# compute-sanitizer memcheck and racecheck over the small GPU case
# (test_gpu_forward with SGLA_GPU_SMALL=1); label gpu, so CI (-LE gpu) skips them.
if(SGLA_HAVE_CUDA AND TARGET test_gpu_forward)
  find_program(SGLA_COMPUTE_SANITIZER compute-sanitizer
    HINTS ${CUDAToolkit_BIN_DIR} ${CUDAToolkit_BIN_DIR}/../compute-sanitizer)
  if(SGLA_COMPUTE_SANITIZER)
    add_test(NAME gpu_sanitize_memcheck
      COMMAND ${SGLA_COMPUTE_SANITIZER} --tool memcheck --error-exitcode 1 $<TARGET_FILE:test_gpu_forward>)
    set_tests_properties(gpu_sanitize_memcheck PROPERTIES LABELS gpu ENVIRONMENT "SGLA_GPU_SMALL=1")
    # racecheck on the default (v13; its small set includes cu_seqlens) and on v8 (block barriers
    # instead of mbarriers, the same math and shared-memory layout as v9)
    add_test(NAME gpu_sanitize_racecheck
      COMMAND ${SGLA_COMPUTE_SANITIZER} --tool racecheck --error-exitcode 1 $<TARGET_FILE:test_gpu_forward>)
    set_tests_properties(gpu_sanitize_racecheck PROPERTIES LABELS gpu ENVIRONMENT "SGLA_GPU_SMALL=1")
    add_test(NAME gpu_sanitize_racecheck_v8
      COMMAND ${SGLA_COMPUTE_SANITIZER} --tool racecheck --error-exitcode 1 $<TARGET_FILE:test_gpu_forward>)
    set_tests_properties(gpu_sanitize_racecheck_v8 PROPERTIES LABELS gpu ENVIRONMENT "SGLA_GPU_SMALL=1;SGLA_CUDA_VERSION=8")
  endif()
endif()
