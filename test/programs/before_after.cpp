// before-only and after-only pointcuts write instant events.
#include <cstdio>

__attribute__((annotate("@critical_path(pointcut='before')"))) __attribute__((noinline)) int starts(int x) { return x + 1; }
__attribute__((annotate("@critical_path(pointcut='after')"))) __attribute__((noinline)) int ends(int x) { return x * 2; }
__attribute__((annotate("@critical_path(pointcut='around')"))) __attribute__((noinline)) int both(int x) {
    return starts(x) + ends(x);
}

int main() {
    int total = 0;
    for (int i = 0; i < 3; i++)
        total += both(i);
    std::printf("total %d\n", total);
    return 0;
}
