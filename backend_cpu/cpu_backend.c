/*
 * The CPU backend's table.  Always built; the OpenMP tier runs on one thread
 * when the library is built without OpenMP.  No device management: those
 * pointers are NULL.
 */
#include "cpu_internal.h"
#include "cpu_repro.h"

const xpar__backend xpar__cpu_backend = {
    .name = "cpu",
    .reduce = xpar__cpu_reduce,
    .reduce_sum_wide = xpar__cpu_reduce_sum_wide,
    .scan = xpar__cpu_scan,
    .axpy = xpar__cpu_axpy,
    .add = xpar__cpu_add,
    .fill = xpar__cpu_fill,
    .dot = xpar__cpu_dot,
    .sort = xpar__cpu_sort,
    .select = xpar__cpu_select,
    .runs = xpar__cpu_runs,
    .segmented = xpar__cpu_segmented,
    .histogram = xpar__cpu_histogram,
    .launch = xpar__cpu_launch,
    .op_reduce = xpar__cpu_op_reduce,
    .op_scan = xpar__cpu_op_scan,
    .op_select = xpar__cpu_op_select,
    .repro_reduce = xpar__cpu_repro_reduce,
    .repro_scan = xpar__cpu_repro_scan,
    .host_copy = xpar__cpu_host_copy,
    .team_size = xpar__cpu_region_size,
};
