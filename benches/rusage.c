/* Preloaded by scripts/bench-calls.sh into the measured process only: at exit, appends
 * that process's own context switches (voluntary, involuntary; all its threads, none of
 * its children) to the file BENCH_RUSAGE_OUT named. Both variables are removed at start,
 * so the server the process spawns is neither preloaded nor counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static char out[4096];

__attribute__((constructor)) static void bench_rusage_start(void) {
    const char *path = getenv("BENCH_RUSAGE_OUT");
    if (path != NULL && strlen(path) < sizeof out) strcpy(out, path);
    unsetenv("BENCH_RUSAGE_OUT");
    unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void bench_rusage_report(void) {
    struct rusage self;
    if (out[0] == 0 || getrusage(RUSAGE_SELF, &self) != 0) return;
    FILE *f = fopen(out, "a");
    if (f == NULL) return;
    fprintf(f, "%ld %ld\n", self.ru_nvcsw, self.ru_nivcsw);
    fclose(f);
}
