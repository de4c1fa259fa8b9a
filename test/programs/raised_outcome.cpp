// An exception thrown by a woven function unwinds through another woven
// function and is caught by a third, which returns normally: only the two
// frames the exception left end `raised`.
#include <cstdio>
#include <stdexcept>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int fails(int x) {
    if (x == 2)
        throw std::runtime_error("two");
    return x;
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int passes(int x) {
    return fails(x) + 1;
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int handles(int x) {
    try {
        return passes(x);
    } catch (const std::runtime_error &) {
        return -1;
    }
}

int main() {
    int sum = 0;
    for (int i = 0; i < 3; i++)
        sum += handles(i);
    std::printf("sum %d\n", sum);
    return sum == 2 ? 0 : 1;
}
