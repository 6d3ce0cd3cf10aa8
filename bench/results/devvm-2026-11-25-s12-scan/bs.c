#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "k.h"
#include "kd.h"
#include "ks.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
#define B(T,name,call) __attribute__((noinline)) void name(const T *x, T *y, size_t n){call;}
B(float,cf,{float r=0;for(size_t i=0;i<n;i++){r+=x[i];y[i]=r;}}) B(float,vf,scan_f32(x,y,0,n,0.f,0)) B(float,sf,s4f(x,y,0,n,0.f,0)) B(float,sfx,s4f(x,y,0,n,0.f,1))
B(double,cd,{double r=0;for(size_t i=0;i<n;i++){r+=x[i];y[i]=r;}}) B(double,vd,scan_f64(x,y,0,n,0.,0)) B(double,sd,s4d(x,y,0,n,0.,0)) B(double,sdx,s4d(x,y,0,n,0.,1))
#define T(fn,T_) do{ double b=1e30; for(int r=0;r<5;r++){double t=now(); for(int k=0;k<reps;k++){fn((T_*)x,(T_*)y,n); __asm__ volatile(""::"r"(y):"memory");} t=(now()-t)/reps; if(t<b)b=t;} printf(" %s %6.0f",#fn,b);}while(0)
int main(){
  for (int e=7;e<=16;e+=3){ size_t n=(size_t)1<<e; double *x=aligned_alloc(64,n*8+64),*y=aligned_alloc(64,n*8+64);
    for(size_t i=0;i<n;i++) x[i]=(double)(rand()%1000)/7.;
    int reps=(1<<24)/n; printf("2^%d",e);
    T(cf,float);T(vf,float);T(sf,float);T(sfx,float);T(cd,double);T(vd,double);T(sd,double);T(sdx,double); printf("\n");}
}
