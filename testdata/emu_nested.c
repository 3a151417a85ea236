/* Emulator testdata: nested calls and recursion (a short traced region). */
static int leaf(int x)
{
	return x * 3 + 1;
}

static int middle(int x)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += leaf(x + i);
	return s;
}

static int outer(int x)
{
	return middle(x) + middle(x + 1);
}

static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
	int s = 0;
	for (int i = 0; i < 4; i++)
		s += outer(i);
	s += fib(7);
	return s == 0;
}
