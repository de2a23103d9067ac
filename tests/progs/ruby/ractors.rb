# Known chains for test_ruby_frames: a Ractor spinning in spin_r (its own native thread and
# execution context, running beside the main Ractor, no GVL between them), the main Ractor
# in spin_m, for ARGV[0] seconds (default 2).
Warning[:experimental] = false

def spin_r(stop)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  x
end

def spin_m(stop)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  x
end

stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || "2").to_f
r = Ractor.new(stop) { |s| spin_r(s) }
spin_m(stop)
r.take
