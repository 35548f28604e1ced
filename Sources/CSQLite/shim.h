#ifndef HEALTHVAULT_CSQLITE_SHIM_H
#define HEALTHVAULT_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
