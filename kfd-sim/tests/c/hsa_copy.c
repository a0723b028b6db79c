/* ROCr (Debian's libhsa-runtime64 5.2.3) on the simulator: memory copies,
 * barrier packets and signal waits, all completed by the simulated CP and
 * SDMA engines. Prints "OK <check>" per passed check and "ALL OK" at the
 * end; the first argument selects a mode:
 *   copy     hsa_amd_memory_async_copy host->device, device->host and
 *            device->device of 4 KiB .. 64 MiB, bytes verified, one copy
 *            with a dependency signal set later by another thread
 *   barrier  BARRIER_AND / BARRIER_OR packets (and a barrier-value packet)
 *            on a user queue, with and without dependencies; infinite
 *            blocking waits woken by the completion
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static hsa_agent_t gpu, cpu;
static int have_gpu, have_cpu;
static hsa_amd_memory_pool_t vram_pool, host_pool;
static int have_vram, have_host;

static hsa_status_t find_agents(hsa_agent_t a, void *data)
{
	(void)data;
	hsa_device_type_t t;
	hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
	if (t == HSA_DEVICE_TYPE_GPU && !have_gpu) {
		gpu = a;
		have_gpu = 1;
	}
	if (t == HSA_DEVICE_TYPE_CPU && !have_cpu) {
		cpu = a;
		have_cpu = 1;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t p, void *data)
{
	int want_host = *(int *)data;
	hsa_amd_segment_t seg;
	uint32_t flags = 0;
	hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
	if (seg != HSA_AMD_SEGMENT_GLOBAL)
		return HSA_STATUS_SUCCESS;
	hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
	if (want_host && !have_host && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) {
		host_pool = p;
		have_host = 1;
	}
	if (!want_host && !have_vram && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) {
		vram_pool = p;
		have_vram = 1;
	}
	return HSA_STATUS_SUCCESS;
}

static void *alloc(hsa_amd_memory_pool_t pool, size_t size)
{
	void *p = NULL;
	hsa_status_t s = hsa_amd_memory_pool_allocate(pool, size, 0, &p);
	if (s != HSA_STATUS_SUCCESS)
		return NULL;
	/* Both agents reach every buffer (the copy engine is the GPU's). */
	hsa_agent_t both[2] = {gpu, cpu};
	hsa_amd_agents_allow_access(2, both, NULL, p);
	return p;
}

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)(i * 131 + (i >> 11) * 7 + seed);
}

static int wait_done(hsa_signal_t s)
{
	/* Infinite, blocking: only the completion wakes it. */
	hsa_signal_value_t v =
		hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
	return v < 1;
}

static int copy(void *dst, hsa_agent_t da, const void *src, hsa_agent_t sa, size_t size, uint32_t ndeps,
		const hsa_signal_t *deps)
{
	hsa_signal_t done;
	if (hsa_signal_create(1, 0, NULL, &done) != HSA_STATUS_SUCCESS)
		return 0;
	hsa_status_t s = hsa_amd_memory_async_copy(dst, da, src, sa, size, ndeps, deps, done);
	int ok = s == HSA_STATUS_SUCCESS && wait_done(done);
	hsa_signal_destroy(done);
	return ok;
}

static size_t differing(const uint8_t *p, size_t size, unsigned seed)
{
	size_t bad = 0;
	for (size_t i = 0; i < size; i++)
		bad += p[i] != pattern(i, seed);
	return bad;
}

static void copies(void)
{
	const size_t sizes[] = {4096, 64 * 1024, 1 << 20, 16 << 20, 64 << 20};
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t size = sizes[k];
		char name[64];
		uint8_t *host = alloc(host_pool, size);
		uint8_t *back = alloc(host_pool, size);
		void *dev = alloc(vram_pool, size);
		void *dev2 = alloc(vram_pool, size);
		snprintf(name, sizeof(name), "alloc_%zu", size);
		CHECK(host && back && dev && dev2, name, "allocation failed");
		if (!host || !back || !dev || !dev2)
			return;
		for (size_t i = 0; i < size; i++)
			host[i] = pattern(i, k);
		memset(back, 0, size);
		snprintf(name, sizeof(name), "h2d_%zu", size);
		CHECK(copy(dev, gpu, host, cpu, size, 0, NULL), name, "copy failed");
		snprintf(name, sizeof(name), "d2d_%zu", size);
		CHECK(copy(dev2, gpu, dev, gpu, size, 0, NULL), name, "copy failed");
		snprintf(name, sizeof(name), "d2h_%zu", size);
		CHECK(copy(back, cpu, dev2, gpu, size, 0, NULL), name, "copy failed");
		size_t bad = differing(back, size, k);
		snprintf(name, sizeof(name), "bytes_%zu", size);
		CHECK(bad == 0, name, "%zu of %zu bytes differ", bad, size);
		hsa_amd_memory_pool_free(host);
		hsa_amd_memory_pool_free(back);
		hsa_amd_memory_pool_free(dev);
		hsa_amd_memory_pool_free(dev2);
	}
}

struct later {
	hsa_signal_t s;
	unsigned ms;
};

static void *store_zero_later(void *arg)
{
	struct later *l = arg;
	usleep(l->ms * 1000);
	hsa_signal_store_screlease(l->s, 0);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A copy that depends on a signal another thread clears after 100 ms. */
static void dependent_copy(void)
{
	size_t size = 1 << 20;
	uint8_t *host = alloc(host_pool, size);
	uint8_t *back = alloc(host_pool, size);
	void *dev = alloc(vram_pool, size);
	if (!host || !back || !dev) {
		CHECK(0, "dep_alloc", "allocation failed");
		return;
	}
	for (size_t i = 0; i < size; i++)
		host[i] = pattern(i, 99);
	hsa_signal_t dep;
	hsa_signal_create(1, 0, NULL, &dep);
	struct later l = {dep, 100};
	pthread_t t;
	pthread_create(&t, NULL, store_zero_later, &l);
	double t0 = now_ms();
	int ok = copy(dev, gpu, host, cpu, size, 1, &dep);
	double dt = now_ms() - t0;
	pthread_join(t, NULL);
	CHECK(ok && dt >= 90, "dep_copy_waits_for_its_signal", "ok %d after %.1f ms", ok, dt);
	CHECK(copy(back, cpu, dev, gpu, size, 0, NULL) && differing(back, size, 99) == 0, "dep_copy_bytes",
	      "bytes differ");
	hsa_signal_destroy(dep);
	hsa_amd_memory_pool_free(host);
	hsa_amd_memory_pool_free(back);
	hsa_amd_memory_pool_free(dev);
}

static hsa_queue_t *queue;

static void submit(const void *pkt)
{
	uint64_t idx = hsa_queue_add_write_index_relaxed(queue, 1);
	uint8_t *slot = (uint8_t *)queue->base_address + (idx % queue->size) * 64;
	memcpy(slot + 2, (const uint8_t *)pkt + 2, 62);
	uint16_t header;
	memcpy(&header, pkt, 2);
	__atomic_store_n((uint16_t *)slot, header, __ATOMIC_RELEASE);
	hsa_signal_store_screlease(queue->doorbell_signal, idx);
}

static uint16_t header(hsa_packet_type_t t)
{
	return (uint16_t)(t << HSA_PACKET_HEADER_TYPE | 1 << HSA_PACKET_HEADER_BARRIER |
			  HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
			  HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
}

static void barrier(const char *name, hsa_packet_type_t t, int ndeps, int clear, unsigned delay_ms)
{
	hsa_signal_t deps[5], done;
	hsa_signal_create(1, 0, NULL, &done);
	hsa_barrier_and_packet_t p;
	memset(&p, 0, sizeof(p));
	p.header = header(t);
	for (int i = 0; i < ndeps; i++) {
		hsa_signal_create(1, 0, NULL, &deps[i]);
		p.dep_signal[i] = deps[i];
	}
	p.completion_signal = done;
	submit(&p);
	pthread_t th[5];
	struct later l[5];
	for (int i = 0; i < clear; i++) {
		l[i].s = deps[i];
		l[i].ms = delay_ms;
		pthread_create(&th[i], NULL, store_zero_later, &l[i]);
	}
	double t0 = now_ms();
	int ok = wait_done(done);
	double dt = now_ms() - t0;
	for (int i = 0; i < clear; i++)
		pthread_join(th[i], NULL);
	CHECK(ok && dt >= (clear ? delay_ms * 0.9 : 0), name, "ok %d after %.1f ms", ok, dt);
	for (int i = 0; i < ndeps; i++)
		hsa_signal_destroy(deps[i]);
	hsa_signal_destroy(done);
}

static void barrier_value(void)
{
	hsa_signal_t s, done;
	hsa_signal_create(5, 0, NULL, &s);
	hsa_signal_create(1, 0, NULL, &done);
	hsa_amd_barrier_value_packet_t p;
	memset(&p, 0, sizeof(p));
	p.header.header = header(HSA_PACKET_TYPE_VENDOR_SPECIFIC);
	p.header.AmdFormat = HSA_AMD_PACKET_TYPE_BARRIER_VALUE;
	p.signal = s;
	p.value = 7;
	p.mask = -1;
	p.cond = HSA_SIGNAL_CONDITION_EQ;
	p.completion_signal = done;
	submit(&p);
	usleep(30 * 1000);
	hsa_signal_value_t before = hsa_signal_load_scacquire(done);
	hsa_signal_store_screlease(s, 7);
	int ok = wait_done(done);
	CHECK(before == 1 && ok, "barrier_value", "before %ld ok %d", (long)before, ok);
	hsa_signal_destroy(s);
	hsa_signal_destroy(done);
}

static void barriers(void)
{
	hsa_status_t s = hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue);
	CHECK(s == HSA_STATUS_SUCCESS, "queue_create", "status %d", s);
	if (s != HSA_STATUS_SUCCESS)
		return;
	barrier("barrier_and_no_deps", HSA_PACKET_TYPE_BARRIER_AND, 0, 0, 0);
	barrier("barrier_or_no_deps", HSA_PACKET_TYPE_BARRIER_OR, 0, 0, 0);
	barrier("barrier_and_two_deps", HSA_PACKET_TYPE_BARRIER_AND, 2, 2, 100);
	barrier("barrier_or_one_of_three", HSA_PACKET_TYPE_BARRIER_OR, 3, 1, 100);
	barrier_value();
	uint64_t r = hsa_queue_load_read_index_scacquire(queue);
	uint64_t w = hsa_queue_load_write_index_scacquire(queue);
	CHECK(r == w && r == 5, "read_index_caught_up", "read %llu write %llu", (unsigned long long)r,
	      (unsigned long long)w);
	hsa_queue_destroy(queue);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "copy";
	setvbuf(stdout, NULL, _IOLBF, 0);
	hsa_status_t s = hsa_init();
	CHECK(s == HSA_STATUS_SUCCESS, "hsa_init", "status %d", s);
	if (s != HSA_STATUS_SUCCESS)
		return 1;
	hsa_iterate_agents(find_agents, NULL);
	CHECK(have_gpu && have_cpu, "agents", "gpu %d cpu %d", have_gpu, have_cpu);
	if (!have_gpu || !have_cpu)
		return 1;
	int want_host = 1;
	hsa_amd_agent_iterate_memory_pools(cpu, find_pool, &want_host);
	want_host = 0;
	hsa_amd_agent_iterate_memory_pools(gpu, find_pool, &want_host);
	CHECK(have_host && have_vram, "pools", "host %d vram %d", have_host, have_vram);
	if (!have_host || !have_vram)
		return 1;
	if (!strcmp(mode, "copy")) {
		copies();
		dependent_copy();
	} else if (!strcmp(mode, "barrier")) {
		barriers();
	}
	s = hsa_shut_down();
	CHECK(s == HSA_STATUS_SUCCESS, "hsa_shut_down", "status %d", s);
	if (failures == 0)
		printf("ALL OK\n");
	else
		printf("FAILED %d\n", failures);
	return failures ? 1 : 0;
}
