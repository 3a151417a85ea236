// Emulator testdata: a C++ exception thrown three frames down and caught
// in main (the unwinder runs in libgcc_s / libstdc++).
#include <stdexcept>

static int level3(int x)
{
	if (x > 0)
		throw std::runtime_error("deep");
	return x;
}

static int level2(int x) { return level3(x) + 1; }
static int level1(int x) { return level2(x) + 1; }

int main(int argc, char **)
{
	int r = 0;
	try {
		r = level1(argc);
	} catch (const std::exception &) {
		r = 42;
	}
	return r == 42 ? 0 : 1;
}
