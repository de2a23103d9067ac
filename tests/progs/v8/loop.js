// clang-format off
// cfiprof's V8 test program: a class constructor calls work(), which calls
// fib(), for argv[2] seconds of the process's CPU time (its samples, however
// busy the machine); halfway through, fib() is given a
// fraction once, which deoptimizes its optimized code (node --trace-deopt
// shows it), and goes on with integers until V8 optimizes it again.  Run
// with --allow-natives-syntax: the constructor is never optimized, so
// nothing is inlined into it (its frame calls work's) nor it into its caller.
'use strict';

function fib(n) { // FIB
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function work(x) { // WORK
  let s = 0;
  for (let i = 0; i < 20; i++) s += fib(x);
  return s;
}

// a function's line is where its parameters' '(' is, as V8's profiler says:
// a class constructor's is the constructor's
class Runner {
  constructor(x) { // RUNNER
    this.s = work(x);
  }
}
%NeverOptimizeFunction(Runner);

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const secs = Number(process.argv[2] || 2);
const start = cpu();
let sum = 0, deopted = false;
// the clock (a getrusage syscall) read every 16 rounds: its samples are not fib's or work's
for (let i = 0; i % 16 || cpu() - start < secs; i++) {
  if (!deopted && i % 16 == 0 && cpu() - start > secs / 2) {
    sum += fib(4.5);
    deopted = true;
  }
  sum += new Runner(16).s;
}
if (sum < 0) console.log(sum);
