# A known chain for cfiprof's Ruby frames: <main> -> Work.run -> recurse x5 -> leaf, the
# leaf spinning on the line marked LEAF; and a block run by a C method (Array#each,
# called from Ruby, calling back into it) calling leaf.  With RUBY_BACKTRACE set (to the
# line of the mark LEAF) it prints both chains as Ruby itself sees them
# (caller_locations), in cfiprof's form, root first, and exits: the oracle.  C methods
# are left out of it (cfiprof records Ruby-level frames).  A fixed amount of work.
SEEN = {}
C_METHODS = %w[each times].freeze

def leaf(n)
  trace_chain if ENV["RUBY_BACKTRACE"]
  x = 0
  i = 0
  while i < n
    x += i * i # LEAF
    i += 1
  end
  x
end

def recurse(depth, n)
  return leaf(n) if depth.zero?
  recurse(depth - 1, n)
end

# "label (path:line)" of each frame, root first; the leaf's line is the mark's.
def trace_chain
  locs = caller_locations(1).reject { |l| C_METHODS.include?(l.label) }
  out = locs.each_with_index.map do |l, i|
    "#{l.label} (#{l.path}:#{i.zero? ? ENV["RUBY_BACKTRACE"] : l.lineno})"
  end
  chain = out.reverse.join(";")
  puts chain unless SEEN.key?(chain)
  SEEN[chain] = true
  exit 0 if SEEN.size == 2
end

module Work
  def self.run(iterations)
    sum = 0
    iterations.times do
      sum += recurse(4, 20_000)
      [3000].each { |n| sum += leaf(n) * 0 + leaf(n) }
    end
    sum
  end
end

puts Work.run((ARGV[0] || "100").to_i)
