/* matmul_geom.c - MATMUL strides, operand views and the row fold
 * (matmul_geom.h). */
#include "matmul_geom.h"

#include <string.h>

int mm_perm_decode(int32_t code, int rank, int *perm) {
  const uint32_t u = (uint32_t)code;
  unsigned seen = 0;
  if (rank < 0 || rank > MAX_RANK) return -1;
  for (int d = 0; d < rank; d++) {
    perm[d] = code ? (int)((u >> (4 * d)) & 15u) : d;
    if (perm[d] >= rank || (seen >> perm[d]) & 1u) return -1;
    seen |= 1u << perm[d];
  }
  return rank < MAX_RANK && code && (u >> (4 * rank)) ? -1 : 0; /* nibbles past the rank are 0 */
}

int32_t mm_perm_encode(int rank, const int *perm) {
  uint32_t u = 0;
  int identity = 1;
  for (int d = 0; d < rank; d++)
    u |= (uint32_t)perm[d] << (4 * d), identity &= perm[d] == d;
  return identity ? 0 : (int32_t)u;
}

void mm_logical(const mm_operand *o, int64_t *dims, int64_t *strides) {
  int64_t st[MAX_RANK], s = 1;
  for (int d = o->rank - 1; d >= 0; d--)
    st[d] = s, s *= o->dims[d];
  for (int d = 0; d < o->rank; d++) {
    const int p = o->perm ? o->perm[d] : d;
    dims[d] = o->dims[p];
    if (strides) strides[d] = st[p];
  }
}

void mm_geom_init(const mm_operand *a, const mm_operand *b, int bnz, int rc, const int64_t *cd, int ry,
                  const int64_t *yd, mm_geom *g) {
  int64_t ad[MAX_RANK], as[MAX_RANK], bd[MAX_RANK], bs[MAX_RANK];
  const int ra = a->rank, rb = b->rank, ta = a->trans, tb = b->trans;
  memset(g, 0, sizeof *g);
  mm_logical(a, ad, as);
  mm_logical(b, bd, bs);
  if (ra >= 2) {
    g->m = ta ? ad[ra - 1] : ad[ra - 2], g->k = ta ? ad[ra - 2] : ad[ra - 1];
    g->a_sm = ta ? as[ra - 1] : as[ra - 2], g->a_sk = ta ? as[ra - 2] : as[ra - 1];
  } else {
    g->m = 1, g->k = ad[0], g->a_sm = 0, g->a_sk = as[0];
  }
  if (rb >= 2) {
    g->n = tb ? bd[rb - 2] : bd[rb - 1];
    g->b_sk = tb ? bs[rb - 1] : bs[rb - 2], g->b_sn = tb ? bs[rb - 2] : bs[rb - 1];
  } else {
    g->n = 1, g->b_sk = bs[0], g->b_sn = 0;
  }
  int64_t nz_step = 0; /* FRACTAL_NZ: padded matrices, stored one after the other */
  if (bnz) {
    g->b_sk = g->b_sn = 0;
    nz_step = (bd[rb - 2] + C0 - 1) / C0 * C0 * ((bd[rb - 1] + C0 - 1) / C0 * C0);
  }
  g->nbd = ry - (ra >= 2) - (rb >= 2);
  const int abat = ra >= 2 ? ra - 2 : 0, bbat = rb >= 2 ? rb - 2 : 0;
  for (int d = g->nbd - 1, s = 0; d >= 0; d--, s++) {
    const int ia = abat - 1 - s, ib = bbat - 1 - s;
    int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    g->bdims[d] = yd[d];
    g->sa[d] = da == 1 ? 0 : as[ia];
    g->sb[d] = db == 1 ? 0 : bnz ? nz_step : bs[ib];
    if (bnz) nz_step *= db;
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
