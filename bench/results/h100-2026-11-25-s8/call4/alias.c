#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
__attribute__((noinline)) void scan(const double*x,double*y,size_t n){double r=0;for(size_t i=0;i<n;i++){r+=x[i];y[i]=r;}}
int main(){size_t n=8192; char*buf=aligned_alloc(4096,1<<24); double*x=(double*)buf;
 for(size_t i=0;i<n;i++)x[i]=i%5;
 for(int off=0; off<=4096; off+= (off<256?32:512)){
  double*y=(double*)(buf+ (1<<20) + off);
  double best=1e9; for(int rep=0;rep<200;rep++){double t0=now(); for(int k=0;k<10;k++){scan(x,y,n);__asm__ volatile(""::"r"(y):"memory");} double t=(now()-t0)/10; if(t<best)best=t;}
  printf("out-in offset mod 4096 = %4d: %.2f us\n",off%4096,best*1e6);}
}
