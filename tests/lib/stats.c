/* tests/lib/stats.c: see stats.h. */
#include "tests/lib/stats.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
}

double stats_pct(double *v, int n, double p)
{
	int i = (int)(n * p);

	stats_sort(v, n);
	return v[i < n ? i : n - 1];
}
