/* One thread records EVENTS events (default 2000000) as enter/exit pairs,
 * then prints its peak resident set size (VmHWM, KiB). */
#include <stdlib.h>
#include <string.h>

#include "common.h"

SITE(call_site, PERFFLOW_POINTCUT_AROUND, "m", "m.c", NULL);

int main(int argc, char **argv) {
    long events = argc > 1 ? atol(argv[1]) : 2000000;
    print_identity();
    for (long i = 0; i < events / 2; i++) {
        perfflow_site_enter(&call_site);
        perfflow_site_exit(&call_site);
    }
    long hwm_kib = vm_hwm_kib();
    printf("vmhwm_kib=%ld\n", hwm_kib);
    return 0;
}
