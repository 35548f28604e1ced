#define _GNU_SOURCE
#include <unistd.h>
#include <errno.h>
#include "file_copy.h"

long long hv_copy_file_range(int in_fd, int64_t *in_offset, int out_fd, int64_t *out_offset, size_t length) {
#if defined(__linux__)
    __off64_t in = *in_offset, out = *out_offset;
    ssize_t copied = copy_file_range(in_fd, &in, out_fd, &out, length, 0);
    if (copied > 0) {
        *in_offset = in;
        *out_offset = out;
    }
    return copied;
#else
    (void)in_fd; (void)in_offset; (void)out_fd; (void)out_offset; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}
