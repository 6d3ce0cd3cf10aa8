/*
 * xpar-devbench, the developers' benches (built in the build tree, never
 * installed): AUTO against every alternative (regret), the per-call cost
 * (overhead), OpenMP stall episodes (stalls), the shipped kernels'
 * thresholds (kernel), the CPU segmented ops against the memory bound
 * (segcpu).  The user's tool is xpar-bench (xpar_bench_main.c).
 */
#include "bench.h"

static const bench_command commands[] = {
    {"regret", bench_cmd_regret,
     "AUTO against every alternative (tiers, plain loops, CUB) per residency x op x dtype x N"},
    {"overhead", bench_cmd_overhead, "per-call cost of xpar at N = 128 against inline loops"},
    {"stalls", bench_cmd_stalls,
     "probe OpenMP stall episodes: per-call p50/p99/max by team size, wait, CUDA threads"},
    {"kernel", bench_cmd_kernel,
     "an application kernel's thresholds (xpar_kernel_calibrate) on the shipped kernels"},
    {"segcpu", bench_cmd_segcpu,
     "the CPU tiers' segmented reduce and scan against the memory bound, per distribution"},
    {"load", bench_cmd_load,
     "other work for the benches: cpu (a busy process per core) or gpu (a GPU kept busy)"},
};

int main(int argc, char **argv) {
  return bench_run_command("xpar-devbench", commands, sizeof commands / sizeof commands[0], argc,
                           argv);
}
