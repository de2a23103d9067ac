// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// tests/e2e/test_hotspot_frames.c: a recursive fib and a sorting loop for
// argv[0] seconds of this thread's CPU time, then the JVM's own list of its
// compiled code (jcmd Compiler.codelist) into argv[1], the oracle, if given.
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

public class Busy
{
	static int fib(int n)
	{
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static long work(long cpuNanos)
	{
		ThreadMXBean t = ManagementFactory.getThreadMXBean();
		long end = t.getCurrentThreadCpuTime() + cpuNanos, acc = 0;
		while (t.getCurrentThreadCpuTime() < end) {
			// the clock read is a system call: once per 16 rounds
			for (int k = 0; k < 16; k++) {
				acc += fib(20);
				List<String> l = new ArrayList<>();
				for (int i = 0; i < 200; i++)
					l.add(Integer.toString(i * 7));
				Collections.sort(l);
				for (String s : l)
					acc += s.length();
			}
		}
		return acc;
	}

	public static void main(String[] a) throws Exception
	{
		long acc = work(Long.parseLong(a[0]) * 1000000000L); // WORK-CALL
		if (a.length < 2) {
			System.out.println(acc);
			return;
		}
		String pid = Long.toString(ProcessHandle.current().pid());
		Process p = new ProcessBuilder("jcmd", pid, "Compiler.codelist")
				.redirectOutput(new File(a[1]))
				.redirectErrorStream(true)
				.start();
		System.out.println(acc + " " + p.waitFor());
	}
}
