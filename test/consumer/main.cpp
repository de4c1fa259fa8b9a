// Woven through the installed CMake package or pkg-config file.
#include <perfflow.h>
#include <cstdio>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int consume(int x) { return x * 2; }

int main() {
    int total = 0;
    for (int i = 0; i < 5; i++)
        total += consume(i);
    std::printf("total %d\n", total);
    return 0;
}
