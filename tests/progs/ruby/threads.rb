# Known chains for test_ruby_frames: a thread spinning in spin_a, the main thread in spin_b,
# for ARGV[0] seconds (default 2; "1.5c": of the process's CPU time, so a test knows how
# many samples to expect however busy the machine).
def spin_a(clock, stop)
  x = 0
  x += 1 while Process.clock_gettime(clock) < stop
  x
end

def spin_b(clock, stop)
  x = 0
  x += 1 while Process.clock_gettime(clock) < stop
  x
end

arg = ARGV[0] || "2"
clock = arg.end_with?("c") ? Process::CLOCK_PROCESS_CPUTIME_ID : Process::CLOCK_MONOTONIC
stop = Process.clock_gettime(clock) + arg.to_f
t = Thread.new { spin_a(clock, stop) }
# its native name (a thread's comm), "threads.rb:LINE" by default: the process's, as the test reads
t.name = "ruby"
spin_b(clock, stop)
t.join
