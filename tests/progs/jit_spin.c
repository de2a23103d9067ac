/*
 * A pretend JIT (tests/e2e/test_hostile_files.c): copies "1: jmp 1b" into
 * anonymous executable memory, describes it in /tmp/perf-PID.map (unless the
 * map already exists: then whatever is there stays) and spins there.
 * Usage: jit_spin SECONDS NAME
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const unsigned char loop[] = {0xeb, 0xfe}; /* jmp . */
	char path[64];
	void (*fn)(void);
	unsigned char *code;
	FILE *f;

	if (argc < 3)
		return 2;
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (code == MAP_FAILED)
		return 3;
	memcpy(code, loop, sizeof(loop));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (access(path, F_OK)) {
		f = fopen(path, "w");
		if (!f)
			return 4;
		fprintf(f, "%lx %zx %s\n", (unsigned long)code, sizeof(loop), argv[2]);
		fclose(f);
	}
	printf("%lx\n", (unsigned long)code);
	fflush(stdout);
	alarm((unsigned)atoi(argv[1]));
	fn = (void (*)(void))code;
	fn();
	return 0;
}
