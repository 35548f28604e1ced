#ifndef HEALTHVAULT_CZLIB_SHIM_H
#define HEALTHVAULT_CZLIB_SHIM_H
#include <zlib.h>
#endif
