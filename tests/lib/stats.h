/* tests/lib/stats.h: the order statistics the benchmarks print. */
#ifndef VITRINE_TESTS_STATS_H
#define VITRINE_TESTS_STATS_H

/* Sorts v[n] ascending, in place. */
void stats_sort(double *v, int n);
/* The p-quantile (0..1) of v[n], which it sorts: v[(int)(n * p)], the last
 * element when that is past the end. */
double stats_pct(double *v, int n, double p);

#endif
