/* matmul_geom.c - MATMUL strides and the row fold (matmul_geom.h). */
#include "matmul_geom.h"

#include <string.h>

void mm_geom_init(int ra, const int64_t *ad, int ta, int rb, const int64_t *bd, int tb, int bnz, int rc,
                  const int64_t *cd, int ry, const int64_t *yd, mm_geom *g) {
  memset(g, 0, sizeof *g);
  if (ra >= 2) {
    int64_t r0 = ad[ra - 2], r1 = ad[ra - 1];
    g->m = ta ? r1 : r0, g->k = ta ? r0 : r1;
    g->a_sm = ta ? 1 : r1, g->a_sk = ta ? r1 : 1;
  } else {
    g->m = 1, g->k = ad[0], g->a_sm = 0, g->a_sk = 1;
  }
  int64_t step_b;
  if (rb >= 2) {
    int64_t r0 = bd[rb - 2], r1 = bd[rb - 1];
    g->n = tb ? r0 : r1;
    if (bnz) {
      g->b_sk = g->b_sn = 0;
      step_b = (r0 + C0 - 1) / C0 * C0 * ((r1 + C0 - 1) / C0 * C0);
    } else {
      g->b_sk = tb ? 1 : r1, g->b_sn = tb ? r1 : 1;
      step_b = r0 * r1;
    }
  } else {
    g->n = 1, g->b_sk = 1, g->b_sn = 0, step_b = bd[0];
  }
  g->nbd = ry - (ra >= 2) - (rb >= 2);
  const int abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0;
  int64_t step_a = g->m * g->k;
  for (int d = g->nbd - 1, s = 0; d >= 0; d--, s++) {
    int64_t da = s < abat ? ad[abat - 1 - s] : 1, db = s < bbat ? bd[bbat - 1 - s] : 1;
    g->bdims[d] = yd[d];
    g->sa[d] = da == 1 ? 0 : step_a;
    g->sb[d] = db == 1 ? 0 : step_b;
    step_a *= da, step_b *= db;
  }
  /* c: strides along y's dims (0 where it broadcasts), then split into batch, M, N */
  int64_t scy[MAX_RANK] = {0}, step = 1;
  for (int j = ry - 1, s = 0; j >= 0 && s < rc; j--, s++) {
    int64_t dc = cd[rc - 1 - s];
    scy[j] = dc == 1 ? 0 : step;
    step *= dc;
  }
  for (int d = 0; d < g->nbd; d++)
    g->sc[d] = scy[d];
  g->c_sm = ra >= 2 ? scy[g->nbd] : 0;
  g->c_sn = rb >= 2 ? scy[ry - 1] : 0;
}

/* The step between consecutive rows of the axis made of M (stride sm) and
 * the batch dims [nbd - fold, nbd) (strides s), innermost first; -1 when
 * the rows are not evenly spaced. Dims of size 1 take no part. */
static int row_step(const mm_geom *g, int fold, const int64_t *s, int64_t sm, int64_t *step_out) {
  int64_t step = 0, inner = g->m;
  int have = g->m > 1;
  if (have) step = sm;
  for (int d = g->nbd - 1; d >= g->nbd - fold; d--) {
    if (g->bdims[d] == 1) continue;
    if (!have)
      step = s[d], have = 1; /* every inner dim has size 1: inner = 1 */
    else if (s[d] != step * inner)
      return -1;
    inner *= g->bdims[d];
  }
  *step_out = step;
  return 0;
}

int mm_fold_rows(const mm_geom *g, int fold, int64_t *a_row_out, int64_t *c_row_out) {
  if (fold < 0 || fold > g->nbd) return -1;
  for (int d = g->nbd - fold; d < g->nbd; d++)
    if (g->bdims[d] != 1 && g->sb[d] != 0) return -1;
  if (row_step(g, fold, g->sa, g->a_sm, a_row_out) || row_step(g, fold, g->sc, g->c_sm, c_row_out)) return -1;
  return 0;
}

int mm_max_fold(const mm_geom *g) {
  int64_t a, c;
  int fold = 0;
  while (fold < g->nbd && !mm_fold_rows(g, fold + 1, &a, &c))
    fold++;
  return fold;
}
