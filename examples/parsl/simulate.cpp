// One task of the Parsl workflow in parsl_workflow.py: a small simulation
// woven by the perfflow plugin. Its top-level function receives the flow the
// driver sends to each task: the driver starts it with
// PERFFLOW_FLOW_PREFIX=task<i>, so its arrival on scope 'simulate' links as
// task<i>/simulate, the scope of the driver's departure for that task.
//
//   clang++-19 -O1 -fpass-plugin=<prefix>/lib/libWeavePass.so simulate.cpp \
//       -L<prefix>/lib -Wl,-rpath,<prefix>/lib -lperfflow_runtime -o simulate
//   ./simulate 4        # 4 relaxation sweeps
#include <cstdio>
#include <cstdlib>
#include <vector>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) double
relax(std::vector<double> &grid) {
    double change = 0.0;
    for (std::size_t i = 1; i + 1 < grid.size(); ++i) {
        double next = 0.5 * (grid[i - 1] + grid[i + 1]);
        change += next > grid[i] ? next - grid[i] : grid[i] - next;
        grid[i] = next;
    }
    return change;
}

__attribute__((annotate("@critical_path(scope='simulate', flow='in')"))) __attribute__((noinline))
double simulate(int sweeps) {
    std::vector<double> grid(4096, 0.0);
    grid.back() = 1.0;
    double change = 0.0;
    for (int s = 0; s < sweeps; ++s)
        change = relax(grid);
    return change;
}

int main(int argc, char **argv) {
    int sweeps = argc > 1 ? std::atoi(argv[1]) : 4;
    std::printf("%g\n", simulate(sweeps));
    return 0;
}
