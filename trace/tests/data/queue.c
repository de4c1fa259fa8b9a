/* The program that wrote the traces beside it: `queue produce` hands five
 * items on the flow scope "queue" (flow='out'), `queue consume` takes them
 * (flow='in'); run one after the other, the k-th departure pairs with the
 * k-th arrival across the two processes. Rebuild the traces with
 *   cc -I runtime/include queue.c target/debug/libperfflow_runtime.a -lpthread -ldl -lm -o queue
 *   ./queue produce && ./queue consume   # then rename the two perfflow.array.*.pfw
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perfflow.h"

static void *produce_copy, *consume_copy;
static const struct perfflow_site produce_site = {
    PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND, PERFFLOW_FLOW_OUT, __LINE__,
    "produce", "queue.c", "queue", "produce", &produce_copy};
static const struct perfflow_site consume_site = {
    PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND, PERFFLOW_FLOW_IN, __LINE__,
    "consume", "queue.c", "queue", "consume", &consume_copy};

int main(int argc, char **argv) {
    const struct perfflow_site *site =
        argc > 1 && strcmp(argv[1], "consume") == 0 ? &consume_site : &produce_site;
    for (int k = 0; k < 5; k++) {
        perfflow_site_enter(site);
        usleep(1000);
        perfflow_site_exit(site);
        usleep(2000);
    }
    return 0;
}
