# Model end-to-end tests: each exported torchvision model (models/out, made by
# models/export_torchvision.py; scripts/test.sh runs it first) compiled by atc
# and run by omrun in two precision modes, compared with PyTorch.
# A missing model fails with a message saying how to make it.
set(MODELS_DIR "${CMAKE_SOURCE_DIR}/models/out" CACHE PATH "Exported models for the end-to-end tests")
foreach(model resnet50 mobilenet_v2 squeezenet1_1 efficientnet_b0 mobilenet_v3_small)
  foreach(prec force_fp16 must_keep_origin_dtype)
    add_test(NAME model/${model}/${prec}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model} --precision ${prec}
                     --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-${prec})
    set_tests_properties(model/${model}/${prec} PROPERTIES LABELS model TIMEOUT 900)
  endforeach()
endforeach()
# An ONNX model zoo style Tiny YOLOv2 at opset 8 (models/export_zoo_old.py; scripts/test.sh makes it):
# the experimental ImageScaler, BatchNormalization-7 with `spatial`, a stride-1 max pool with
# asymmetric pads, IR version 3 with every initializer also a graph input; against PyTorch.
foreach(prec force_fp16 must_keep_origin_dtype)
  add_test(NAME model/tiny_yolov2_op8/${prec}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model tiny_yolov2_op8 --precision ${prec}
                   --loop 1 --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                   --work-dir ${CMAKE_BINARY_DIR}/e2e/tiny_yolov2_op8-${prec})
  set_tests_properties(model/tiny_yolov2_op8/${prec} PROPERTIES LABELS model TIMEOUT 900)
endforeach()
# With libomrt_jit built, omrun compiles vector programs by default; the
# smaller models (and the two whose time is mostly vector programs) also run
# interpreted (OMRT_JIT=0) so both executors stay checked against PyTorch in
# one build.
if(TARGET omrt_jit)
  foreach(model mobilenet_v2 squeezenet1_1 efficientnet_b0 mobilenet_v3_small)
    add_test(NAME model/${model}/force_fp16/jit_off
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model} --precision force_fp16
                     --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-force_fp16-jit_off)
    set_tests_properties(model/${model}/force_fp16/jit_off PROPERTIES LABELS model TIMEOUT 900 ENVIRONMENT OMRT_JIT=0)
  endforeach()
  foreach(model efficientnet_b0 mobilenet_v3_small)
    add_test(NAME model/${model}/must_keep_origin_dtype/jit_off
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model}
                     --precision must_keep_origin_dtype --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-must_keep_origin_dtype-jit_off)
    set_tests_properties(model/${model}/must_keep_origin_dtype/jit_off PROPERTIES LABELS model TIMEOUT 900
                         ENVIRONMENT OMRT_JIT=0)
  endforeach()
endif()
# Quantized (QDQ) exports of models/export_qdq.py: their convolutions run as
# int8 QCONV2D tasks, checked against ONNX Runtime's int8 output (skipped,
# exit 77, when the export is missing).
foreach(model resnet50_qdq mobilenet_v2_qdq resnet18_qdq squeezenet1_1_qdq)
  add_test(NAME model/${model}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_qdq.py --model ${model}
                   --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR} --work-dir ${CMAKE_BINARY_DIR}/e2e/${model})
  set_tests_properties(model/${model} PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
endforeach()
set(ORT_BENCH "${CMAKE_SOURCE_DIR}/bench/ort_bench.js" CACHE FILEPATH "bench/ort_bench.js with its node_modules")
# The QOperator twin of resnet18_qdq (models/export_qoperator.py: QLinearConv and the com.microsoft
# QLinearAdd, QLinearGlobalAveragePool, QGemm that ONNX Runtime's quantizer writes), made in the work
# directory when models/out has none: the int8 tasks of the QDQ twin's package, its output against
# ONNX Runtime's and against the QDQ twin's (skipped, exit 77, without python3-onnx or ORT).
add_test(NAME model/resnet18_qop
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_qop.py --model resnet18 --models-dir ${MODELS_DIR}
                 --bin-dir ${CMAKE_BINARY_DIR} --work-dir ${CMAKE_BINARY_DIR}/e2e/resnet18_qop --ort-bench ${ORT_BENCH})
set_tests_properties(model/resnet18_qop PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
# Every com.microsoft QLinear op ORT runs, in one small graph (export_qoperator.py qop_ops): its int8
# tasks, and its output against ORT's.
add_test(NAME model/qop_ops
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_qop.py --model qop_ops --models-dir ${MODELS_DIR}
                 --bin-dir ${CMAKE_BINARY_DIR} --work-dir ${CMAKE_BINARY_DIR}/e2e/qop_ops --ort-bench ${ORT_BENCH})
set_tests_properties(model/qop_ops PROPERTIES LABELS model TIMEOUT 300 SKIP_RETURN_CODE 77)
# ONNX Runtime's transformer contrib ops (frontend/onnx_decomp_msft.c), one small graph each, against
# ORT's output in both precision modes, and the fusions their plain ONNX twins get; and the
# transformer_encoder export rewritten into that form: the plain model's tasks and output (tests/model_msft.py).
add_test(NAME model/msft_ops
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_msft.py --bin-dir ${CMAKE_BINARY_DIR}
                 --work-dir ${CMAKE_BINARY_DIR}/e2e/msft --ort-bench ${ORT_BENCH} --models-dir ${MODELS_DIR}
                 --whole transformer_encoder:8)
set_tests_properties(model/msft_ops PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
# --op_select_implmode against the default of each precision: force_fp16
# runs eligible 3x3 convs as Winograd F(4x4,3x3) unless high_precision (direct
# convolutions only) is asked for; must_keep_origin_dtype runs them direct
# unless high_performance is. Each held to its precision's accuracy bars.
foreach(pm force_fp16:high_precision must_keep_origin_dtype:high_performance)
  string(REPLACE ":" ";" pm "${pm}")
  list(GET pm 0 prec)
  list(GET pm 1 mode)
  add_test(NAME model/resnet50/${prec}/${mode}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model resnet50 --precision ${prec}
                   --impl-mode ${mode} --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                   --work-dir ${CMAKE_BINARY_DIR}/e2e/resnet50-${prec}-${mode})
  set_tests_properties(model/resnet50/${prec}/${mode} PROPERTIES LABELS model TIMEOUT 900)
endforeach()
# The real exports of issue 3 (operator coverage), both precisions: concat-heavy
# (DenseNet, GoogLeNet), channel shuffle (ShuffleNetV2), grouped conv + SE
# (RegNetY), LayerNorm + 7x7 depthwise (ConvNeXt), segmentation with bilinear
# Resize (LR-ASPP), a 4-layer transformer encoder (MatMul, Softmax, LayerNorm)
# and an OCR text recogniser (CRNN: conv stack + 2-layer bidirectional LSTM);
# and issue 18's 2-layer LSTM (hidden 256, 100 steps: RECURRENCE tasks).
foreach(model densenet121 googlenet shufflenet_v2_x1_0 regnet_y_400mf convnext_tiny lraspp_mobilenet_v3_large
              transformer_encoder crnn lstm)
  foreach(prec force_fp16 must_keep_origin_dtype)
    add_test(NAME model/${model}/${prec}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model} --precision ${prec}
                     --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-${prec})
    set_tests_properties(model/${model}/${prec} PROPERTIES LABELS model TIMEOUT 900)
  endforeach()
endforeach()
# Operators on small torch exports against PyTorch, both precisions: grouped
# convolution (FRACTAL_Z_G), RNN, GRU and LSTM (bidirectional, stacked,
# batch-first, initial states), GridSample (every mode and padding mode),
# RoiAlign and torch.nn.MultiheadAttention (each mask kind one ATTENTION task).
add_test(NAME model/torch_ops_e2e
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/torch_ops_e2e.py --bin-dir ${CMAKE_BINARY_DIR})
set_tests_properties(model/torch_ops_e2e PROPERTIES LABELS model TIMEOUT 300)
# omquant (issue 22): post-training quantization of the float ResNet-18 with its 32 calibration
# images (models/export_qdq.py --calib resnet18), checked in the reference evaluator, in ONNX
# Runtime (when bench/node_modules has it) and through atc + omrun; skipped (77) without the models.
add_test(NAME model/omquant_resnet18
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/omquant_e2e.py --bin-dir ${CMAKE_BINARY_DIR}
                 --models-dir ${MODELS_DIR} --work-dir ${CMAKE_BINARY_DIR}/e2e/omquant-resnet18 --ort-bench ${ORT_BENCH})
set_tests_properties(model/omquant_resnet18 PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
# Input-only QDQ (issue 22: Q/DQ on the weighted ops' inputs only, as other tools write it; made from the
# FX export by models/make_input_qdq.py): every convolution int8, those with a float consumer with an f32
# output, checked against ONNX Runtime running the same model (skipped, exit 77, without the export,
# python3-onnx or ORT).
add_test(NAME model/resnet18_qdq_inputs
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_input_qdq.py --model resnet18_qdq
                 --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR} --ort-bench ${ORT_BENCH}
                 --work-dir ${CMAKE_BINARY_DIR}/e2e/resnet18_qdq_inputs)
set_tests_properties(model/resnet18_qdq_inputs PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
# The transformer: omquant --ops all first, then input-only; its 8 activation x activation MatMuls run as
# int8 QMATMULs (f32 outputs) too, no MATMUL is left. And omquant's QDQ model as it is (Q/DQ around every
# op): the attention's MatMuls are QMATMULs requantizing to u8.
add_test(NAME model/transformer_encoder_qdq_inputs
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_input_qdq.py --model transformer_encoder --omquant
                 --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                 --ort-bench ${ORT_BENCH} --work-dir ${CMAKE_BINARY_DIR}/e2e/transformer_encoder_qdq_inputs)
set_tests_properties(model/transformer_encoder_qdq_inputs PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
add_test(NAME model/transformer_encoder_qdq
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_input_qdq.py --model transformer_encoder --omquant
                 --as-quantized --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                 --ort-bench ${ORT_BENCH} --work-dir ${CMAKE_BINARY_DIR}/e2e/transformer_encoder_qdq)
set_tests_properties(model/transformer_encoder_qdq PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
# Dynamically quantized transformers (ONNX Runtime's quantize_dynamic form, made from the float export by
# models/make_dynamic_quant.py): DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul, checked against
# ONNX Runtime running the same model (skipped, exit 77, without the export, python3-onnx or ORT).
add_test(NAME model/transformer_encoder_dyn
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_dynamic_quant.py --model transformer_encoder
                 --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR} --ort-bench ${ORT_BENCH}
                 --work-dir ${CMAKE_BINARY_DIR}/e2e/transformer_encoder_dyn)
set_tests_properties(model/transformer_encoder_dyn PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
# Dynamically quantized CNNs (models/make_dynamic_quant_conv.py: DynamicQuantizeLinear -> ConvInteger -> Cast
# -> Mul [-> Add], per tensor and per output channel): every ConvInteger an int8 QCONV2D, checked against
# ONNX Runtime running the same model (skipped, exit 77, without the export, python3-onnx or ORT).
# MobileNetV2 compiles with must_keep_origin_dtype: under force_fp16 its residual Adds and Clips round
# to fp16 before the next DynamicQuantizeLinear, which moves values across quantization steps of this
# sensitive model (int8 vs the float model: cosine 0.978), cosine 0.996 with ORT; in f32 0.999999.
foreach(m resnet18 mobilenet_v2 squeezenet1_1)
  set(mode "")
  if(m STREQUAL "mobilenet_v2")
    set(mode --precision-mode must_keep_origin_dtype)
  endif()
  foreach(pc "" "--per-channel")
    set(tag ${m}_dyn)
    if(pc)
      set(tag ${m}_dynpc)
    endif()
    add_test(NAME model/${tag}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_dynamic_quant.py --model ${m} --conv ${pc} ${mode}
                     --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR} --ort-bench ${ORT_BENCH}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/${tag})
    set_tests_properties(model/${tag} PROPERTIES LABELS model TIMEOUT 900 SKIP_RETURN_CODE 77)
  endforeach()
endforeach()
# DeepLabV3-ResNet50 (issue 21): omcompare on its force_fp16 build names the first node below the
# threshold and agrees with numpy on two layer dumps; allow_mix_precision reaches cosine >= 0.999
# against PyTorch. Skipped (exit 77) when models/out has no export of it.
add_test(NAME model/deeplabv3_resnet50/precision
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/deeplab_precision.py $<TARGET_FILE:atc> $<TARGET_FILE:omrun>
                 $<TARGET_FILE:omcompare> ${MODELS_DIR} ${CMAKE_BINARY_DIR}/e2e/deeplabv3_resnet50-precision)
set_tests_properties(model/deeplabv3_resnet50/precision PROPERTIES LABELS model TIMEOUT 1800 SKIP_RETURN_CODE 77)
# omrun --dump over the exported models in both precision modes and one gear (issue 21): every task
# dumped, every kind, ONNX-layout float32 files of the listed shape, the output's dump equal to
# omrun's output. Skipped (77) when no model is exported.
add_test(NAME model/layer_dumps
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/layer_dump_models.py $<TARGET_FILE:atc>
                 $<TARGET_FILE:omrun> ${MODELS_DIR} ${CMAKE_BINARY_DIR}/e2e/layer_dumps)
set_tests_properties(model/layer_dumps PROPERTIES LABELS model TIMEOUT 1200 SKIP_RETURN_CODE 77)
# Issue 23's large exports (bench-side, made by the script each test names when absent, and then
# skipped with exit 77), one omrun pass each: torchvision's R(2+1)D-18 on a 1x3x8x112x112 clip
# (models/export_torchvision.py r2plus1d_18; 3-D convs, with top-1) and torchaudio's HuBERT-base
# on a 1 s waveform (models/export_torchvision.py hubert_base; GroupNorm as Reshape +
# InstanceNormalization, a grouped positional Conv1d of kernel 128 with weight norm) in both
# precisions; the ONNX zoo-style light VGG-19 (models/export_zoo_light.py: its 20 weights made by
# ConstantOfShape nodes, 10^8 elements for fc6) against ONNX Runtime in must_keep_origin_dtype.
foreach(case r2plus1d_18:force_fp16 r2plus1d_18:must_keep_origin_dtype hubert_base:force_fp16
             hubert_base:must_keep_origin_dtype vgg19_light:must_keep_origin_dtype)
  string(REPLACE ":" ";" parts ${case})
  list(GET parts 0 model)
  list(GET parts 1 prec)
  add_test(NAME model/${model}/${prec}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/model_e2e.py --model ${model} --precision ${prec}
                   --skip-missing --loop 1 --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                   --work-dir ${CMAKE_BINARY_DIR}/e2e/${model}-${prec})
  set_tests_properties(model/${model}/${prec} PROPERTIES LABELS model TIMEOUT 1800 SKIP_RETURN_CODE 77)
endforeach()
# torchvision's SSDlite320-MobileNetV3-Large with its postprocessing (issue 23; bench-side export
# models/export_detection.py, skipped with exit 77 when absent): per class the scores above the
# threshold (NonZero, GatherND), their top 300 (TopK over a counted axis with k = min(300, count)),
# the classes' candidates concatenated (Concat along the counted axis), batched NMS inside a run-time
# If; its boxes, scores and labels against PyTorch's, in order (tests/detection_e2e.py).
foreach(prec force_fp16 must_keep_origin_dtype)
  add_test(NAME model/ssdlite320_mobilenet_v3_large/${prec}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/detection_e2e.py --precision ${prec}
                   --models-dir ${MODELS_DIR} --bin-dir ${CMAKE_BINARY_DIR}
                   --work-dir ${CMAKE_BINARY_DIR}/e2e/ssdlite320_mobilenet_v3_large-${prec})
  set_tests_properties(model/ssdlite320_mobilenet_v3_large/${prec} PROPERTIES LABELS model TIMEOUT 1800
                       SKIP_RETURN_CODE 77)
endforeach()
# A test-sized Mask R-CNN (ResNet-18 FPN, 128x128; models/export_detection.py --name, exported at test
# time into e2e/maskrcnn_resnet18_fpn_128-export, a recipe with real detections): the RPN's TopK and NMS,
# the box head over counted proposals, per-class threshold and NMS, and each detection's label's mask
# picked from the mask head (Flatten of the counted axis, Gather); boxes, scores, labels and masks
# against PyTorch's (tests/detection_e2e.py).
foreach(prec force_fp16 must_keep_origin_dtype)
  add_test(NAME model/maskrcnn_resnet18_fpn_128/${prec}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/detection_e2e.py --precision ${prec}
                   --name maskrcnn_resnet18_fpn_128 --bin-dir ${CMAKE_BINARY_DIR}
                   --work-dir ${CMAKE_BINARY_DIR}/e2e/maskrcnn_resnet18_fpn_128-${prec})
  set_tests_properties(model/maskrcnn_resnet18_fpn_128/${prec} PROPERTIES LABELS model TIMEOUT 1800)
endforeach()
