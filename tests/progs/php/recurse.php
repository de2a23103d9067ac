<?php
// A known chain for cfiprof's PHP frames: main -> Work::run -> recurse x4 -> leaf,
// the leaf spinning on the line marked LEAF; and a builtin (array_map) calling back.
function leaf($n) {
	$x = 0;
	for ($i = 0; $i < $n; $i++) {
		$x += $i * $i; // LEAF
	}
	return $x;
}

function recurse($depth, $n) {
	if ($depth == 0)
		return leaf($n);
	return recurse($depth - 1, $n);
}

class Work {
	public function run($seconds) {
		$end = microtime(true) + $seconds;
		$sum = 0;
		while (microtime(true) < $end) {
			$sum += recurse(4, 20000);
			$sum += array_sum(array_map(function ($v) { return leaf($v); }, [3000, 3000]));
		}
		return $sum;
	}
}

if (getenv('PHP_BACKTRACE')) {
	function show() { debug_print_backtrace(); }
	show();
}
$w = new Work();
echo $w->run((float)($argv[1] ?? 2)), "\n";
