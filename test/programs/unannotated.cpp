// A program with no annotations at all, traced only through a filter file:
// woven by the plugin with PERFFLOW_WEAVE_FILTER, or built by any compiler
// with -finstrument-functions. Compiles as C++ with clang and GCC.
#include <cstdio>

namespace physics {
struct Solver {
    __attribute__((noinline)) double step(double dt) const { return dt * 0.5; }
    __attribute__((noinline)) double helper(double x) const { return x + 1.0; }
};
} // namespace physics

__attribute__((noinline)) static int checksum(int x) { return x ^ 0x5a; }

__attribute__((noinline)) int untraced(int x) { return x * 3; }

template <typename T>
__attribute__((noinline)) T scale(T a) {
    return a * 2;
}

int main() {
    physics::Solver s;
    double d = 0.0;
    int total = 0;
    for (int i = 0; i < 3; i++) {
        d += s.step(0.25) + s.helper(d);
        total += checksum(i) + untraced(i) + scale<int>(i);
    }
    std::printf("total %d %.2f\n", total, d);
    return 0;
}
