# Known chains for test_ruby_frames: a Ractor spinning in spin_r (its own native thread and
# execution context, running beside the main Ractor, no GVL between them), the main Ractor
# in spin_m, for ARGV[0] seconds (default 2; "3c": of the process's CPU time).
Warning[:experimental] = false

def spin_r(clock, stop)
  x = 0
  x += 1 while Process.clock_gettime(clock) < stop
  x
end

def spin_m(clock, stop)
  x = 0
  x += 1 while Process.clock_gettime(clock) < stop
  x
end

arg = ARGV[0] || "2"
clock = arg.end_with?("c") ? Process::CLOCK_PROCESS_CPUTIME_ID : Process::CLOCK_MONOTONIC
stop = Process.clock_gettime(clock) + arg.to_f
r = Ractor.new(clock, stop) { |c, s| spin_r(c, s) }
spin_m(clock, stop)
r.take
