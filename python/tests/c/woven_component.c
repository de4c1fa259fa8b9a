/* A C component woven by the perfflow plugin and loaded into a Python
 * process with ctypes: its spans must land in the Python process's trace. */
#include "perfflow.h"

PERFFLOW_CRITICAL_PATH(pointcut='around')
int c_leaf(int x) { return x + 1; }

PERFFLOW_CRITICAL_PATH()
int c_work(int n) {
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += c_leaf(i);
    return sum;
}
