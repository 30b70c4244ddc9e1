#ifndef CZSTD_SHIM_H
#define CZSTD_SHIM_H
#define ZDICT_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zdict.h>
#endif
