// An exception thrown through annotated functions is caught by main: each
// frame it leaves still gets its end event.
#include <cstdio>
#include <stdexcept>
#include <string>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int thrower(int x) {
    if (x % 2)
        throw std::runtime_error("odd " + std::to_string(x));
    return x;
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int middle(int x) {
    std::string label = "value " + std::to_string(x); // has a destructor: an existing cleanup pad
    return thrower(x) + (int)label.size();
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int catcher(int x) {
    try {
        return middle(x);
    } catch (const std::logic_error &) { // does not match: unwinds on
        return -2;
    }
}

int main() {
    int caught = 0;
    for (int i = 0; i < 4; i++) {
        try {
            catcher(i);
        } catch (const std::runtime_error &e) {
            caught++;
        }
    }
    std::printf("caught %d\n", caught);
    return caught == 2 ? 0 : 1;
}
