// symtest_ns: C++ names for the symbolizer fixture: namespaces, a class
// method, a template instantiated twice.
#include <vector>

namespace outer {
namespace inner {
template <typename T> T twice(T v)
{
	return v + v;
}

class Counter {
public:
	int bump(int by);
private:
	int n_ = 0;
};

int Counter::bump(int by)
{
	n_ += by;
	return n_;
}
} // namespace inner
} // namespace outer

extern "C" int symtest_cpp_entry(int n)
{
	outer::inner::Counter c;
	std::vector<int> v(3, n);
	double d = outer::inner::twice<double>(1.5);

	return c.bump(outer::inner::twice<int>(n)) + (int)d + (int)v.size();
}
