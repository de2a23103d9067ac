// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writes this process's vDSO, the whole ELF image the kernel maps, to
 * stdout: the arm64 guest prints it so that the host's call-site check
 * (tests/lib/callsites.h) can read the signal trampoline's instructions,
 * which live only in the kernel (tests/e2e/test_arm64_guest.c).
 */
#include <elf.h>
#include <stdio.h>
#include <sys/auxv.h>

int main(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	size_t size;

	if (!eh)
		return 1;
	/* the section headers come last in the image */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return fwrite(eh, 1, size, stdout) == size ? 0 : 1;
}
