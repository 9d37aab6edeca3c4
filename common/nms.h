/* nms.h - NonMaxSuppression's selection, one implementation for the
 * reference evaluator (ir/count.c) and libomrt's NMS kernel
 * (runtime/kernels_count.c). Header only: the runtime links no compiler
 * code.
 *
 * ONNX NonMaxSuppression as ONNX Runtime computes it, per (batch, class):
 * the boxes whose score is above score_threshold, visited by score
 * descending (equal scores by lower box index first); a box is selected
 * unless its IoU with a box already selected for this class exceeds
 * iou_threshold; at most max_per_class are selected. A box of zero or
 * negative area, or no overlap, suppresses nothing. Boxes are [y1, x1, y2,
 * x2] with either corner first (center_point_box 0) or [xc, yc, w, h] (1).
 *
 * The visit needs no scratch memory: the next candidate is the best box
 * strictly after the previous one in that order, found by a scan, so a
 * class costs O(boxes x candidates visited). Postprocessing sizes (a few
 * thousand boxes) keep this small; a sort would need a workspace.
 */
#ifndef COMMON_NMS_H
#define COMMON_NMS_H

#include <stdint.h>

/* The box's corners [x1, y1, x2, y2], x1 <= x2 and y1 <= y2. */
static inline void nms_corners(const float b[4], int center_point_box, float c[4]) {
  if (center_point_box) {
    c[0] = b[0] - b[2] / 2, c[2] = b[0] + b[2] / 2, c[1] = b[1] - b[3] / 2, c[3] = b[1] + b[3] / 2;
  } else {
    c[0] = b[1] < b[3] ? b[1] : b[3], c[2] = b[1] < b[3] ? b[3] : b[1];
    c[1] = b[0] < b[2] ? b[0] : b[2], c[3] = b[0] < b[2] ? b[2] : b[0];
  }
}

/* 1 when boxes a and b overlap by more than iou_threshold. */
static inline int nms_suppresses(const float a[4], const float b[4], int center_point_box,
                                 float iou_threshold) {
  float p[4], q[4];
  nms_corners(a, center_point_box, p);
  nms_corners(b, center_point_box, q);
  float x1 = p[0] > q[0] ? p[0] : q[0], y1 = p[1] > q[1] ? p[1] : q[1];
  float x2 = p[2] < q[2] ? p[2] : q[2], y2 = p[3] < q[3] ? p[3] : q[3];
  if (x2 <= x1 || y2 <= y1) return 0;
  float inter = (x2 - x1) * (y2 - y1), area_p = (p[2] - p[0]) * (p[3] - p[1]),
        area_q = (q[2] - q[0]) * (q[3] - q[1]), uni = area_p + area_q - inter;
  if (inter <= 0 || area_p <= 0 || area_q <= 0 || uni <= 0) return 0;
  return inter / uni > iou_threshold;
}

/* Reads element i of a box or score array (f32, or f16 as binary16 bits). */
typedef float (*nms_get_fn)(const void *p, uint64_t i);

/* One (batch, class): boxes [n, 4] from element box0 and scores [n] from
 * score0 (through get); the selected box indices go to sel[j * stride],
 * j < max (max >= 0). Returns how many. */
static inline int64_t nms_class(const void *boxes, uint64_t box0, const void *scores, uint64_t score0,
                                uint64_t n, nms_get_fn get, int center_point_box, float iou_threshold,
                                int has_score_threshold, float score_threshold, int64_t max, int64_t *sel,
                                int64_t stride) {
  int64_t count = 0, prev = -1;
  float prev_score = 0;
  while (count < max) {
    int64_t best = -1;
    float best_score = 0;
    for (uint64_t i = 0; i < n; i++) {
      float s = get(scores, score0 + i);
      if (has_score_threshold && !(s > score_threshold)) continue;
      if (prev >= 0 && !(s < prev_score || (s == prev_score && (int64_t)i > prev))) continue; /* visited */
      if (best < 0 || s > best_score) best = (int64_t)i, best_score = s;
    }
    if (best < 0) break;
    prev = best, prev_score = best_score;
    float b[4], o[4];
    for (int k = 0; k < 4; k++)
      b[k] = get(boxes, box0 + (uint64_t)best * 4 + (uint64_t)k);
    int keep = 1;
    for (int64_t j = 0; j < count && keep; j++) {
      for (int k = 0; k < 4; k++)
        o[k] = get(boxes, box0 + (uint64_t)sel[j * stride] * 4 + (uint64_t)k);
      keep = !nms_suppresses(b, o, center_point_box, iou_threshold);
    }
    if (keep) sel[count++ * stride] = best;
  }
  return count;
}

#endif
