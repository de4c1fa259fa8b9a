/* Functions the weaver must leave alone, annotated all the same: a naked
 * function (no prologue, so advice would run without a frame and its
 * registers), an ifunc resolver and a helper only the resolver calls (they
 * run while the program's relocations are applied, before the runtime or
 * even thread-local storage exists). The program must run exactly as it
 * does without perfflow; only `traced` is woven. */
#include <stdio.h>

#define TRACED __attribute__((annotate("@critical_path(pointcut='around')")))

/* int naked_add(int a, int b): returns a + b. */
TRACED __attribute__((naked, noinline)) int naked_add(int a, int b) {
    __asm__("leal (%rdi,%rsi), %eax\n\tret");
}

static int add_plain(int a, int b) { return a + b; }
static int add_twice(int a, int b) { return 2 * (a + b); }

typedef int (*add_fn)(int, int);

TRACED __attribute__((noinline)) static int choose_plain(void) {
    /* Read through a volatile so the call is not folded away. */
    static volatile int plain = 1;
    return plain;
}

TRACED __attribute__((noinline, used)) static add_fn resolve_add(void) {
    return choose_plain() ? add_plain : add_twice;
}

int add(int a, int b) __attribute__((ifunc("resolve_add")));

TRACED __attribute__((noinline)) int traced(int x) { return add(x, 1) + naked_add(x, 2); }

int main(void) {
    int total = 0;
    for (int i = 0; i < 3; i++)
        total += traced(i);
    printf("total %d\n", total);
    return total == 15 ? 0 : 1;
}
