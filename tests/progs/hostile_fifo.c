/*
 * A process that attacks the profiler's loader (tests/e2e/test_hostile_files.c):
 * it copies a library into DIR, dlopen()s it and calls it in a loop, then
 * renames a FIFO over the library's path, so whoever opens the mapped path
 * (the agent without CAP_SYS_ADMIN opens /proc/PID/root/PATH) meets a FIFO no
 * one will ever write.  Every 200 ms it maps fresh executable memory, so the
 * profiler re-reads its mappings and tries again.
 * Usage: hostile_fifo LIBRARY DIR SECONDS (LIBRARY: build/progs/libdl_target.so)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spin.h"

int main(int argc, char **argv)
{
	char lib[4096], fifo[4096], cmd[8300];
	char *spin_args[] = {"hostile_fifo", "0.2", NULL};
	void *h, *x;
	int (*fn)(int, char **);
	double end;

	if (argc < 4)
		return 2;
	snprintf(lib, sizeof(lib), "%s/libvictim.so", argv[2]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", argv[2]);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", argv[1], lib);
	if (system(cmd))
		return 3;
	h = dlopen(lib, RTLD_NOW);
	fn = h ? (int (*)(int, char **))dlsym(h, "dl_entry") : NULL;
	if (!fn)
		return 4;
	if (mkfifo(fifo, 0644) || rename(fifo, lib))
		return 5;
	printf("ready\n");
	fflush(stdout);
	end = spin_now() + atof(argv[3]);
	while (spin_now() < end) {
		/* 200 ms inside the library, then new executable memory: a reload */
		fn(2, spin_args);
		x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (x != MAP_FAILED)
			munmap(x, 4096);
	}
	return 0;
}
