#!/bin/sh
# Assembly of a shared object whose CFI holds N distinct rules: N functions,
# each moving the CFA to rsp + BASE + i after its first byte.  For the quota
# tests (tests/e2e/test_hostile.c): tens of thousands of rules per object.
# Usage: gen_cfi_rules.sh N BASE > out.s
awk -v n="$1" -v base="$2" 'BEGIN {
	print "\t.text"
	for (i = 0; i < n; i++) {
		printf "\t.globl f%d\n\t.type f%d, @function\nf%d:\n\t.cfi_startproc\n\tnop\n", i, i, i
		printf "\t.cfi_def_cfa_offset %d\n\tnop\n\tret\n\t.cfi_endproc\n", base + i
	}
	print "\t.section .note.GNU-stack,\"\",@progbits"
}'
