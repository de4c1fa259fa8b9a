/* The manual API's ends for a region and an async operation left by an
 * exception, next to the same ends taken normally. The raised operation
 * began first and ends first while the other is still open. */
#include <inttypes.h>

#include "common.h"

int main(void) {
    print_identity();
    perfflow_region_begin("load");
    perfflow_region_end_unwind("load");
    perfflow_region_begin("load");
    perfflow_region_end("load");
    uint64_t failed = perfflow_async_begin("transfer", "net");
    uint64_t done = perfflow_async_begin("transfer", "net");
    perfflow_async_end_unwind("transfer", "net", failed);
    perfflow_async_end("transfer", "net", done);
    printf("ids=%" PRIu64 ",%" PRIu64 "\n", failed, done);
    return 0;
}
