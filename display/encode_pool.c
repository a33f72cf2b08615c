/* display/encode_pool.c: see encode_pool.h. The queue is common/work_queue.c;
 * what is the pool's own is a stream encoder per worker (TurboJPEG handles
 * and scratch space are not thread-safe) and the workers' nice value. */
#include "display/encode_pool.h"

#include <errno.h>

#define ENCODE_POOL_NICE 10

static void *make_encoder(void *ud)
{
	(void)ud;
	return display_stream_encoder_create();
}

static void free_encoder(void *ctx)
{
	display_stream_encoder_destroy(ctx);
}

int encode_pool_create(int threads, int max_jobs, void (*wake)(void *wake_ud), void *wake_ud,
		       struct encode_pool **out)
{
	const struct work_queue_config cfg = { .threads = threads,
					       .max_jobs = max_jobs,
					       .nice = ENCODE_POOL_NICE,
					       .wake = wake,
					       .wake_ud = wake_ud,
					       .worker_init = make_encoder,
					       .worker_fini = free_encoder };

	*out = NULL;
	if (threads > ENCODE_POOL_MAX_THREADS)
		return -EINVAL;
	return work_queue_create(&cfg, (struct work_queue **)out);
}

int encode_pool_submit(struct encode_pool *p, encode_pool_work_fn work, encode_pool_done_fn done,
		       void *ud)
{
	return encode_pool_submit_for(p, NULL, work, done, ud);
}

int encode_pool_submit_for(struct encode_pool *p, const void *owner, encode_pool_work_fn work,
			   encode_pool_done_fn done, void *ud)
{
	return work_queue_submit((struct work_queue *)p, owner, work, done, ud);
}

int encode_pool_reap(struct encode_pool *p)
{
	return work_queue_reap((struct work_queue *)p);
}

int encode_pool_cancel(struct encode_pool *p, void *ud)
{
	return work_queue_cancel((struct work_queue *)p, ud);
}

void encode_pool_stats(struct encode_pool *p, struct work_queue_stats *out)
{
	work_queue_stats((struct work_queue *)p, out);
}

void encode_pool_destroy(struct encode_pool *p)
{
	work_queue_destroy((struct work_queue *)p);
}
