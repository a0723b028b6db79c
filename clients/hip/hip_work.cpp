// kfd-hip-work: HIP 7.2.4 (Debian's libamdhip64 on ROCr 7.2.4) finishing
// work on the kfd-sim simulator. Built with hipcc by `cargo xtask hip`.
//
//   kfd-hip-work data CODE_OBJECT
//       hipMalloc, hipHostMalloc, hipMemcpyAsync host->device->host of
//       1 MiB and 64 MiB on a stream with hipStreamSynchronize (every byte
//       compared), hipEventRecord / hipEventSynchronize around a copy with
//       hipEventElapsedTime > 0, and hipModuleLoad + hipModuleGetFunction
//       of our code object.
//   kfd-hip-work launch CODE_OBJECT
//       launches the code object's kernel over 1000 work-items in four
//       workgroups of 256 and checks every word it wrote (and the ones it
//       must not write) after copying them back.
//
// Prints "OK <check>" or "FAIL <check>: <why>" per check and "ALL OK" at
// the end; exit status 0 only when every check passed.
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static int failures;

static void check(bool ok, const char *name, const char *why)
{
	if (ok) {
		std::printf("OK %s\n", name);
	} else {
		std::printf("FAIL %s: %s\n", name, why);
		failures++;
	}
	std::fflush(stdout);
}

// Checks a HIP status; false (and a FAIL line) when it is an error.
static bool hip_ok(hipError_t e, const char *name)
{
	if (e == hipSuccess)
		return true;
	char why[256];
	std::snprintf(why, sizeof why, "%s (%s)", hipGetErrorName(e), hipGetErrorString(e));
	check(false, name, why);
	return false;
}

static uint8_t pattern(size_t i, unsigned seed)
{
	return static_cast<uint8_t>(i * 131 + (i >> 11) * 7 + seed);
}

// Host -> device -> host of `size` bytes on `stream`, then every byte
// compared.
static void round_trip(hipStream_t stream, uint8_t *host, uint8_t *back, void *dev, size_t size,
		       unsigned seed)
{
	char name[64];
	for (size_t i = 0; i < size; i++)
		host[i] = pattern(i, seed);
	std::memset(back, 0, size);
	std::snprintf(name, sizeof name, "memcpy_async_%zu", size);
	if (!hip_ok(hipMemcpyAsync(dev, host, size, hipMemcpyHostToDevice, stream), name) ||
	    !hip_ok(hipMemcpyAsync(back, dev, size, hipMemcpyDeviceToHost, stream), name) ||
	    !hip_ok(hipStreamSynchronize(stream), name))
		return;
	check(true, name, "");
	size_t bad = 0;
	for (size_t i = 0; i < size; i++)
		bad += back[i] != pattern(i, seed);
	char why[64];
	std::snprintf(why, sizeof why, "%zu of %zu bytes differ", bad, size);
	std::snprintf(name, sizeof name, "bytes_%zu", size);
	check(bad == 0, name, why);
}

static void events(hipStream_t stream, uint8_t *host, void *dev, size_t size)
{
	hipEvent_t start, stop;
	if (!hip_ok(hipEventCreate(&start), "event_create") || !hip_ok(hipEventCreate(&stop), "event_create"))
		return;
	float ms = 0;
	if (hip_ok(hipEventRecord(start, stream), "event_record") &&
	    hip_ok(hipMemcpyAsync(dev, host, size, hipMemcpyHostToDevice, stream), "event_copy") &&
	    hip_ok(hipEventRecord(stop, stream), "event_record") &&
	    hip_ok(hipEventSynchronize(stop), "event_synchronize") &&
	    hip_ok(hipEventElapsedTime(&ms, start, stop), "event_elapsed_time")) {
		char why[64];
		std::snprintf(why, sizeof why, "%f ms", ms);
		check(ms > 0, "event_elapsed_time_positive", why);
		check(hipEventQuery(stop) == hipSuccess, "event_query_done", "not complete");
	}
	hip_ok(hipEventDestroy(start), "event_destroy");
	hip_ok(hipEventDestroy(stop), "event_destroy");
}

static bool load(const char *path, hipModule_t *module, hipFunction_t *fn)
{
	if (!hip_ok(hipModuleLoad(module, path), "module_load"))
		return false;
	check(true, "module_load", "");
	if (!hip_ok(hipModuleGetFunction(fn, *module, "kfd_fill"), "module_get_function"))
		return false;
	check(true, "module_get_function", "");
	return true;
}

static void data(const char *code_object)
{
	hipDeviceProp_t prop;
	if (!hip_ok(hipSetDevice(0), "set_device") || !hip_ok(hipGetDeviceProperties(&prop, 0), "properties"))
		return;
	std::printf("device 0: %s %s\n", prop.name, prop.gcnArchName);
	const size_t max = 64u << 20;
	void *dev = nullptr;
	uint8_t *host = nullptr, *back = nullptr;
	if (!hip_ok(hipMalloc(&dev, max), "malloc") ||
	    !hip_ok(hipHostMalloc(reinterpret_cast<void **>(&host), max, hipHostMallocDefault), "host_malloc") ||
	    !hip_ok(hipHostMalloc(reinterpret_cast<void **>(&back), max, hipHostMallocDefault), "host_malloc"))
		return;
	check(true, "malloc_and_host_malloc", "");
	hipStream_t stream;
	if (!hip_ok(hipStreamCreate(&stream), "stream_create"))
		return;
	round_trip(stream, host, back, dev, 1u << 20, 1);
	round_trip(stream, host, back, dev, max, 2);
	events(stream, host, dev, 1u << 20);
	hipModule_t module;
	hipFunction_t fn;
	if (load(code_object, &module, &fn))
		hip_ok(hipModuleUnload(module), "module_unload");
	hip_ok(hipStreamDestroy(stream), "stream_destroy");
	hip_ok(hipHostFree(host), "host_free");
	hip_ok(hipHostFree(back), "host_free");
	hip_ok(hipFree(dev), "free");
}

static void launch(const char *code_object)
{
	hipModule_t module;
	hipFunction_t fn;
	void *out = nullptr;
	const unsigned n = 1000, slots = 1024, seed = 7;
	if (!hip_ok(hipSetDevice(0), "set_device") || !hip_ok(hipMalloc(&out, slots * 4), "malloc") ||
	    !hip_ok(hipMemset(out, 0xab, slots * 4), "memset") || !load(code_object, &module, &fn))
		return;
	struct {
		void *out;
		unsigned seed, n;
	} args = {out, seed, n};
	size_t size = sizeof args;
	void *config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  HIP_LAUNCH_PARAM_END};
	std::printf("launching kfd_fill\n");
	std::fflush(stdout);
	// Four workgroups of 256 for 1000 items: the last 24 work-items of the
	// grid take the `i < n` branch off and must not write.
	hipError_t e = hipModuleLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, config);
	if (e == hipSuccess)
		e = hipDeviceSynchronize();
	if (!hip_ok(e, "launch_runs"))
		return;
	check(true, "launch_runs", "");
	std::vector<unsigned> host(slots);
	if (!hip_ok(hipMemcpy(host.data(), out, slots * 4, hipMemcpyDeviceToHost), "copy_back"))
		return;
	unsigned bad = 0;
	for (unsigned i = 0; i < slots; i++)
		bad += host[i] != (i < n ? i + seed : 0xababababu);
	char why[64];
	std::snprintf(why, sizeof why, "%u of %u words wrong", bad, slots);
	check(bad == 0, "launch_results", why);
	hip_ok(hipModuleUnload(module), "module_unload");
	hip_ok(hipFree(out), "free");
}

int main(int argc, char **argv)
{
	if (argc != 3 || (std::strcmp(argv[1], "data") && std::strcmp(argv[1], "launch"))) {
		std::fprintf(stderr, "usage: kfd-hip-work data|launch CODE_OBJECT\n");
		return 2;
	}
	if (!std::strcmp(argv[1], "data"))
		data(argv[2]);
	else
		launch(argv[2]);
	if (failures == 0)
		std::printf("ALL OK\n");
	return failures ? 1 : 0;
}
