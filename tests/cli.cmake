# CLI smoke tests, included by tests/CMakeLists.txt.
#
# The same file is also the checker those tests run (`cmake -P cli.cmake`):
# it runs one command and checks its exit status, a regular expression on
# its output, and files it must create — CTest's own properties cannot check
# an exit status and a message together.
#
#   -DCMD=a|b|c        the command, '|'-separated (';' would split in add_test)
#   -DEXPECT_RC=n      required exit status (default 0)
#   -DEXPECT_RE=re     regular expression the stdout+stderr must match
#   -DEXPECT_FILES=f|g files that must exist afterwards (removed first)
#   -DEXPECT_ABSENT=f|g files that must not exist afterwards (removed first)

if(CMAKE_SCRIPT_MODE_FILE)
  string(REPLACE "|" ";" cmd "${CMD}")
  if(NOT DEFINED EXPECT_RC)
    set(EXPECT_RC 0)
  endif()
  # both lists removed first: a file left from an earlier run proves nothing
  string(REPLACE "|" ";" files "${EXPECT_FILES}")
  string(REPLACE "|" ";" absent "${EXPECT_ABSENT}")
  foreach(f ${files} ${absent})
    file(REMOVE "${f}")
  endforeach()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
    message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}")
  endif()
  if(DEFINED EXPECT_RE AND NOT "${out}${err}" MATCHES "${EXPECT_RE}")
    message(FATAL_ERROR "output does not match '${EXPECT_RE}'")
  endif()
  if(DEFINED EXPECT_FILES)
    foreach(f ${files})
      if(NOT EXISTS "${f}")
        message(FATAL_ERROR "expected file ${f} was not written")
      endif()
    endforeach()
  endif()
  if(DEFINED EXPECT_ABSENT)
    foreach(f ${absent})
      if(EXISTS "${f}")
        message(FATAL_ERROR "${f} was written")
      endif()
    endforeach()
  endif()
  return()
endif()

set(_sgla $<TARGET_FILE:sgla_cli>)
set(_data ${CMAKE_CURRENT_SOURCE_DIR}/data)
set(_out ${CMAKE_CURRENT_BINARY_DIR}/cli_out)
file(MAKE_DIRECTORY ${_out})

# sgla_cli_test(NAME cmd-args-with-| [RC n] [RE regex] [FILES f|g] [ABSENT f|g])
function(sgla_cli_test name args)
  cmake_parse_arguments(A "" "RC;RE;FILES;ABSENT" "" ${ARGN})
  set(defs "-DCMD=${_sgla}|${args}")
  if(DEFINED A_RC)
    list(APPEND defs "-DEXPECT_RC=${A_RC}")
  endif()
  if(DEFINED A_RE)
    list(APPEND defs "-DEXPECT_RE=${A_RE}")
  endif()
  if(DEFINED A_FILES)
    list(APPEND defs "-DEXPECT_FILES=${A_FILES}")
  endif()
  if(DEFINED A_ABSENT)
    list(APPEND defs "-DEXPECT_ABSENT=${A_ABSENT}")
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(${name} PROPERTIES LABELS "cpu;cli")
endfunction()

# test_cli_run (a test_*.c, so already a target) drives the CLI and reads its
# .npy output: it needs the reader, the data and the executable's path.
if(TARGET test_cli_run)
  target_sources(test_cli_run PRIVATE ${PROJECT_SOURCE_DIR}/tools/npy.c)
  target_include_directories(test_cli_run PRIVATE ${PROJECT_SOURCE_DIR}/tools)
  target_compile_definitions(test_cli_run PRIVATE SGLA_TEST_DATA_DIR="${_data}" SGLA_CLI="${_sgla}")
  add_dependencies(test_cli_run sgla_cli)
  set_tests_properties(test_cli_run PROPERTIES LABELS "cpu;cli")
endif()

# ---- front end and --help everywhere ----------------------------------------
sgla_cli_test(cli_help "--help" RE "usage: sgla <command>")
sgla_cli_test(cli_version "version" RE "sgla [0-9]+\\.[0-9]+\\.[0-9]+")
sgla_cli_test(cli_no_command "" RC 2 RE "usage")
sgla_cli_test(cli_unknown_command "frobnicate" RC 2 RE "unknown command 'frobnicate'")
# the conventions: -V, version --help, --name=value, -- ends the options (exit 2 for usage, 1 for runtime)
sgla_cli_test(cli_version_short "-V" RE "^sgla [0-9]+\\.[0-9]+")
sgla_cli_test(cli_version_help "version|--help" RE "usage: sgla version")
sgla_cli_test(cli_version_extra "version|--bogus" RC 2 RE "takes no options")
sgla_cli_test(cli_opt_equals "tables|--seed=3" RE "seed 3\\)")
sgla_cli_test(cli_double_dash_end "tables|--" RE "Factorised weight")
sgla_cli_test(cli_double_dash_operand "tables|--|extra" RC 2 RE "takes no operands")
foreach(c verify tables run grad plot bench)
  sgla_cli_test(cli_help_${c} "${c}|--help" RE "usage: sgla ${c}")
endforeach()

# ---- sgla run -------------------------------------------------------------
set(_qkv "--q|${_data}/run_q.npy|--k|${_data}/run_k.npy|--v|${_data}/run_v.npy")
foreach(b ref-a ref-b ref-c ref-d cpu auto)
  sgla_cli_test(cli_run_${b} "run|${_qkv}|--g|${_data}/run_g.npy|--h0|${_data}/run_h0.npy|--chunk|3|--scale|0.5|--backend|${b}|--o|${_out}/o_${b}.npy|--ht|${_out}/ht_${b}.npy"
    RE "s wall" FILES "${_out}/o_${b}.npy|${_out}/ht_${b}.npy")
endforeach()
# an output name near NAME_MAX (255): the temporary name beside it is a short one (".tmp-XXXXXX" made it too long)
string(REPEAT "o" 250 _long)
sgla_cli_test(cli_run_long_name "run|${_qkv}|--backend|ref-a|--o|${_out}/${_long}.npy" RE "s wall" FILES "${_out}/${_long}.npy")
sgla_cli_test(cli_run_f16_alpha "run|--q|${_data}/run_q16.npy|--k|${_data}/run_k16.npy|--v|${_data}/run_v16.npy|--alpha|0.9|--backend|ref-b|--o|${_out}/o16.npy"
  RE "f16" FILES "${_out}/o16.npy")
sgla_cli_test(cli_run_varlen "run|--q|${_data}/var_q.npy|--k|${_data}/var_k.npy|--v|${_data}/var_v.npy|--cu-seqlens|${_data}/var_cu.npy|--h0|${_data}/var_h0.npy|--g-gamma|${_data}/run_gg.npy|--chunk|2|--backend|ref-c|--o|${_out}/o_var.npy|--ht|${_out}/ht_var.npy"
  RE "varlen" FILES "${_out}/o_var.npy|${_out}/ht_var.npy")
# errors: exit 2 and a message naming the problem
sgla_cli_test(cli_run_missing_file "run|--q|${_out}/no_such_q.npy|--k|${_data}/run_k.npy|--v|${_data}/run_v.npy|--o|${_out}/x.npy"
  RC 1 RE "--q: .*no_such_q.npy: cannot open")
sgla_cli_test(cli_run_no_output "run|${_qkv}" RC 2 RE "--o is required")
sgla_cli_test(cli_run_unknown_flag "run|${_qkv}|--o|${_out}/x.npy|--bogus" RC 2 RE "unknown option '--bogus'")
sgla_cli_test(cli_run_fortran "run|--q|${_data}/run_q.npy|--k|${_data}/np_fortran.npy|--v|${_data}/run_v.npy|--o|${_out}/x.npy"
  RC 1 RE "np_fortran.npy.*Fortran")
sgla_cli_test(cli_run_shape_mismatch "run|--q|${_data}/run_q.npy|--k|${_data}/var_k.npy|--v|${_data}/run_v.npy|--o|${_out}/x.npy"
  RC 1 RE "--k: .*var_k.npy: shape \\(1, 9, 2, 3\\), expected \\(2, 7, 2, 3\\)")
sgla_cli_test(cli_run_dtype_mismatch "run|--q|${_data}/run_q.npy|--k|${_data}/run_k16.npy|--v|${_data}/run_v.npy|--o|${_out}/x.npy"
  RC 1 RE "share a dtype")
sgla_cli_test(cli_run_two_gates "run|${_qkv}|--alpha|0.9|--g-gamma|${_data}/run_gg.npy|--o|${_out}/x.npy"
  RC 2 RE "at most one of")
sgla_cli_test(cli_run_bad_alpha "run|${_qkv}|--alpha|1.5|--o|${_out}/x.npy" RC 2 RE "--alpha: 1.5 is not in")
# a double beyond fp32 is named as such; NaN and inf are not finite
sgla_cli_test(cli_run_scale_fp32_range "run|${_qkv}|--scale|1e308|--o|${_out}/x.npy" RC 2
  RE "--scale: 1e308 is beyond the fp32 range")
sgla_cli_test(cli_run_scale_nan "run|${_qkv}|--scale|nan|--o|${_out}/x.npy" RC 2 RE "--scale: nan is not a finite float")
# an option that takes one value, given twice, is refused rather than the last one winning
sgla_cli_test(cli_run_scale_twice "run|${_qkv}|--scale|0.5|--scale|0.25|--o|${_out}/x.npy" RC 2 RE "sgla run: --scale given twice")
sgla_cli_test(cli_run_chunk_twice "run|${_qkv}|--chunk|4|--chunk=8|--o|${_out}/x.npy" RC 2 RE "--chunk given twice")
sgla_cli_test(cli_run_backend_twice "run|${_qkv}|--backend|cpu|--backend|ref-a|--o|${_out}/x.npy" RC 2
  RE "--backend given twice")
sgla_cli_test(cli_run_alpha_twice "run|${_qkv}|--alpha|0.9|--alpha|0.9|--o|${_out}/x.npy" RC 2 RE "--alpha given twice")
sgla_cli_test(cli_run_q_twice "run|${_qkv}|--q|${_data}/run_q.npy|--o|${_out}/x.npy" RC 2 RE "--q given twice")
sgla_cli_test(cli_grad_threads_twice "grad|${_qkv}|--do|${_data}/run_v.npy|--dq|${_out}/a.npy|--dk|${_out}/b.npy|--dv|${_out}/c.npy|--threads|1|--threads|2"
  RC 2 RE "sgla grad: --threads given twice")
# --tf32 names a CUDA mode of fp32 inputs, as in sgla run: other backends ignore it
sgla_cli_test(cli_grad_tf32 "grad|${_qkv}|--do|${_data}/run_v.npy|--dq|${_out}/a.npy|--dk|${_out}/b.npy|--dv|${_out}/c.npy|--tf32|--backend|cpu"
  FILES "${_out}/a.npy|${_out}/b.npy|${_out}/c.npy")
sgla_cli_test(cli_grad_do_twice "grad|${_qkv}|--do|${_data}/run_v.npy|--do|${_data}/run_v.npy|--dq|${_out}/a.npy|--dk|${_out}/b.npy|--dv|${_out}/c.npy"
  RC 2 RE "--do given twice")
sgla_cli_test(cli_bench_chunk_twice "bench|--chunk|8|--chunk|16" RC 2 RE "sgla bench: --chunk given twice")
sgla_cli_test(cli_bench_varlen_twice "bench|--varlen|2|--varlen|3" RC 2 RE "--varlen given twice")
sgla_cli_test(cli_bench_backend_twice "bench|--backend|cpu|--backend|cpu" RC 2 RE "--backend given twice")
sgla_cli_test(cli_verify_level_twice "verify|--level|1|--level|2" RC 2 RE "sgla verify: --level given twice")
sgla_cli_test(cli_plot_trials_twice "plot|--out|${_out}/plots_twice|--trials|1|--trials|2" RC 2 RE "sgla plot: --trials given twice")
sgla_cli_test(cli_tables_seed_twice "tables|--seed|1|--seed=2" RC 2 RE "sgla tables: --seed given twice")
# a number must be the whole argument: strtol and strtod would skip a leading space
sgla_cli_test(cli_run_chunk_space "run|${_qkv}|--chunk| 64|--o|${_out}/x.npy" RC 2 RE "--chunk: ' 64' has white space")
sgla_cli_test(cli_run_scale_space "run|${_qkv}|--scale|0.5 |--o|${_out}/x.npy" RC 2 RE "--scale: '0.5 ' has white space")
sgla_cli_test(cli_tables_seed_space "tables|--seed| -1" RC 2 RE "--seed: ' -1' has white space")
sgla_cli_test(cli_bench_shape_space "bench|--shape|1, 64,1,16,16" RC 2 RE "--shape: '1, 64,1,16,16' has white space")
sgla_cli_test(cli_bench_varlen_space "bench|--shape|1,300,2,16,16|--varlen|100, 200" RC 2 RE "--varlen: ' 200' has white space")
sgla_cli_test(cli_run_bad_chunk "run|${_qkv}|--chunk|0|--backend|ref-a|--o|${_out}/x.npy"
  RC 1 RE "unsupported chunk size")
sgla_cli_test(cli_run_bad_backend "run|${_qkv}|--backend|gpu|--o|${_out}/x.npy" RC 2 RE "--backend: 'gpu'")
sgla_cli_test(cli_run_cu_batch "run|${_qkv}|--cu-seqlens|${_data}/var_cu.npy|--o|${_out}/x.npy" RC 1 RE "needs B = 1")
sgla_cli_test(cli_run_same_output "run|${_qkv}|--o|${_out}/same.npy|--ht|${_out}/same.npy" RC 2 RE "name the same file")
sgla_cli_test(cli_grad_ref_c "grad|${_qkv}|--do|${_data}/run_v.npy|--dq|${_out}/a.npy|--dk|${_out}/b.npy|--dv|${_out}/c.npy|--backend|ref-c"
  RC 2 RE "--backend ref-c: it has no backward")
# do's dtype must be q's, and the message names both
sgla_cli_test(cli_grad_do_dtype "grad|${_qkv}|--do|${_data}/run_v16.npy|--dq|${_out}/a.npy|--dk|${_out}/b.npy|--dv|${_out}/c.npy"
  RC 1 RE "--do: .*run_v16.npy: dtype <f2, expected q's <f4")
# an output that cannot be written (a directory) leaves no other output behind
file(MAKE_DIRECTORY ${_out}/a_dir)
sgla_cli_test(cli_run_output_dir "run|${_qkv}|--g|${_data}/run_g.npy|--o|${_out}/o_dir_case.npy|--ht|${_out}/a_dir"
  RC 1 RE "a_dir: is a directory" ABSENT "${_out}/o_dir_case.npy")
sgla_cli_test(cli_run_gate_shape "run|${_qkv}|--g|${_data}/run_h0.npy|--o|${_out}/x.npy" RC 1 RE "--g: .*expected 3")
if(NOT SGLA_HAVE_CUDA)
  sgla_cli_test(cli_run_cuda_unavailable "run|${_qkv}|--backend|cuda|--o|${_out}/x.npy" RC 1 RE "not available")
endif()

# ---- sgla plot --------------------------------------------------------------
set(_plots ${CMAKE_CURRENT_BINARY_DIR}/plots)
sgla_cli_test(cli_plot "plot|--out|${_plots}|--trials|3"
  FILES "${_plots}/decay.svg|${_plots}/error_vs_alpha.svg|${_plots}/bounds.svg")
sgla_cli_test(cli_plot_bad_alpha "plot|--out|${_plots}|--alpha|0" RC 2 RE "--alpha: 0 is not in")
sgla_cli_test(cli_plot_no_out "plot" RC 2 RE "--out DIR is required")

# ---- the other sub-commands -------------------------------------------------
sgla_cli_test(cli_tables "tables")
# the article's figures as the tool prints them (tests/test_tables.c checks the library's side and
# the article's digits against libm; these check what users read): the factorised weight's
# overflow at 0.8 and its fp16 bound, the ratio form's weights and classes, the memory length
sgla_cli_test(cli_tables_overflow "tables" RE "0\\.80 +1\\.0097e\\+03 +1\\.2745e\\+06 +2\\.0304e\\+12 +\\| +49 +5\\.6052e\\+04 +\\| +397 ")
sgla_cli_test(cli_tables_underflow "tables" RE "0\\.90 +1\\.3100e-03 +normal +normal +\\| 1\\.5445e-06 +subnormal +normal")
sgla_cli_test(cli_tables_fp32_subnormal "tables" RE "0\\.50 +1\\.0842e-19 +zero +normal +\\| 5\\.8775e-39 +zero +subnormal")
sgla_cli_test(cli_tables_memory "tables" RE "0\\.999 +9\\.3797e-01 +6904\\.301 +6904")
sgla_cli_test(cli_verify "verify")
if(NOT SGLA_HAVE_CUDA)
  # asked for the GPU levels alone and none ran: not a pass
  sgla_cli_test(cli_verify_level4_skipped "verify|--level|4" RC 3 RE "verify: SKIPPED")
endif()
sgla_cli_test(cli_bench_csv "bench|--shape|1,64,1,16,16|--shape|2,1,1,16,16|--iters|2|--no-peak|--format|csv"
  RE "^backend,B,T,H,K,V,nseq,dtype,gate,pass,ms,[^\n]*\ncpu,1,64,1,16,16,,f32,g,fwd,[0-9]")
sgla_cli_test(cli_bench_varlen "bench|--shape|1,300,2,16,16|--varlen|100,150,50|--iters|2|--no-peak|--backward|--format|csv"
  RE "\ncpu,1,300,2,16,16,3,f32,g,fwd,[0-9][^\n]*\ncpu,1,300,2,16,16,3,f32,g,bwd,[0-9]")
# refused before the first line (the header and earlier shapes' rows had been printed before the error)
sgla_cli_test(cli_bench_varlen_sum "bench|--shape|1,300,2,16,16|--varlen|100,150|--iters|2|--no-peak" RC 2
  RE "^sgla bench: --varlen lengths sum to 250, the shape's T is 300\n$")
sgla_cli_test(cli_bench_varlen_second_shape "bench|--shape|1,300,2,16,16|--shape|1,200,2,16,16|--varlen|100,150,50|--iters|1|--no-peak"
  RC 2 RE "^sgla bench: --varlen lengths sum past the shape's T = 200 \\(at length 2, 150\\)\n$")
sgla_cli_test(cli_bench_varlen_no_shape "bench|--varlen|3|--iters|1|--no-peak" RC 2 RE "^sgla bench: --varlen needs --shape")
# --check of a packed batch checks a packed case (no h0 or ht, as the timed call), forward and backward;
# the dense check keeps its ht
sgla_cli_test(cli_bench_varlen_check "bench|--shape|1,300,2,16,16|--varlen|100,150,50|--iters|1|--no-peak|--check|--backward"
  RE "check ok +cpu f32 gate=g/mild B=1 T=256 H=2 K=16 V=16 h0=0 ht=0 nseq=3: o rel [^\n]*\\)\n[^\n]*\n  check ok +backward cpu f32 gate=g/mild B=1 T=128 H=2 K=16 V=16 h0=0 ht=0 nseq=3: dq ")
sgla_cli_test(cli_bench_check_dense "bench|--shape|1,300,2,16,16|--iters|1|--no-peak|--check"
  RE "check ok +cpu f32 gate=g/mild B=1 T=256 H=2 K=16 V=16 h0=0 ht=1 nseq=0: o rel [^\n]* ht rel ")
sgla_cli_test(cli_bench_json "bench|--shape|1,64,1,16,16|--iters|2|--no-peak|--backward|--format=json"
  RE "^\\[\n  \\{\"backend\": \"cpu\", \"B\": 1, [^\n]*\"pass\": \"fwd\"[^\n]*\\},\n  \\{[^\n]*\"pass\": \"bwd\"")
sgla_cli_test(cli_bench_pool "bench|--shape|8,1,2,16,16|--pool|--iters|3|--no-peak|--format|csv"
  RE "decode-cold,[0-9][^\n]*\ncpu,8,1,2,16,16,,f32,g,decode-pool,[0-9]")
# lengths near 2^63 whose wrapped sum is T: refused before any call (they gave offsets past T, read unchecked)
sgla_cli_test(cli_bench_varlen_wrap "bench|--shape|1,64,2,16|--varlen|9223372036854775807,9223372036854775807,66|--iters|1|--no-peak"
  RC 2 RE "--varlen lengths sum past the shape's T = 64")
sgla_cli_test(cli_bench_shape_trailing_comma "bench|--shape|1,64,2,16,|--iters|1|--no-peak" RC 2 RE "'1,64,2,16,' is not B,T,H,K,V")
sgla_cli_test(cli_bench_varlen_pool "bench|--shape|1,300,2,16,16|--varlen|100x2,1x100|--pool|--iters|2|--no-peak|--format|csv"
  RE "\ncpu,1,300,2,16,16,102,f32,g,fwd,[0-9][^\n]*\ncpu,1,300,2,16,16,102,f32,g,pool,[0-9]")
sgla_cli_test(cli_bench_varlen_repeat_bad "bench|--shape|1,300,2,16,16|--varlen|100x" RC 2 RE "is not an integer")
# --check of a pool step: the step on fresh inputs through a pool against fp64 (the batch's first 8
# sequences cut to 32 tokens: 32 + 32 + six decodes), and a decode step's pool pass
sgla_cli_test(cli_bench_varlen_pool_check "bench|--shape|1,300,2,16,16|--varlen|100x2,1x100|--pool|--iters|1|--no-peak|--check"
  RE "check ok +pool cpu f32 gate=g/mild B=1 T=70 H=2 K=16 V=16 h0=1 ht=1 nseq=8 \\(fixed cuts\\): o rel [^\n]* ht rel [^\n]*\n1,300,2,16,16 +f32 +g .*pool step: 102 sequences")
# a batch that starts with 8 decodes: its prefill (292 tokens, cut to 32) takes the eighth place
sgla_cli_test(cli_bench_varlen_pool_check_longest "bench|--shape|1,300,2,16,16|--varlen|1x8,292|--pool|--iters|1|--no-peak|--check"
  RE "check ok +pool cpu f32 gate=g/mild B=1 T=39 H=2 K=16 V=16 h0=1 ht=1 nseq=8 \\(fixed cuts\\): o rel ")
sgla_cli_test(cli_bench_pool_check "bench|--shape|8,1,2,16,16|--pool|--iters|2|--no-peak|--check"
  RE "check ok +pool cpu f32 gate=g/mild B=8 T=1 H=2 K=16 V=16 h0=1 ht=1 nseq=0: o rel ")
# an empty field is a slip, not a separator to skip (the sum alone did not catch "150,,150")
sgla_cli_test(cli_bench_varlen_empty "bench|--shape|1,300,2,16,16|--varlen|150,,150" RC 2 RE "--varlen: '150,,150' has an empty field")
sgla_cli_test(cli_bench_varlen_trailing "bench|--shape|1,300,2,16,16|--varlen|300," RC 2 RE "--varlen: '300,' has an empty field")
sgla_cli_test(cli_bench_format_bad "bench|--format|xml" RC 2 RE "not one of table, csv, json")
sgla_cli_test(cli_bench_shape_refused "bench|--shape|1,1,1,70000,70000|--no-peak" RC 1 RE "shape 1,1,1,70000,70000: .*K = 70000")
sgla_cli_test(cli_bench_shape_overflow "bench|--shape|1,9223372036854775807,1,1,1" RC 2 RE "exceed 2\\^48 bytes")
# options the CPU run would not use are refused, not ignored
sgla_cli_test(cli_bench_cuda_only_cpu "bench|--backend|cpu|--tf32" RC 2 RE "--tf32 is an option of the CUDA backend")
sgla_cli_test(cli_bench_cuda_only_default "bench|--config|portable" RC 2 RE "--config is an option of the CUDA backend")
sgla_cli_test(cli_bench_no_gate_grad_alone "bench|--no-gate-grad" RC 2 RE "--no-gate-grad times the backward: it needs --backward")
sgla_cli_test(cli_bench_bwd_half_cpu "bench|--backend|cpu|--backward|--bwd-half" RC 2 RE "--bwd-half is an option of the CUDA backend")
sgla_cli_test(cli_bench_bwd_half_alone "bench|--backend|cuda|--bwd-half" RC 2 RE "--bwd-half times the usual backward with SGLA_FLAG_BWD_HALF_STATES: it needs --backward")
sgla_cli_test(cli_bench_bwd_half_windows "bench|--backend|cuda|--backward|--bwd-half|--bwd-windows|2" RC 2 RE "no --bwd-path, --bwd-windows")
