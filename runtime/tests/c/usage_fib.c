/* Recursion through one around site: fib(5) makes 15 calls of "fib",
 * nested up to five deep. */
#include "common.h"

SITE(fib_site, PERFFLOW_POINTCUT_AROUND, "fib", "usage_fib.c", NULL);

static int fib(int n) {
    perfflow_site_enter(&fib_site);
    int r = n < 2 ? n : fib(n - 1) + fib(n - 2);
    perfflow_site_exit(&fib_site);
    return r;
}

int main(void) {
    print_identity();
    printf("fib=%d\n", fib(5));
    return 0;
}
