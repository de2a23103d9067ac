// clang-format off
// cfiprof's V8 test program for a file's code without mapping keys: TypedArray's
// set copies with libc's memcpy (frameless), called straight from the builtin's
// own JavaScript frame, for argv[2] seconds of the process's CPU time.
'use strict';

const src = new Uint8Array(1 << 20), dst = new Uint8Array(1 << 20);

function copy(n) {
  for (let i = 0; i < n; i++) dst.set(src);
}

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const secs = Number(process.argv[2] || 2);
const start = cpu();
while (cpu() - start < secs) copy(16);
