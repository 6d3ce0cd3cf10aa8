/*
 * xpar-bench, the installed tool: measure this machine's thresholds into a
 * profile (calibrate), draw where each op's tiers cross (crossover), time
 * every tier of one op over N (sweep), the split tier's settings (split).  The developer benches are
 * xpar-devbench's (xpar_devbench_main.c), built in the build tree only.
 */
#include "bench.h"

static const bench_command commands[] = {
    {"calibrate", bench_cmd_calibrate, "measure this machine's thresholds; write a profile"},
    {"crossover", bench_cmd_crossover,
     "serial/OpenMP/CUDA/AUTO per op x dtype x location; crossovers, AUTO's efficiency, plots"},
    {"sweep", bench_cmd_sweep, "every tier of one op and dtype over N, with plain OpenMP baselines"},
    {"split", bench_cmd_split,
     "the split tier (cpu+cuda) against openmp and cuda on host data; its share and from"},
};

int main(int argc, char **argv) {
  return bench_run_command("xpar-bench", commands, sizeof commands / sizeof commands[0], argc,
                           argv);
}
