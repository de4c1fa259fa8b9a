/* Recursion through one site: fib(6) enters and exits "fib" nested up to six
 * levels deep, 25 calls in all. */
#include "common.h"

SITE(fib_site, PERFFLOW_POINTCUT_AROUND, "fib", "e2e_fib.c", NULL);

static int fib(int n) {
    perfflow_site_enter(&fib_site);
    int r = n < 2 ? n : fib(n - 1) + fib(n - 2);
    perfflow_site_exit(&fib_site);
    return r;
}

int main(void) {
    print_identity();
    printf("fib=%d\n", fib(6));
    return 0;
}
