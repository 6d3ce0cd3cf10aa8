/*
 * What xpar-bench and xpar-devbench share on their command lines: option
 * parsing, comma lists, and running the command a program's table names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int bench_parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 0);
  if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

const char *bench_list_item(const char **p, size_t *len) {
  const char *item = *p, *comma = strchr(item, ',');
  *len = comma ? (size_t)(comma - item) : strlen(item);
  *p = comma ? comma + 1 : NULL;
  return item;
}

static int item_is(const char *item, size_t len, const char *name) {
  return strlen(name) == len && strncmp(item, name, len) == 0;
}

int bench_list_has(const char *list, const char *name) {
  for (const char *p = *list ? list : NULL; p;) {
    size_t l;
    const char *item = bench_list_item(&p, &l);
    if (item_is(item, l, name)) return 1;
  }
  return 0;
}

int bench_list_valid(const char *cmd, const char *opt, const char *list,
                     const char *const *names, int count) {
  for (const char *p = list; p;) {
    size_t l;
    const char *item = bench_list_item(&p, &l);
    int found = 0;
    for (int i = 0; i < count && !found; ++i) found = item_is(item, l, names[i]);
    if (!found) {
      fprintf(stderr, "xpar-bench %s: %s: %s\"%.*s\"; the names are", cmd, opt,
              l ? "unknown name " : "an empty name ", (int)l, item);
      for (int i = 0; i < count; ++i) fprintf(stderr, "%s%s", i ? ", " : " ", names[i]);
      fputc('\n', stderr);
      return 0;
    }
  }
  return 1;
}

int bench_ops_dtypes_valid(const char *cmd, const char *ops, const char *dtypes) {
  _Static_assert(XPAR_DTYPE_COUNT_ <= 16, "the names below hold 16");
  const char *names[16];
  int n = 0;
  for (const bench_op *op; n < 16 && (op = bench_op_at(n)) != NULL; ++n) names[n] = op->name;
  if (ops && !bench_list_valid(cmd, "--ops", ops, names, n)) return 0;
  for (n = 0; n < XPAR_DTYPE_COUNT_; ++n) names[n] = xpar_dtype_name((xpar_dtype)n);
  return !dtypes || bench_list_valid(cmd, "--dtypes", dtypes, names, n);
}

int bench_run_command(const char *prog, const bench_command *cmds, size_t ncmds, int argc,
                      char **argv) {
  if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    bench_usage_commands(stdout, prog, cmds, ncmds);
    return 0;
  }
  for (size_t i = 0; argc >= 2 && i < ncmds; ++i)
    if (strcmp(argv[1], cmds[i].name) == 0) {
      int rc = cmds[i].fn(argc - 2, argv + 2);
      /* a report that could not be written is no success (stdout on a full disk) */
      if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s %s: writing the standard output failed: %s\n", prog, argv[1],
                strerror(errno));
        if (rc == 0) rc = 1;
      }
      return rc;
    }
  if (argc >= 2) fprintf(stderr, "%s: unknown command \"%s\"\n", prog, argv[1]);
  bench_usage_commands(stderr, prog, cmds, ncmds);
  return 2;
}

void bench_usage_commands(FILE *f, const char *prog, const bench_command *cmds, size_t ncmds) {
  fprintf(f, "usage: %s COMMAND [options]   (COMMAND --help for its options)\n", prog);
  for (size_t i = 0; i < ncmds; ++i) fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].what);
}
