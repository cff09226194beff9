/* The store's own syncs, timed inside the server (scripts/benchmarks/syncs.py builds and reads
 * it): preloaded into a process (LD_PRELOAD), it times every fsync and fdatasync the process
 * and its children make, SQLite's included, and appends one line for each to the file named by
 * CAPES_SYNC_LOG:
 *
 *     <start, CLOCK_MONOTONIC seconds> <milliseconds> <fsync|fdatasync> <the file's path>
 *
 * Why: a command is answered only once its commit's sync has returned. The disk's control
 * (scripts/disk_control.py) times syncs of a file of its own beside the store; this times the
 * store's, so a slow tail at half load can be laid on the syncs it waited for, or not.
 * CLOCK_MONOTONIC is the clock of Python's time.monotonic() on Linux: the bench cuts the log by
 * its own rounds. Its cost: two clock reads, a readlink and one write(2) a sync; with
 * CAPES_SYNC_ON set, while its file is missing, two clock reads and an access(2). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int log_fd = -2; /* -2: not opened yet; -1: no log */

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void record(const char *call, int fd, double began, double ended) {
    /* Only while the file named by CAPES_SYNC_ON exists, where it is set: the bench times the
     * half load's rounds alone, and the server's other rounds run without the log's writes. */
    const char *on = getenv("CAPES_SYNC_ON");
    if (on && access(on, F_OK) != 0) return;
    if (log_fd == -2) {
        const char *path = getenv("CAPES_SYNC_LOG");
        log_fd = path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    }
    if (log_fd < 0) return;
    char link[64], target[512], line[768];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    /* One write(2) a line on an O_APPEND file: lines of several processes never interleave. */
    int k = snprintf(line, sizeof line, "%.6f %.3f %s %s\n", began, (ended - began) * 1e3, call,
                     target);
    if (k > 0) (void)!write(log_fd, line, (size_t)(k < (int)sizeof line ? k : (int)sizeof line));
}

/* The call named ``call``, found once in the library after this one (libc's), timed. */
static int timed(const char *call, int (**real)(int), int fd) {
    if (!*real) *real = (int (*)(int))dlsym(RTLD_NEXT, call);
    double began = seconds();
    int result = (*real)(fd);
    record(call, fd, began, seconds());
    return result;
}

int fsync(int fd) { return timed("fsync", &real_fsync, fd); }

int fdatasync(int fd) { return timed("fdatasync", &real_fdatasync, fd); }
