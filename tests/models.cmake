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
