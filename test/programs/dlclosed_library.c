/* A woven shared library, built twice (WORK names its woven function). */
__attribute__((annotate("@critical_path()"))) __attribute__((noinline)) int WORK(int x) {
    return x * 3 + 1;
}

int lib_work(int calls) {
    int sum = 0;
    for (int i = 0; i < calls; i++)
        sum += WORK(i);
    return sum;
}
