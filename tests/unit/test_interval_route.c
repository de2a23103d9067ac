// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's interval boundary (user/session/consumer.c): a sample taken
 * before an interval's end is written in that interval (it arrived while
 * the end waited) or counted late in the next one, never in the next one
 * uncounted; a sample taken after it is in the next one.  The session here
 * is bare (no BPF): its consumer is the test, routing records itself.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "common/clock.h"
#include "tests/lib/harness.h"
#include "user/session/consumer.h"
#include "user/session/session.h"

static struct cfi_sample_record rec_at(uint64_t time_ns)
{
	return (struct cfi_sample_record){
	    .type = RECORD_SAMPLE, .pid = 1, .tid = 1, .time_ns = time_ns, .weight = 1};
}

static int route(struct session *s, uint64_t time_ns)
{
	struct cfi_sample_record r = rec_at(time_ns);

	return session_route_sample(s, &r, sizeof(r), 1);
}

static void test_boundary(void)
{
	struct session *s = calloc(1, sizeof(*s));
	struct aggregator fresh, closing;
	uint64_t before, until, unix0;

	pthread_mutex_init(&s->agg_lock, NULL);
	CHECK(!agg_init(&s->agg, 64) && !agg_init(&fresh, 64), "aggregators");
	CHECK(!route(s, mono_ns()), "a sample of the first interval");
	before = mono_ns();
	unix0 = unix_ns();
	until = session_interval_swap(s, &fresh, &closing);
	CHECK(until >= unix0 && until <= unix_ns(), "the boundary is the swap's own time");
	CHECK(closing.samples == 1 && s->agg.samples == 0, "the swap: %lu closing, %lu new",
	      (unsigned long)closing.samples, (unsigned long)s->agg.samples);
	/* taken before the end, arriving while it waits: the closing interval's */
	CHECK(!route(s, before), "a sample taken before the end");
	CHECK(closing.samples == 2 && closing.waited == 1 && s->agg.samples == 0,
	      "taken before the end, arriving while it waits: %lu closing (%lu waited), %lu new",
	      (unsigned long)closing.samples, (unsigned long)closing.waited,
	      (unsigned long)s->agg.samples);
	/* taken after the end: the new interval's, not late */
	CHECK(!route(s, mono_ns()), "a sample taken after the end");
	CHECK(s->agg.samples == 1 && s->agg.late == 0, "taken after: %lu new, %lu late",
	      (unsigned long)s->agg.samples, (unsigned long)s->agg.late);
	session_interval_close(s, 0);
	/* taken before the end, arriving after the closing interval went: late in the new one */
	CHECK(!route(s, before), "a sample taken before the end, after the close");
	CHECK(closing.samples == 2 && s->agg.samples == 2 && s->agg.late == 1,
	      "after the close: %lu closing, %lu new, %lu late", (unsigned long)closing.samples,
	      (unsigned long)s->agg.samples, (unsigned long)s->agg.late);
	agg_free(&closing);
	agg_free(&s->agg);
	pthread_mutex_destroy(&s->agg_lock);
	free(s);
}

/*
 * A consumer routing samples stamped as it takes them while intervals end
 * beside it: every sample is in the interval it was taken in, or counted
 * late in a later one.  Boundaries are many and samples a million, so a
 * window between the swap and the boundary would be met.
 */
#define SWAPS 200

struct racer {
	struct session *s;
	atomic_bool stop;
	uint64_t routed;
};

static void *consumer(void *arg)
{
	struct racer *rc = arg;

	while (!atomic_load(&rc->stop)) {
		route(rc->s, mono_ns());
		rc->routed++;
	}
	return NULL;
}

static void test_racing_consumer(void)
{
	struct session *s = calloc(1, sizeof(*s));
	struct racer rc = {.s = s};
	struct aggregator done[SWAPS + 1];
	uint64_t total = 0, late = 0, waited = 0;
	pthread_t t;
	int i;

	pthread_mutex_init(&s->agg_lock, NULL);
	CHECK(!agg_init(&s->agg, 64), "aggregator");
	CHECK(!pthread_create(&t, NULL, consumer, &rc), "consumer thread");
	for (i = 0; i < SWAPS; i++) {
		struct aggregator fresh;

		if (agg_init(&fresh, 64)) {
			CHECK(0, "aggregator %d", i);
			break;
		}
		usleep(500);
		session_interval_swap(s, &fresh, &done[i]);
		usleep(200);
		session_interval_close(s, 0);
	}
	atomic_store(&rc.stop, true);
	pthread_join(t, NULL);
	done[i] = s->agg;
	for (int k = 0; k <= i; k++) {
		total += done[k].samples;
		late += done[k].late;
		waited += done[k].waited;
		agg_free(&done[k]);
	}
	printf("  %lu samples routed across %d ends: %lu waited for, %lu late\n",
	       (unsigned long)rc.routed, i, (unsigned long)waited, (unsigned long)late);
	CHECK(total == rc.routed, "%lu routed, %lu in the intervals", (unsigned long)rc.routed,
	      (unsigned long)total);
	/*
	 * Conservation while ends swap aggregators beside the consumer; where
	 * each sample went is test_boundary's.  The consumer has one sample in
	 * flight: taken before an end, it is late only if routed after that
	 * end's close, so one late sample per end at most, however slow.
	 */
	CHECK(late <= (uint64_t)i, "%lu late in %d ends", (unsigned long)late, i);
	pthread_mutex_destroy(&s->agg_lock);
	free(s);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_boundary);
	RUN_TEST(test_racing_consumer);
	return HARNESS_DONE();
}
