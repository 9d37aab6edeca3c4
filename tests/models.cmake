# Model end-to-end tests: each exported torchvision model (models/out, made by
# models/export_torchvision.py; scripts/test.sh runs it first) compiled by atc
# and run by omrun in two precision modes, compared with PyTorch.
# A missing model fails with a message saying how to make it.
set(MODELS_DIR "${CMAKE_SOURCE_DIR}/models/out" CACHE PATH "Exported models for the end-to-end tests")
foreach(model resnet50 mobilenet_v2 squeezenet1_1)
  foreach(prec force_fp16 must_keep_origin_dtype)
    add_test(NAME model/${model}/${prec}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model} --precision ${prec}
                     --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-${prec})
    set_tests_properties(model/${model}/${prec} PROPERTIES LABELS model TIMEOUT 900)
  endforeach()
endforeach()
# With libomrt_jit built, omrun compiles vector programs by default; the two
# smaller models also run interpreted (OMRT_JIT=0) so both executors stay
# checked against PyTorch in one build.
if(TARGET omrt_jit)
  foreach(model mobilenet_v2 squeezenet1_1)
    add_test(NAME model/${model}/force_fp16/jit_off
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model} --precision force_fp16
                     --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-force_fp16-jit_off)
    set_tests_properties(model/${model}/force_fp16/jit_off PROPERTIES LABELS model TIMEOUT 900 ENVIRONMENT OMRT_JIT=0)
  endforeach()
endif()
# --op_select_implmode=high_performance: Winograd F(4x4,3x3) for eligible 3x3
# convs, both precisions held to the same accuracy bars.
foreach(prec force_fp16 must_keep_origin_dtype)
  add_test(NAME model/resnet50/${prec}/high_performance
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model resnet50 --precision ${prec}
                   --impl-mode high_performance --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                   --work-dir ${CMAKE_BINARY_DIR}/e2e/resnet50-${prec}-high_performance)
  set_tests_properties(model/resnet50/${prec}/high_performance PROPERTIES LABELS model TIMEOUT 900)
endforeach()
