/* Emulator testdata: calls through function pointers (indirect calls, TIP). */
typedef int (*op_fn)(int, int);

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

static int apply(op_fn f, int a, int b)
{
	return f(a, b);
}

static op_fn table[] = { add, sub, mul };

int main(void)
{
	int acc = 1;
	for (int i = 0; i < 9; i++)
		acc = apply(table[i % 3], acc, i + 1);
	volatile op_fn direct = mul;
	acc = direct(acc, 2);
	return acc == 12345;
}
