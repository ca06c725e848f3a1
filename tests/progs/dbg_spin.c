// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* dbg_spin: spins forever in two static functions, spin_inner under
 * spin_outer, named only by the symbol table (.symtab), not the dynamic
 * one. The debuginfod test strips it and serves its debug file. */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin_inner(void)
{
	unsigned long i;

	for (i = 0; i < 100000; i++)
		sink += i * 7;
}

__attribute__((noinline)) static void spin_outer(void)
{
	spin_inner();
	sink++;	/* not a tail call */
}

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		spin_outer();
}
