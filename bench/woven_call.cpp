// woven_call.cpp - cost of one woven call (enter + exit) against a yardstick.
//
// bench/run.sh compiles this file twice: once through the perfflow plugin
// (woven_empty_call gets an enter and an exit) and once without it (the
// not-woven baseline). The program has two modes:
//
//   call       every worker thread calls woven_empty_call N times;
//   reference  every worker thread does, N times, what a minimal tracer has to
//              do per call: read CLOCK_MONOTONIC twice and store two 16-byte
//              records (timestamp + pointer) into a thread-local ring.
//
// Usage: woven_call call|reference THREADS N [BURST]
//
// With BURST, each thread makes its N calls in bursts of BURST calls with a
// 2 ms sleep after each burst (a program that traces in bursts, as most do,
// rather than back to back); only the bursts are timed, so ns_per_call is
// what a call costs the calling thread while perfflow's writer thread keeps
// up in the pauses. Without BURST the calls run back to back, and the
// figure includes waiting for the writer once its queue is full.
//
// It prints one line of key=value pairs:
//   ns_per_call      each thread's loop time / N, averaged over the threads
//   cpu_ns_per_call  process user+sys CPU time (getrusage RUSAGE_SELF) from
//                    just before the threads start to just after they are
//                    joined, divided by THREADS * N
//   vmhwm_kib        peak resident set (VmHWM in /proc/self/status), read
//                    just before main returns
//
// The work always runs on new threads, also with THREADS = 1, so that the
// runtime's flush when a thread ends falls inside the CPU figure in every
// case.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>

namespace {

std::uint64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

std::uint64_t cpu_ns_of_process() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    auto ns = [](const timeval &tv) {
        return std::uint64_t(tv.tv_sec) * 1000000000u + std::uint64_t(tv.tv_usec) * 1000u;
    };
    return ns(ru.ru_utime) + ns(ru.ru_stime);
}

// Peak resident set in KiB, or -1 when /proc/self/status has no VmHWM line.
long peak_rss_kib() {
    std::FILE *f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, "VmHWM:", 6) == 0) {
            kib = std::strtol(line + 6, nullptr, 10);
            break;
        }
    }
    std::fclose(f);
    return kib;
}

// --- the reference: what a minimal tracer does per call -------------------

struct RefRecord {
    std::uint64_t ts;
    const void *where;
};
static_assert(sizeof(RefRecord) == 16, "reference records are 16 bytes");

// 64 Ki records (1 MiB) per thread, reused as a ring. The C library zeroes
// a thread's TLS block when the thread starts, so every mode and build pays
// the same 1 MiB per thread of resident memory for it.
constexpr std::size_t kRingRecords = std::size_t(1) << 16;
thread_local RefRecord ref_ring[kRingRecords];
thread_local std::size_t ref_next;

const char ref_enter_tag = 'B';
const char ref_exit_tag = 'E';

inline void ref_store(const void *where) {
    ref_ring[ref_next] = RefRecord{monotonic_ns(), where};
    ref_next = (ref_next + 1) & (kRingRecords - 1);
}

__attribute__((noinline)) void reference_call() {
    ref_store(&ref_enter_tag);
    asm volatile("" ::: "memory");
    ref_store(&ref_exit_tag);
}

} // namespace

// --- the woven function ------------------------------------------------------

// External linkage and noinline keep it a real call; the empty asm with a
// memory clobber is a side effect the optimiser must keep, so neither the
// call nor the loop around it can be removed.
__attribute__((annotate("@critical_path(pointcut='around')"), noinline))
void woven_empty_call() {
    asm volatile("" ::: "memory");
}

namespace {

enum class Mode { Call, Reference };

struct Worker {
    std::uint64_t loop_ns = 0;
};

void calls(Mode mode, std::uint64_t n) {
    if (mode == Mode::Call) {
        for (std::uint64_t i = 0; i < n; ++i)
            woven_empty_call();
    } else {
        for (std::uint64_t i = 0; i < n; ++i)
            reference_call();
    }
}

void run_loop(Mode mode, std::uint64_t n, std::uint64_t burst, std::atomic<unsigned> &ready,
              const std::atomic<bool> &go, Worker &out) {
    ready.fetch_add(1, std::memory_order_acq_rel);
    while (!go.load(std::memory_order_acquire)) {
    }
    if (burst == 0) {
        std::uint64_t t0 = monotonic_ns();
        calls(mode, n);
        out.loop_ns = monotonic_ns() - t0;
        return;
    }
    for (std::uint64_t done = 0; done < n; done += burst) {
        std::uint64_t k = n - done < burst ? n - done : burst;
        std::uint64_t t0 = monotonic_ns();
        calls(mode, k);
        out.loop_ns += monotonic_ns() - t0;
        timespec pause{0, 2000000};
        nanosleep(&pause, nullptr);
    }
}

[[noreturn]] void usage(const char *why) {
    std::fprintf(stderr, "woven_call: %s\nusage: woven_call call|reference THREADS N [BURST]\n",
                 why);
    std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5)
        usage("expected three or four arguments");
    Mode mode;
    if (std::strcmp(argv[1], "call") == 0)
        mode = Mode::Call;
    else if (std::strcmp(argv[1], "reference") == 0)
        mode = Mode::Reference;
    else
        usage("MODE must be 'call' or 'reference'");
    char *end = nullptr;
    unsigned long threads = std::strtoul(argv[2], &end, 10);
    if (*end != '\0' || threads == 0 || threads > 1024)
        usage("THREADS must be a whole number from 1 to 1024");
    unsigned long long n = std::strtoull(argv[3], &end, 10);
    if (*end != '\0' || n == 0)
        usage("N must be a positive whole number");
    unsigned long long burst = 0;
    if (argc == 5) {
        burst = std::strtoull(argv[4], &end, 10);
        if (*end != '\0' || burst == 0)
            usage("BURST must be a positive whole number");
    }

    std::vector<Worker> workers(threads);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};

    std::uint64_t cpu0 = cpu_ns_of_process();
    for (unsigned long t = 0; t < threads; ++t)
        pool.emplace_back(run_loop, mode, std::uint64_t(n), std::uint64_t(burst), std::ref(ready),
                          std::cref(go), std::ref(workers[t]));
    while (ready.load(std::memory_order_acquire) != threads) {
    }
    go.store(true, std::memory_order_release);
    for (auto &th : pool)
        th.join();
    std::uint64_t cpu1 = cpu_ns_of_process();

    double loop_ns_sum = 0;
    for (const auto &w : workers)
        loop_ns_sum += double(w.loop_ns);
    double ns_per_call = loop_ns_sum / double(threads) / double(n);
    double cpu_ns_per_call = double(cpu1 - cpu0) / (double(threads) * double(n));

    std::printf("mode=%s threads=%lu calls_per_thread=%llu ns_per_call=%.2f "
                "cpu_ns_per_call=%.2f vmhwm_kib=%ld\n",
                argv[1], threads, n, ns_per_call, cpu_ns_per_call, peak_rss_kib());
    return 0;
}
