// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "user/symbolize/ksym_events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/symbolize/kallsyms.h"

/* 16 pages a CPU: ~800 records between drains (each 64-100 bytes) */
#define KSYM_RING_PAGES 16
/* the kernel's KSYM_NAME_LEN, which no UAPI header carries */
#define KSYM_NAME_MAX 512

struct ksym_ring {
	int fd;
	void *base; /* the control page, then the data pages */
};

struct ksym_events {
	struct ksym_ring *rings;
	int nr;
	size_t page, data_size;
	uint64_t lost;
};

/* The records the kernel writes (include/uapi/linux/perf_event.h). */
struct ksym_record {
	struct perf_event_header h;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	char name[];
};

struct lost_record {
	struct perf_event_header h;
	uint64_t id;
	uint64_t lost;
};

static int open_ring(struct ksym_events *e, int cpu, struct ksym_ring *r)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.ksymbol = 1;
	attr.sample_period = 1;
	r->fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->base = mmap(NULL, e->page + e->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		int err = -errno;

		close(r->fd);
		r->fd = -1;
		return err;
	}
	return 0;
}

struct ksym_events *ksym_events_open(char *err, size_t errlen)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	struct ksym_events *e = calloc(1, sizeof(*e));
	int cpu, rc;

	if (!e || cpus <= 0 || !(e->rings = calloc((size_t)cpus, sizeof(*e->rings)))) {
		snprintf(err, errlen, "out of memory");
		free(e);
		return NULL;
	}
	e->page = (size_t)sysconf(_SC_PAGESIZE);
	e->data_size = KSYM_RING_PAGES * e->page;
	for (cpu = 0; cpu < cpus; cpu++) {
		rc = open_ring(e, cpu, &e->rings[e->nr]);
		if (rc == -ENODEV)
			continue; /* offline CPU */
		if (rc) {
			snprintf(err, errlen, "kernel symbol events on CPU %d: %s", cpu,
				 strerror(-rc));
			ksym_events_close(e);
			return NULL;
		}
		e->nr++;
	}
	return e;
}

/* One record, copied out of its ring: a name added, or lost ones counted. */
static size_t take_record(struct ksym_events *e, const struct perf_event_header *h, struct ksyms *k)
{
	const struct ksym_record *r = (const void *)h;
	char name[KSYM_NAME_MAX + 8];
	const char *known;
	uint64_t off;
	size_t len;

	if (h->type == PERF_RECORD_LOST && h->size >= sizeof(struct lost_record)) {
		e->lost += ((const struct lost_record *)h)->lost;
		return 0;
	}
	/*
	 * An unregister names code too: code loaded before the events were
	 * opened and gone before kallsyms was read ran in samples that neither
	 * names.
	 */
	if (h->type != PERF_RECORD_KSYMBOL || h->size <= sizeof(*r) ||
	    (r->ksym_type != PERF_RECORD_KSYMBOL_TYPE_BPF &&
	     r->ksym_type != PERF_RECORD_KSYMBOL_TYPE_OOL))
		return 0;
	/* the name is NUL-terminated inside the record; a record cut short stops it anyway */
	len = strnlen(r->name, h->size - sizeof(*r));
	if (len == 0 || len >= KSYM_NAME_MAX)
		return 0;
	snprintf(name, sizeof(name), "%.*s [bpf]", (int)len, r->name);
	/* named by its register record in an earlier drain */
	if ((r->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) &&
	    ksyms_lookup(k, r->addr, &known, &off) == 0 && off == 0 && !strcmp(known, name))
		return 0;
	return ksyms_add(k, r->addr, r->addr + (r->len ? r->len : 1), name) ? 0 : 1;
}

static size_t drain_ring(struct ksym_events *e, struct ksym_ring *ring, struct ksyms *k)
{
	struct perf_event_mmap_page *meta = ring->base;
	const char *data = (const char *)ring->base + e->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	union {
		struct perf_event_header h;
		char bytes[sizeof(struct ksym_record) + KSYM_NAME_MAX];
	} copy;
	size_t added = 0;

	while (tail < head) {
		size_t off = tail % e->data_size, first;
		struct perf_event_header h;

		/* records are 8-byte aligned: a header never wraps, a record may */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		if (h.size <= sizeof(copy)) {
			first = e->data_size - off < h.size ? e->data_size - off : h.size;
			memcpy(copy.bytes, data + off, first);
			memcpy(copy.bytes + first, data, h.size - first);
			added += take_record(e, &copy.h, k);
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return added;
}

size_t ksym_events_drain(struct ksym_events *e, struct ksyms *k)
{
	size_t added = 0;
	int i;

	if (!e || !k)
		return 0;
	for (i = 0; i < e->nr; i++)
		added += drain_ring(e, &e->rings[i], k);
	if (added)
		ksyms_sort(k);
	return added;
}

uint64_t ksym_events_lost(const struct ksym_events *e)
{
	return e ? e->lost : 0;
}

void ksym_events_close(struct ksym_events *e)
{
	int i;

	if (!e)
		return;
	for (i = 0; i < e->nr; i++) {
		munmap(e->rings[i].base, e->page + e->data_size);
		close(e->rings[i].fd);
	}
	free(e->rings);
	free(e);
}
