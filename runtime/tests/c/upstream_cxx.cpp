// PerfFlowAspect's string ABI from a C++ program: linkage names the built-in
// reader does not handle (templates, operators) are demangled through the
// C++ runtime's __cxa_demangle.
#include <string>

#include "common.h"

int main() {
    print_identity();
    std::string module = "tmpl.cpp"; // keeps libstdc++ linked in
    const char *names[] = {"_ZN2ns4workIiEEvT_", "_ZN3FooclEi"};
    for (const char *name : names) {
        perfflow_weave_before(0, module.c_str(), name, "NA", "NA", "around");
        perfflow_weave_after(0, module.c_str(), name, "NA", "NA", "around");
    }
    return 0;
}
