#ifndef HV_FILE_COPY_H
#define HV_FILE_COPY_H

#include <stddef.h>
#include <stdint.h>

/// copy_file_range(2): copies up to `length` bytes from `in_fd` at `*in_offset` to `out_fd` at
/// `*out_offset` inside the kernel, advancing both offsets. Returns the bytes copied (0 at the end
/// of the input), or -1 with errno set. (glibc declares it only under _GNU_SOURCE, which the Swift
/// Glibc module does not define.)
long long hv_copy_file_range(int in_fd, int64_t *in_offset, int out_fd, int64_t *out_offset, size_t length);

#endif
