// main, interpreted (it runs once), loads a JNI library whose JNI_OnLoad dlopen()s a
// library with tables slow to build and spins in it at once (tests/progs/java/defer_jni.c):
// samples taken before those tables exist are deferred, and their Java frames past the
// native ones are named from the stack copy (test_hotspot_frames:deferred).
// Usage: DEFER_JNI_BIG=progs/libdefer_big.so java -cp DIR DeferJni progs/libdefer_jni.so
public class DeferJni {
	public static void main(String[] a) throws InterruptedException
	{
		System.load(a[0]); // LOAD-CALL
		// alive past the load its spin asks for, on a loaded host too: a JVM gone
		// before any load read its layout leaves nothing to name its frames by
		Thread.sleep(1000);
	}
}
