// main, interpreted (it runs once), loads a JNI library whose JNI_OnLoad dlopen()s a
// library with tables slow to build and spins in it at once (tests/progs/java/defer_jni.c):
// samples taken before those tables exist are deferred, and their Java frames past the
// native ones are named from the stack copy (test_hotspot_frames:deferred).
// With a second argument (DEFER_JNI_AT_CALL set: JNI_OnLoad does not spin), the spin is
// in a native method that a compiled method calls, and the JVM's list of its compiled
// code (jcmd Compiler.codelist) goes to that file (test_hotspot_frames:deferred_compiled).
// Usage: DEFER_JNI_BIG=progs/libdefer_big.so java -cp DIR DeferJni progs/libdefer_jni.so
import java.io.File;

public class DeferJni {
	// spins in libdefer_big.so when go is not 0, else returns
	static native int spin(int go);

	// compiled (run with -XX:-TieredCompilation -XX:-BackgroundCompilation) before it spins
	static int hot(int go)
	{
		return spin(go) + 1; // HOT-CALL
	}

	public static void main(String[] a) throws Exception
	{
		System.load(a[0]); // LOAD-CALL
		if (a.length > 1) {
			int n = 0;
			for (int i = 0; i < 20000; i++)
				n += hot(0);
			// a walk of the code cache sees hot's code before the sample
			Thread.sleep(1500);
			n += hot(1);
			String pid = Long.toString(ProcessHandle.current().pid());
			Process p = new ProcessBuilder("jcmd", pid, "Compiler.codelist")
					.redirectOutput(new File(a[1]))
					.redirectErrorStream(true)
					.start();
			System.out.println(n + " " + p.waitFor());
		}
		// alive past the load its spin asks for, on a loaded host too: a JVM gone
		// before any load read its layout leaves nothing to name its frames by
		Thread.sleep(1000);
	}
}
