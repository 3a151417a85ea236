// Emulator testdata: C++ exceptions caught in a std::thread. The thread
// starts in libstdc++'s execute_native_thread_routine, which no symbol
// names ([unknown] in libstdc++), and each caught exception ends in
// _Unwind_DeleteException's tail call to libstdc++'s unnamed cleanup
// function: that jump must not cut the stack down to the thread's unnamed
// frame. std::map's inlined code calls operator new (through its PLT stub
// into malloc) from inline contexts of its own.
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

__attribute__((noinline)) static int check(int x)
{
	if (x % 3 == 0)
		throw std::runtime_error("div3");
	return x;
}

__attribute__((noinline)) static int work(int n)
{
	std::map<int, std::string> m;
	int sum = 0;
	for (int i = 0; i < n; i++) {
		try {
			sum += check(i);
		} catch (const std::exception &) {
			sum -= 1;
		}
		m[i % 7] += "x";
	}
	return sum + (int)m.size();
}

int main()
{
	int a = 0, b = 0;
	std::thread t([&a] { a = work(4); });
	b = work(1);
	t.join();
	return a + b > 0 ? 0 : 1;
}
