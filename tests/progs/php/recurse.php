<?php
// A known chain for cfiprof's PHP frames: {main} -> Work::run -> recurse x5 -> leaf,
// the leaf spinning on the line marked LEAF; and a builtin (array_map) calling back
// into a closure.  With PHP_BACKTRACE set it prints both chains as PHP itself sees
// them (debug_backtrace), in cfiprof's form, root first, and exits: the oracle.
// PHP_BACKTRACE is the line of the LEAF mark, which the test finds in this file.

function leaf($n) {
	if (getenv('PHP_BACKTRACE'))
		trace_chain();
	$x = 0;
	for ($i = 0; $i < $n; $i++) { $x += $i * $i; } // LEAF
	return $x;
}

function recurse($depth, $n) {
	if ($depth == 0)
		return leaf($n);
	return recurse($depth - 1, $n);
}

// a fixed amount of work (not of time): its CPU time, hence a sampler's samples, is the
// same on a loaded machine
class Work {
	public function run($iterations) {
		$sum = 0;
		for ($k = 0; $k < $iterations; $k++) {
			$sum += recurse(4, 20000);
			$sum += array_sum(array_map(function ($v) { return leaf($v); }, [5000, 5000]));
		}
		return $sum;
	}
}

// "name (file:line)" of each frame with a file, root first: a frame's line is the
// one it called its callee from; a frame called from C (array_map's callback) has
// none for its caller, which is C code (shown by cfiprof without a file).
function trace_chain() {
	static $seen = [];
	$bt = debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS);
	array_shift($bt);
	$out = [];
	$line = (int)getenv('PHP_BACKTRACE');
	foreach ($bt as $f) {
		$name = isset($f['class']) ? $f['class'] . '::' . $f['function'] : $f['function'];
		if ($line !== null)
			$out[] = "$name (" . __FILE__ . ":$line)";
		$line = $f['line'] ?? null;
	}
	$out[] = "{main} (" . __FILE__ . ":$line)";
	$chain = implode(';', array_reverse($out));
	if (!isset($seen[$chain])) {
		$seen[$chain] = true;
		echo $chain, "\n";
	}
	if (count($seen) == 2)
		exit(0);
}

$w = new Work();
echo $w->run((int)($argv[1] ?? 4000)), "\n";
