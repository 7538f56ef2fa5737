//===- bench/amx/tiles.c - AMX register-tile shapes, one core -------------===//
//
// The loop linformer-cpu-lower-vectors makes of a register tile's bf16
// pairs (linformer-cpu-tile-for-vectors' tiles on an AMX engine), written
// with the AMX intrinsics for a few tile shapes, so that the shape the
// compiler emits can be chosen by measurement: K = 2048 steps, A's 16-row
// tiles 4 KiB apart (a [n, 2048] bf16 activation), B a panel of pairs
// [K/2, N, 2] (N = 32 or 64 columns). Needs a CPU with AMX-BF16 and Linux
// (it asks for the tile state with arch_prctl):
//
//   gcc -O2 -mamx-tile -mamx-bf16 -mavx512f bench/amx/tiles.c -o /tmp/amx-tiles && /tmp/amx-tiles
//
// On the Xeon of 2026-12-05 (2 cores, AMX peak 2.9 TFLOP/s a core by
// bench/peak), operands all zero: 16 x 32 with one B register 1.2-1.36
// TFLOP/s, two B registers 1.28-1.36, 32 x 32 (2 x 2 accumulators)
// 1.68-1.87, the same with one B register 1.60, 16 x 64 (1 x 4) 1.50-1.60.
// Later the same day, a slower VM of that Xeon (AMX peak 2.6-2.7 a core),
// with random operands (the default now; `zeros` as the first argument for
// the old figures, which came out 1.25-1.34, 1.34, 1.80, 1.78, 1.62): 16 x
// 32 1.30-1.32 and 1.29-1.31, 32 x 32 1.51-1.52, one B register 1.45-1.49,
// B as two 16-column panels (1 KiB tiles instead of 16 rows of 64 bytes 128
// apart) 1.53-1.56 (1.87 on zeros), 16 x 64 1.33-1.34.
//
//===----------------------------------------------------------------------===//
// AMX microkernel variants: time per TDPBF16PS for register-tile shapes.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
// The tile configuration as bytes (palette, 14 reserved, colsb[16] as
// uint16, rows[16]): GCC 12 at -O2 dropped the rows of a packed struct's
// stores before ldtilecfg read them (rows 0 with colsb 64: #GP, SIGSEGV).
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void config(void){ static _Alignas(64) volatile uint8_t c[64]; for(int i=0;i<64;i++) c[i]=0; c[0]=1;
  for(int i=0;i<8;i++){c[16+2*i]=64;c[48+i]=16;} _tile_loadconfig((const void *)c);}
enum { K = 2048 };
static uint16_t *A, *Bp; static float *C;
// A: rows x K (stride K*2 bytes); Bp: panel [K/2][N][2] (stride N*4 bytes)
__attribute__((noinline)) void k16x32(int n){ // 2 C, one A, B into one register (the kernels before 32-row tiles)
  for(int it=0;it<n;it++){ _tile_zero(0); _tile_zero(1);
    for(int k=0;k<K;k+=32){ _tile_loadd(2, A+k, K*2);
      _tile_loadd(3, Bp+(k/2)*64, 128); _tile_dpbf16ps(0,2,3);
      _tile_loadd(3, Bp+(k/2)*64+32, 128); _tile_dpbf16ps(1,2,3);}
    _tile_stored(0, C, 128); _tile_stored(1, C+16, 128);}
}
__attribute__((noinline)) void k16x32b(int n){ // 2 C, distinct B registers
  for(int it=0;it<n;it++){ _tile_zero(0); _tile_zero(1);
    for(int k=0;k<K;k+=32){ _tile_loadd(2, A+k, K*2);
      _tile_loadd(3, Bp+(k/2)*64, 128); _tile_loadd(4, Bp+(k/2)*64+32, 128);
      _tile_dpbf16ps(0,2,3); _tile_dpbf16ps(1,2,4);}
    _tile_stored(0, C, 128); _tile_stored(1, C+16, 128);}
}
__attribute__((noinline)) void k32x32(int n){ // 4 C, 2 A, 2 B
  for(int it=0;it<n;it++){ _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for(int k=0;k<K;k+=32){ _tile_loadd(4, A+k, K*2); _tile_loadd(5, A+16*K+k, K*2);
      _tile_loadd(6, Bp+(k/2)*64, 128); _tile_loadd(7, Bp+(k/2)*64+32, 128);
      _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(1,4,7); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);}
    _tile_stored(0, C, 128); _tile_stored(1, C+16, 128); _tile_stored(2, C+512, 128); _tile_stored(3, C+528, 128);}
}
__attribute__((noinline)) void k32x32i(int n){ // 4 C, 2 A, B in one register in turn (what the compiler emits)
  for(int it=0;it<n;it++){ _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for(int k=0;k<K;k+=32){ _tile_loadd(4, A+k, K*2); _tile_loadd(5, A+16*K+k, K*2);
      _tile_loadd(6, Bp+(k/2)*64, 128); _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(2,5,6);
      _tile_loadd(6, Bp+(k/2)*64+32, 128); _tile_dpbf16ps(1,4,6); _tile_dpbf16ps(3,5,6);}
    _tile_stored(0, C, 128); _tile_stored(1, C+16, 128); _tile_stored(2, C+512, 128); _tile_stored(3, C+528, 128);}
}
__attribute__((noinline)) void k32x32c(int n){ // 4 C, 2 A, 2 B from two 16-column panels [K/2][16][2]: 1 KiB tiles
  for(int it=0;it<n;it++){ _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for(int k=0;k<K;k+=32){ _tile_loadd(4, A+k, K*2); _tile_loadd(5, A+16*K+k, K*2);
      _tile_loadd(6, Bp+(k/2)*32, 64); _tile_loadd(7, Bp+K*16+(k/2)*32, 64);
      _tile_dpbf16ps(0,4,6); _tile_dpbf16ps(1,4,7); _tile_dpbf16ps(2,5,6); _tile_dpbf16ps(3,5,7);}
    _tile_stored(0, C, 128); _tile_stored(1, C+16, 128); _tile_stored(2, C+512, 128); _tile_stored(3, C+528, 128);}
}
__attribute__((noinline)) void k16x64(int n){ // 4 C, 1 A, B alternating 2 regs; panel 64 wide
  for(int it=0;it<n;it++){ _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for(int k=0;k<K;k+=32){ _tile_loadd(4, A+k, K*2);
      _tile_loadd(5, Bp+(k/2)*128, 256); _tile_dpbf16ps(0,4,5);
      _tile_loadd(6, Bp+(k/2)*128+32, 256); _tile_dpbf16ps(1,4,6);
      _tile_loadd(5, Bp+(k/2)*128+64, 256); _tile_dpbf16ps(2,4,5);
      _tile_loadd(6, Bp+(k/2)*128+96, 256); _tile_dpbf16ps(3,4,6);}
    _tile_stored(0, C, 256); _tile_stored(1, C+16, 256); _tile_stored(2, C+32, 256); _tile_stored(3, C+48, 256);}
}
int main(int argc, char **argv){
  if (syscall(SYS_arch_prctl, 0x1023, 18)) { perror("arch_prctl"); return 1; }
  A=aligned_alloc(64, 32*K*2); Bp=aligned_alloc(64, K*128*2); C=aligned_alloc(64, 64*64*4);
  // Random bf16 operands in (-1, 1), as a GEMM's: AMX runs constant or zero
  // operands faster (bench/peak's amx-bf16-data); `zeros` as the first
  // argument measures with zeros.
  int zeros = argc > 1 && !strcmp(argv[1], "zeros");
  uint32_t st = 12345;
  for (size_t i=0;i<(size_t)32*K;i++){ st=st*1664525u+1013904223u; A[i]=zeros?0:(uint16_t)(((st>>16)&0x8000u)|((0x7Eu-((st>>8)&3u))<<7)|((st>>20)&0x7Fu)); }
  for (size_t i=0;i<(size_t)K*128;i++){ st=st*1664525u+1013904223u; Bp[i]=zeros?0:(uint16_t)(((st>>16)&0x8000u)|((0x7Eu-((st>>8)&3u))<<7)|((st>>20)&0x7Fu)); }
  config();
  struct { const char *name; void (*f)(int); int tdp; } v[] = {
    {"16x32 one B reg", k16x32, 2*K/32}, {"16x32 two B regs", k16x32b, 2*K/32},
    {"32x32 2x2", k32x32, 4*K/32}, {"32x32 B one reg", k32x32i, 4*K/32},
    {"32x32 B 16-col", k32x32c, 4*K/32}, {"16x64 1x4", k16x64, 4*K/32}};
  for (int i=0;i<6;i++){ int n=2000; v[i].f(10); double t0=now(); v[i].f(n); double t=now()-t0;
    double flops = (double)n*v[i].tdp*16*16*32*2; printf("%-18s %7.1f GFLOP/s  %.1f ns/tdp\n", v[i].name, flops/t*1e-9, t/n/v[i].tdp*1e9); }
  _tile_release(); return 0; }
