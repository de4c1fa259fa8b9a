// A function with several returns: every way out closes the span.
#include <cstdio>
#include <cstdlib>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int classify(int x) {
    if (x < 0)
        return -1;
    if (x == 0)
        return 0;
    for (int i = 2; i < x; i++)
        if (x % i == 0)
            return 2;
    switch (x % 4) {
    case 1:
        return 3;
    case 3:
        return 4;
    default:
        return 5;
    }
}

int main(int argc, char **argv) {
    int seed = argc > 5 ? std::atoi(argv[1]) : 0;
    int sum = 0;
    for (int x = -2 + seed; x < 12 + seed; x++)
        sum += classify(x);
    std::printf("sum %d\n", sum);
    return 0;
}
