// omp_kernel.cpp - a compute kernel on every core with woven functions at
// LULESH's density, to measure what tracing costs a loaded node.
//
// bench/omp_kernel.sh compiles this file twice with clang and OpenMP: once
// through the perfflow plugin (the annotated functions below get an enter
// and an exit) and once plain. The kernel is a 2-D heat-and-advection step
// on an N x N grid with a cloud of tracer particles carried by the flow:
//
//   per time step (all loops `omp parallel for` over every core)
//     diffuse_row        5-point stencil with an advection term, one row
//     row_residual       largest change of one row (reduction over rows)
//     gradient_row       central-difference gradient of one row
//     push_particles     one block of particles: bilinear interpolation of
//                        the gradient, a velocity and position update,
//                        reflection at the walls
//     sample_particles   one block of particles: the temperature where each
//                        sits, added to the heat it has collected
//   apply_boundaries     the fixed-temperature walls (serial, once a step)
//   time_step            the whole step (serial caller, once a step)
//
// Each woven row or block function does about a microsecond of work, so a
// 2-core run emits millions of events per second, as LULESH (-s 25, 19
// annotated functions, about 3 million per second) does: 2 million with
// N = 1024 and blocks of 32 particles on the machine of docs/benchmarks.md.
// The work per call is set by N and the block size; the rate follows.
//
// Usage: omp_kernel N STEPS PARTICLES
//
// Prints one line of key=value pairs:
//   kernel_s     wall time of the time steps (omp_get_wtime)
//   calls        woven calls made (enter + exit: two events each)
//   checksum     sum of the final grid and particle positions, the same in
//                the plain and woven builds (it proves both did the work)
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define WOVEN __attribute__((annotate("@critical_path(pointcut='around')"), noinline))

namespace {

constexpr int kBlock = 32; // particles per push / sample call
constexpr double kDiffusion = 0.2;
constexpr double kAdvection = 0.05;
constexpr double kDrag = 0.9;
constexpr double kCollect = 1e-3;

struct Particles {
    std::vector<double> x, y, vx, vy, heat;
};

} // namespace

// New temperatures of row i (1..n-2) from the old grid: diffusion plus an
// advection term along a fixed swirl.
WOVEN void diffuse_row(const double *in, double *out, int n, int i) {
    const double *up = in + (i - 1) * n, *row = in + i * n, *down = in + (i + 1) * n;
    double *dst = out + i * n;
    const double wy = kAdvection * std::sin(0.01 * i);
    for (int j = 1; j < n - 1; j++) {
        const double lap = up[j] + down[j] + row[j - 1] + row[j + 1] - 4.0 * row[j];
        const double adv = wy * (row[j + 1] - row[j - 1]) + kAdvection * 0.5 * (down[j] - up[j]);
        dst[j] = row[j] + kDiffusion * lap - adv;
    }
}

// Largest absolute change of row i between two grids.
WOVEN double row_residual(const double *a, const double *b, int n, int i) {
    double worst = 0.0;
    for (int j = i * n; j < (i + 1) * n; j++)
        worst = std::fmax(worst, std::fabs(a[j] - b[j]));
    return worst;
}

// Central-difference gradient of row i into gx, gy.
WOVEN void gradient_row(const double *t, double *gx, double *gy, int n, int i) {
    for (int j = 1; j < n - 1; j++) {
        const int k = i * n + j;
        gx[k] = 0.5 * (t[k + 1] - t[k - 1]);
        gy[k] = 0.5 * (t[k + n] - t[k - n]);
    }
}

// Moves particles [first, first + kBlock) down the temperature gradient.
WOVEN void push_particles(Particles &p, const double *gx, const double *gy, int n, int first,
                          int count, double dt) {
    const double hi = n - 2.0;
    for (int q = first; q < first + count; q++) {
        const int i = static_cast<int>(p.y[q]), j = static_cast<int>(p.x[q]);
        const double fy = p.y[q] - i, fx = p.x[q] - j;
        const int k = i * n + j;
        auto lerp = [&](const double *g) {
            return (1 - fy) * ((1 - fx) * g[k] + fx * g[k + 1]) +
                   fy * ((1 - fx) * g[k + n] + fx * g[k + n + 1]);
        };
        p.vx[q] = kDrag * p.vx[q] - lerp(gx);
        p.vy[q] = kDrag * p.vy[q] - lerp(gy);
        double nx = p.x[q] + dt * p.vx[q], ny = p.y[q] + dt * p.vy[q];
        if (nx < 1.0 || nx >= hi) {
            nx = nx < 1.0 ? 2.0 - nx : 2.0 * hi - nx - 1e-9;
            p.vx[q] = -p.vx[q];
        }
        if (ny < 1.0 || ny >= hi) {
            ny = ny < 1.0 ? 2.0 - ny : 2.0 * hi - ny - 1e-9;
            p.vy[q] = -p.vy[q];
        }
        p.x[q] = std::fmin(std::fmax(nx, 1.0), hi - 1e-9);
        p.y[q] = std::fmin(std::fmax(ny, 1.0), hi - 1e-9);
    }
}

// Each particle of the block collects the temperature where it sits,
// weighted by its speed.
WOVEN void sample_particles(Particles &p, const double *t, int n, int first, int count) {
    for (int q = first; q < first + count; q++) {
        const int i = static_cast<int>(p.y[q]), j = static_cast<int>(p.x[q]);
        const double fy = p.y[q] - i, fx = p.x[q] - j;
        const int k = i * n + j;
        const double here = (1 - fy) * ((1 - fx) * t[k] + fx * t[k + 1]) +
                            fy * ((1 - fx) * t[k + n] + fx * t[k + n + 1]);
        const double speed = std::sqrt(p.vx[q] * p.vx[q] + p.vy[q] * p.vy[q]);
        p.heat[q] += kCollect * here * (1.0 + speed);
    }
}

// The walls: hot on the left, cold elsewhere.
WOVEN void apply_boundaries(double *t, int n) {
    for (int i = 0; i < n; i++) {
        t[i * n] = 1.0;
        t[i * n + n - 1] = 0.0;
        t[i] = 0.0;
        t[(n - 1) * n + i] = 0.0;
    }
}

// One time step; returns the largest change of any cell.
WOVEN double time_step(std::vector<double> &t, std::vector<double> &next, std::vector<double> &gx,
                       std::vector<double> &gy, Particles &p, int n, double dt) {
    const int np = static_cast<int>(p.x.size());
    const int blocks = (np + kBlock - 1) / kBlock;
    double worst = 0.0;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int i = 1; i < n - 1; i++)
            diffuse_row(t.data(), next.data(), n, i);
#pragma omp for schedule(static) reduction(max : worst)
        for (int i = 1; i < n - 1; i++)
            worst = std::fmax(worst, row_residual(t.data(), next.data(), n, i));
#pragma omp for schedule(static)
        for (int i = 1; i < n - 1; i++)
            gradient_row(next.data(), gx.data(), gy.data(), n, i);
#pragma omp for schedule(static)
        for (int b = 0; b < blocks; b++)
            push_particles(p, gx.data(), gy.data(), n, b * kBlock, std::min(kBlock, np - b * kBlock), dt);
#pragma omp for schedule(static)
        for (int b = 0; b < blocks; b++)
            sample_particles(p, next.data(), n, b * kBlock, std::min(kBlock, np - b * kBlock));
    }
    apply_boundaries(next.data(), n);
    t.swap(next);
    return worst;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: omp_kernel N STEPS PARTICLES\n");
        return 2;
    }
    const int n = std::atoi(argv[1]), steps = std::atoi(argv[2]), np = std::atoi(argv[3]);
    if (n < 8 || steps < 1 || np < 1) {
        std::fprintf(stderr, "omp_kernel: need N >= 8, STEPS >= 1, PARTICLES >= 1\n");
        return 2;
    }
    std::vector<double> t(std::size_t(n) * n, 0.0), next(t), gx(t), gy(t);
    Particles p;
    // A fixed pseudo-random cloud (LCG), so every build starts the same.
    std::uint64_t seed = 12345;
    auto uniform = [&seed] {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return double(seed >> 11) / double(1ull << 53);
    };
    for (int q = 0; q < np; q++) {
        p.x.push_back(1.0 + uniform() * (n - 3.0));
        p.y.push_back(1.0 + uniform() * (n - 3.0));
        p.vx.push_back(0.0);
        p.vy.push_back(0.0);
        p.heat.push_back(0.0);
    }
    apply_boundaries(t.data(), n);
    next = t;

    const int rows = n - 2, blocks = (np + kBlock - 1) / kBlock;
    const double start = omp_get_wtime();
    double worst = 0.0;
    for (int s = 0; s < steps; s++)
        worst = time_step(t, next, gx, gy, p, n, 0.5);
    const double kernel_s = omp_get_wtime() - start;

    double checksum = 0.0;
    for (double v : t)
        checksum += v;
    for (int q = 0; q < np; q++)
        checksum += p.x[q] + p.y[q] + p.heat[q];
    const long calls = 1 + long(steps) * (2 + 3L * rows + 2L * blocks);
    std::printf("kernel_s=%.6f calls=%ld threads=%d last_change=%.3e checksum=%.9e\n", kernel_s,
                calls, omp_get_max_threads(), worst, checksum);
    return 0;
}
