/*
 * A process that points the profiler at a device (tests/e2e/test_hostile_opens.c),
 * run in its own user and mount namespaces (unshare -Urm, as any user may on
 * Debian): it dlopen()s DIR/libvictim.so and DIR/libdbg.so (stripped, its
 * .gnu_debuglink naming libdbg.debug), writes /tmp/perf-PID.map for its JIT
 * code, then bind-mounts DEVICE over the library, the debuglink candidate
 * DIR/libdbg.debug and the perf map, in its namespace only.  Whoever opens
 * those paths through /proc/PID/root meets the device.  Then it spins in
 * both libraries and in the JIT code until SECONDS have passed.
 * Usage: hostile_devices DEVICE DIR SECONDS
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

typedef int (*entry_fn)(int, char **);

static char *secs;

static void *spin_in(void *fn)
{
	char *args[] = {"hostile_devices", secs, NULL};

	((entry_fn)fn)(2, args);
	return NULL;
}

/* DIR/name's dl_entry, or NULL */
static entry_fn entry(const char *dir, const char *name)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	return h ? (entry_fn)dlsym(h, "dl_entry") : NULL;
}

static int over(const char *dev, const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return mount(dev, path, NULL, MS_BIND, NULL);
}

int main(int argc, char **argv)
{
	static const unsigned char loop[] = {0xeb, 0xfe}; /* jmp . */
	entry_fn victim, dbg;
	char map[64];
	unsigned char *code;
	pthread_t t;
	FILE *f;

	if (argc < 4)
		return 2;
	secs = argv[3];
	victim = entry(argv[2], "libvictim.so");
	dbg = entry(argv[2], "libdbg.so");
	if (!victim || !dbg)
		return 3;
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (code == MAP_FAILED)
		return 4;
	memcpy(code, loop, sizeof(loop));
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map, "w");
	if (!f || fprintf(f, "%lx %zx jitted_code\n", (unsigned long)code, sizeof(loop)) < 0 ||
	    fclose(f))
		return 5;
	if (over(argv[1], argv[2], "libvictim.so") || over(argv[1], argv[2], "libdbg.debug") ||
	    over(argv[1], "/tmp", map + 5)) {
		perror("mount --bind");
		return 6;
	}
	printf("ready\n");
	fflush(stdout);
	alarm((unsigned)atoi(secs));
	if (pthread_create(&t, NULL, spin_in, (void *)victim) ||
	    pthread_create(&t, NULL, spin_in, (void *)dbg))
		return 7;
	((void (*)(void))code)();
	return 0;
}
