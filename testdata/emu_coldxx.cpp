// Emulator testdata (C++, -O2): a C++ function's .cold part, named
// "app::step(int) [clone .cold]" (mangled _ZN3app4stepEi.cold), is the
// function's own code, as in C (emu_cold.c): the frame stays app::step(int)
// across the jumps into its cold part and back, and the cold part's calls
// (note) are its children. One exception goes through step's cleanup,
// a landing pad in the cold part: the unwinder's jump there goes back to
// step's frame. A virtual destructor's deleting (D0) and complete (D1/D2)
// variants each have a .cold part, both "Shape::~Shape() [clone .cold]":
// each goes to its own variant (_ZN5ShapeD0Ev.cold to D0).
#include <stdexcept>
#include <string>

volatile int sink;

struct Guard {
	int v;
	~Guard() { sink += v; }
};

__attribute__((noinline, cold)) void note(int x)
{
	sink += x;
}

__attribute__((noinline)) int risky(int x)
{
	if (x == 17)
		throw std::runtime_error("17");
	return x * 2;
}

namespace app {
__attribute__((noinline)) int step(int x)
{
	Guard g{x};
	int r = risky(x);

	if (x % 4 == 3) {
		note(x);
		r += sink;
	}
	return r;
}
}

struct Shape {
	virtual ~Shape();
	int v = 0;
	std::string s;
};

Shape::~Shape()
{
	if (v % 7 == 0) {
		for (int i = 0; i < v; i++)
			s += 'x';
		note(v);
	}
}

int main()
{
	int s = 0;

	for (int i = 0; i < 15; i++) {
		Shape *p = new Shape;

		p->v = i;
		delete p;
	}

	for (int i = 0; i < 20; i++) {
		try {
			s += app::step(i);
		} catch (const std::exception &) {
			s--;
		}
	}
	return s == 12345;
}
