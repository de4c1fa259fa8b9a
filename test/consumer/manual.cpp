// Traced through the manual API only: builds with any compiler against
// perfflow::runtime or the perfflow-runtime pkg-config file.
#include <perfflow.h>
#include <cstdio>

static int consume(int x) {
    perfflow_region_begin("consume");
    int r = x * 2;
    perfflow_region_end("consume");
    return r;
}

int main() {
    int total = 0;
    for (int i = 0; i < 5; i++)
        total += consume(i);
    std::printf("total %d\n", total);
    return 0;
}
