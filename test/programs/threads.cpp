// Three workers each run annotated work; the main thread ends with
// pthread_exit while they are still running.
#include <pthread.h>
#include <unistd.h>
#include <cstdio>

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) void step(int i) {
    usleep(1000 + 100 * (i % 3));
}

__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 20; i++)
        step((int)id + i);
    return nullptr;
}

int main() {
    pthread_t threads[3];
    for (long t = 0; t < 3; t++)
        pthread_create(&threads[t], nullptr, worker, (void *)t);
    for (auto &t : threads)
        pthread_detach(t);
    std::printf("main thread leaves with pthread_exit\n");
    pthread_exit(nullptr);
}
