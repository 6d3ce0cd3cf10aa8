/* Does a one-thread dependency-chain loop slow down while the OpenMP team spins after a region? */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
__attribute__((noinline)) void scan(const double*x,double*y,size_t n){double r=0;for(size_t i=0;i<n;i++){r+=x[i];y[i]=r;}}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
int main(int argc,char**argv){size_t n=8192; double*x=aligned_alloc(4096,n*8),*y=aligned_alloc(4096,n*8+4096);
 for(size_t i=0;i<n;i++)x[i]=i%5; volatile double sink=0; double t[301];
 for(int mode=0;mode<3;mode++){
  for(int rep=0;rep<301;rep++){
    if(mode>=1){ /* a parallel region just before: workers spin afterwards (libgomp) */
      double s=0;
      #pragma omp parallel for reduction(+:s)
      for(int i=0;i<16384;i++) s+=x[i%n];
      sink=s; }
    if(mode==2){ double w=now(); while(now()-w<2e-3); } /* 2 ms later: workers asleep? */
    double t0=now(); scan(x,y,n); t[rep]=now()-t0; }
  qsort(t,301,sizeof(double),cmp);
  printf("mode %d (%s): median %.2f us, p10 %.2f, p90 %.2f\n",mode,mode==0?"no region":mode==1?"right after a 16-thread region":"2 ms after a region",t[150]*1e6,t[30]*1e6,t[270]*1e6);}
 return 0;}
