// An annotated example workflow: a producer stages input blocks, three worker
// threads simulate and reduce them, and the main thread writes a checkpoint.
// Compile it through the plugin and run it; it leaves
// perfflow.array.<host>.<pid>.pfw in the current directory. An argument sets
// the number of input blocks (default 12).
//
//   clang++-19 -O2 -fpass-plugin=<prefix>/lib/libWeavePass.so workflow.cpp \
//       -L<prefix>/lib -Wl,-rpath,<prefix>/lib -lperfflow_runtime -o workflow
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#define CRITICAL_PATH __attribute__((annotate("@critical_path(pointcut='around')")))

namespace workflow {

struct Block {
    int id;
    std::vector<double> values;
};

class Queue {
  public:
    void push(Block b) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            blocks_.push_back(std::move(b));
        }
        ready_.notify_one();
    }
    bool pop(Block &out) {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return closed_ || !blocks_.empty(); });
        if (blocks_.empty())
            return false;
        out = std::move(blocks_.front());
        blocks_.pop_front();
        return true;
    }
    void close() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        ready_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Block> blocks_;
    bool closed_ = false;
};

CRITICAL_PATH Block stage_input(int id) {
    Block b{id, std::vector<double>(20000)};
    for (size_t i = 0; i < b.values.size(); i++)
        b.values[i] = std::sin(0.001 * (double)(i + id));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return b;
}

CRITICAL_PATH void simulate(Block &b) {
    for (int step = 0; step < 20; step++)
        for (double &v : b.values)
            v = v * 0.999 + 0.001 * std::cos(v);
}

CRITICAL_PATH double reduce(const Block &b) {
    return std::accumulate(b.values.begin(), b.values.end(), 0.0);
}

class Worker {
  public:
    explicit Worker(Queue &q) : queue_(q) {}
    CRITICAL_PATH void run() {
        Block b;
        while (queue_.pop(b)) {
            simulate(b);
            total_ += reduce(b);
        }
    }
    double total() const { return total_; }

  private:
    Queue &queue_;
    double total_ = 0;
};

CRITICAL_PATH void write_checkpoint(double result) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::printf("checkpoint: result %.6f\n", result);
}

} // namespace workflow

int main(int argc, char **argv) {
    using namespace workflow;
    int blocks = argc > 1 ? std::atoi(argv[1]) : 12;
    Queue queue;
    std::vector<Worker> workers(3, Worker(queue));
    std::vector<std::thread> threads;
    for (auto &w : workers)
        threads.emplace_back([&w] { w.run(); });
    for (int id = 0; id < blocks; id++)
        queue.push(stage_input(id));
    queue.close();
    for (auto &t : threads)
        t.join();
    double result = 0;
    for (auto &w : workers)
        result += w.total();
    write_checkpoint(result);
    return 0;
}
