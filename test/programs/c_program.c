/* Plain C: static, inline and external functions, one of them recursive. */
#include <stdio.h>

#define TRACED __attribute__((annotate("@critical_path(pointcut='around')")))

TRACED __attribute__((noinline)) static int square(int x) { return x * x; }
TRACED __attribute__((noinline)) inline int twice(int x) { return 2 * x; }
extern int twice(int x);
TRACED __attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void) {
    int total = 0;
    for (int i = 0; i < 3; i++)
        total += square(i) + twice(i);
    total += fib(4);
    printf("total %d\n", total);
    return 0;
}
