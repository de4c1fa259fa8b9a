// Methods annotated on their in-class declaration only, defined out of line,
// plus an inline member and a static member.
#include <cstdio>

class SmokeTest {
  public:
    __attribute__((annotate("@critical_path(pointcut='around')"))) int foo(int x);
    __attribute__((annotate("@critical_path(pointcut='around')"))) __attribute__((noinline)) int inline_member(int x) {
        return x + 7;
    }
    __attribute__((annotate("@critical_path(pointcut='around')"))) static int counter(int x);
};

__attribute__((noinline)) int SmokeTest::foo(int x) { return inline_member(x) * 2; }
__attribute__((noinline)) int SmokeTest::counter(int x) { return x - 1; }

int main() {
    SmokeTest t;
    int total = 0;
    for (int i = 0; i < 2; i++)
        total += t.foo(i) + SmokeTest::counter(i);
    std::printf("total %d\n", total);
    return 0;
}
