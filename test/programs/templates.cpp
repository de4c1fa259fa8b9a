// Templates, a lambda-free functor, static and inline functions, and an
// annotation that belongs to another tool (not woven).
#include <cstdio>

template <typename T>
__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) T accumulate(T a, T b) {
    return a + b;
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) static int helper(int x) { return x ^ 5; }

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) inline int inlined(int x) { return x | 1; }

__attribute__((annotate("other_tool: hot"))) __attribute__((noinline)) int foreign(int x) { return x - 3; }

namespace physics {
struct Solver {
    __attribute__((annotate("@perfflowaspect.aspect.critical_path(pointcut='around')"))) __attribute__((noinline)) double
    step(double dt) const {
        return dt * 0.5;
    }
};
} // namespace physics

int main() {
    physics::Solver s;
    double d = s.step(0.25);
    int total = accumulate<int>(1, 2) + (int)accumulate<double>(1.5, d) + helper(3) + inlined(4) + foreign(9);
    std::printf("total %d\n", total);
    return 0;
}
