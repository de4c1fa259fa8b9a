// A woven program that runs long enough for the metric sampler to take
// several samples: two threads spin and allocate inside annotated functions.
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) double spin(int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    double x = 0;
    while (std::chrono::steady_clock::now() < end)
        x += 1e-9;
    return x;
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) size_t grow(size_t mib) {
    std::vector<char> block(mib << 20, 1);
    spin(40); // hold it long enough for a few samples
    return block.size() + (size_t)block[mib];
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) void phase(int i) {
    spin(60);
    grow(16 + 16 * (i % 2));
}

int main() {
    std::thread worker([] { for (int i = 0; i < 4; i++) phase(i); });
    for (int i = 0; i < 4; i++)
        phase(i + 1);
    worker.join();
    std::printf("done\n");
    return 0;
}
