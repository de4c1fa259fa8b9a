/* Nested around sites: foo > bar > baz, twice. */
#include "common.h"

SITE(foo_site, PERFFLOW_POINTCUT_AROUND, "foo", "nested.c", NULL);
SITE(bar_site, PERFFLOW_POINTCUT_AROUND, "bar", "nested.c", NULL);
SITE(baz_site, PERFFLOW_POINTCUT_AROUND, "baz \"quoted\"\n", "nested.c", NULL);

static void baz(void) {
    perfflow_site_enter(&baz_site);
    perfflow_site_exit(&baz_site);
}

static void bar(void) {
    perfflow_site_enter(&bar_site);
    baz();
    perfflow_site_exit(&bar_site);
}

static void foo(void) {
    perfflow_site_enter(&foo_site);
    bar();
    perfflow_site_exit(&foo_site);
}

int main(void) {
    print_identity();
    foo();
    foo();
    return 0;
}
