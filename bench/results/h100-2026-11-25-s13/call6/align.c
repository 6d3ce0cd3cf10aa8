#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "xpar/xpar.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int argc,char**argv){
  xpar_context *c; xpar_context_create(&c);
  size_t n = argc>1?strtoul(argv[1],0,0):16384;
  char *buf = aligned_alloc(4096, 2*(n*4+4096));
  for (size_t i=0;i<2*(n*4+4096);i++) buf[i]=(char)(i*7);
  for (int op=0; op<3; op++) for (int off=0; off<=16; off+=16) {
    int32_t *x=(int32_t*)(buf+off), *y=(int32_t*)(buf+n*4+4096+off);
    double best=1e30; int64_t r=0; int32_t r32=0;
    for (int rep=0; rep<21; rep++) {
      double t0=now();
      for (int k=0;k<200;k++) {
        if (op==0) xpar_reduce(c,XPAR_INT32,XPAR_SUM,x,n,&r32);
        else if (op==1) xpar_dot(c,XPAR_INT32,x,y,n,&r32);
        else xpar_reduce(c,XPAR_INT32,XPAR_MAX,x,n,&r32);
      }
      double t=(now()-t0)/200; if (t<best) best=t;
    }
    xpar_decision d; xpar_last_decision(c,&d);
    printf("%-6s n=%zu offset %2d: %8.1f ns  (%s) r=%d\n", op==0?"sum":op==1?"dot":"max", n, off, best, xpar_tier_name(d.tier), r32);
  }
  return 0;
}
