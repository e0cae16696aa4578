// Included with different modes on purpose (no guard), but only through common.cuh here.
#ifdef MODES_SECOND
#define MODE_FACTOR 2
#else
#define MODES_SECOND
#define MODE_FACTOR 1
#endif
