/* A malformed annotation: a typo in the pointcut. The function stays
 * unwoven, with a file:line warning (an error under PERFFLOW_WEAVE_STRICT=1). */
#include <stdio.h>

__attribute__((annotate("@critical_path(pointcut='arround')"))) int typo(int x) { return x + 1; }

__attribute__((annotate("@critical_path()"))) int fine(int x) { return x - 1; }

int main(void) {
    printf("%d\n", typo(1) + fine(1));
    return 0;
}
