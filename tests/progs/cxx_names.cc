// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C++ names for the demangling test: main -> shapes::accumulate<shapes::Circle>
 * (a function template) -> shapes::Circle::area(int) const (a const method),
 * which spins.  The folded output must show them demangled, never as _ZN...
 */
extern "C" {
#include "spin.h"
}

volatile unsigned long counter;

namespace shapes
{
struct Circle {
	double r;
	NOINLINE double area(int n) const;
};

NOINLINE double Circle::area(int n) const
{
	SPIN_LOOP(counter);
	return 3.14159 * r * r * n;
}

template <typename T> NOINLINE double accumulate(const T &shape, int n)
{
	volatile double sum = 0;

	sum += shape.area(n);
	return sum + 1;
}
} // namespace shapes

int main(int argc, char **argv)
{
	shapes::Circle circle = {(double)argc};

	spin_init(argc, argv);
	return shapes::accumulate(circle, argc) > 0 ? 0 : 0;
}
