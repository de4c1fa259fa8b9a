/* The program's own malloc is a traced function (as the plugin weaves an
 * annotated one: a site enter and exit around its body). The runtime
 * allocates when it meets a site the first time, from inside that malloc:
 * those events are dropped and counted, and the program runs as it would
 * untraced. Prints "sum=<n>". */
#include <stddef.h>
#include <string.h>

#include "common.h"

SITE(malloc_site, PERFFLOW_POINTCUT_AROUND, "malloc", "woven_allocator.c", NULL);
SITE(work_site, PERFFLOW_POINTCUT_AROUND, "work", "woven_allocator.c", NULL);

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n) {
    perfflow_site_enter(&malloc_site);
    void *p = __libc_malloc(n);
    perfflow_site_exit(&malloc_site);
    return p;
}

void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

/* Through a volatile pointer: the compiler may not drop a malloc/free pair. */
static void *(*volatile allocate)(size_t) = malloc;

int main(void) {
    print_identity();
    long sum = 0;
    for (int i = 0; i < 1000; i++) {
        perfflow_site_enter(&work_site);
        char *s = allocate(64);
        memset(s, i & 0x7f, 64);
        sum += s[3];
        free(s);
        perfflow_site_exit(&work_site);
    }
    printf("sum=%ld\n", sum);
    return 0;
}
