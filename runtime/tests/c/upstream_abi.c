/* PerfFlowAspect's string ABI and the manual region API. */
#include <string.h>

#include "common.h"

int main(void) {
    print_identity();
    for (int i = 0; i < 3; i++) {
        perfflow_weave_before(0, "smoketest.cpp", "_ZN9SmokeTest3fooEv", "NA", "NA", "around");
        perfflow_weave_before(0, "smoketest.cpp", "bar", "NA", "NA", "before");
        perfflow_weave_after(0, "smoketest.cpp", "_ZN9SmokeTest3fooEv", "NA", "NA", "around");
    }
    perfflow_weave_before(1, "smoketest.cpp", "_Z5fetchv", "net", "NA", "around");
    perfflow_weave_after(1, "smoketest.cpp", "_Z5fetchv", "net", "NA", "around");

    /* A region name built at run time in a reused buffer. */
    char name[32];
    for (int i = 0; i < 2; i++) {
        strcpy(name, i == 0 ? "phase-one" : "phase-two");
        perfflow_region_begin(name);
        perfflow_region_begin("inner region");
        perfflow_region_end("inner region");
        perfflow_region_end(name);
    }
    return 0;
}
