/*
 * The stable sort's 8-byte keys (int64, uint64, double): device_sort.cu's code,
 * instantiated here so that the two key widths compile in parallel.
 */
#define XPAR_SORT_WIDTH_8 1
#include "device_sort.cu"
