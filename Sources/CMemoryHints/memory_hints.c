#include "memory_hints.h"
