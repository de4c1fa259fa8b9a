// foo -> bar -> bas, four times: 24 B/E events, properly nested.
#include <cstdio>

__attribute__((annotate("@critical_path(pointcut='around')"))) __attribute__((noinline)) int bas(int x) {
    return x * 3 + 1;
}

__attribute__((annotate("@critical_path(pointcut='around')"))) __attribute__((noinline)) int bar(int x) {
    return bas(x) + 2;
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int foo(int x) {
    return bar(x) * 2;
}

int main() {
    int total = 0;
    for (int i = 0; i < 4; i++)
        total += foo(i);
    std::printf("total %d\n", total);
    return 0;
}
