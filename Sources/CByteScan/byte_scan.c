// The scan is a static inline function in include/byte_scan.h, compiled into each caller; this
// file gives the target something to build.
#include "byte_scan.h"
