# compute-sanitizer memcheck and racecheck over the small GPU cases
# (test_gpu_forward with SGLA_GPU_SMALL=1: every configuration row, cu_seqlens
# tails, the sequence split, fp32); label gpu, so CI (-LE gpu) skips them.
if(SGLA_HAVE_CUDA AND TARGET test_gpu_forward)
  find_program(SGLA_COMPUTE_SANITIZER compute-sanitizer
    HINTS ${CUDAToolkit_BIN_DIR} ${CUDAToolkit_BIN_DIR}/../compute-sanitizer)
  if(SGLA_COMPUTE_SANITIZER)
    foreach(t test_gpu_forward test_gpu_backward test_gpu_pool)
      foreach(tool memcheck racecheck)
        add_test(NAME gpu_sanitize_${tool}_${t}
          COMMAND ${SGLA_COMPUTE_SANITIZER} --tool ${tool} --error-exitcode 1 $<TARGET_FILE:${t}>)
        set_tests_properties(gpu_sanitize_${tool}_${t} PROPERTIES LABELS gpu ENVIRONMENT "SGLA_GPU_SMALL=1")
      endforeach()
    endforeach()
  endif()
endif()
