/* A producer thread hands three items to a consumer thread: its function is
 * annotated flow='out' and the consumer's flow='in' on the same scope, and a
 * relay in between is flow='inout' on a second scope. */
#include <pthread.h>

#include "common.h"

static const struct perfflow_site produce_site = {
    PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND, PERFFLOW_FLOW_OUT, __LINE__,
    "produce", "flows.c", "queue", "produce"};
static const struct perfflow_site consume_site = {
    PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND, PERFFLOW_FLOW_IN, __LINE__,
    "consume", "flows.c", "queue", "consume"};
static const struct perfflow_site relay_site = {
    PERFFLOW_SITE_ABI_VERSION, PERFFLOW_POINTCUT_AROUND, PERFFLOW_FLOW_INOUT, __LINE__,
    "relay", "flows.c", "relay", "relay"};

static void *producer(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        perfflow_site_enter(&produce_site);
        perfflow_site_exit(&produce_site);
    }
    return NULL;
}

int main(void) {
    print_identity();
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    pthread_join(t, NULL);
    for (int i = 0; i < 3; i++) {
        perfflow_site_enter(&consume_site);
        perfflow_site_enter(&relay_site);
        perfflow_site_exit(&relay_site);
        perfflow_site_exit(&consume_site);
    }
    return 0;
}
