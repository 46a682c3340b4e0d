/* vt_core_fast.h — the hooks' inline producers (still in vt_core.h at this step). */
#ifndef VT_CORE_FAST_H
#define VT_CORE_FAST_H
#include "vt_core.h"
#endif
