/* PERFFLOW_CRITICAL_PATH as a program uses it; the test preprocesses this
 * file and reads the annotation strings. */
#include "perfflow.h"

PERFFLOW_CRITICAL_PATH(pointcut='around', scope='io')
int read_block(int fd);

PERFFLOW_CRITICAL_PATH()
int plain(void);

PERFFLOW_CRITICAL_PATH(pointcut = 'around_async',   flow='in')
int spaced(void);
