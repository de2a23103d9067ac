# Known chains for test_ruby_frames: a thread spinning in spin_a, the main thread in spin_b,
# for ARGV[0] seconds (default 2).
def spin_a(stop)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  x
end

def spin_b(stop)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  x
end

stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || "2").to_f
t = Thread.new { spin_a(stop) }
# its native name (a thread's comm), "threads.rb:16" by default: the process's, as the test reads
t.name = "ruby"
spin_b(stop)
t.join
