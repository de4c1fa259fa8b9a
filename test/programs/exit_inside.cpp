// exit() called inside an annotated function, two annotated frames deep.
#include <cstdio>
#include <cstdlib>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) void finish(int code) {
    std::printf("finishing with %d\n", code);
    std::exit(code);
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) void run(int n) {
    for (int i = 0; i < n; i++)
        std::printf("step %d\n", i);
    finish(0);
}

int main() {
    run(3);
    return 1; // not reached
}
