/* Placeholder: fp16/bf16 conversions land with the foundation. */
#include "sgla_internal.h"
uint16_t sgla_f32_to_f16(float x) { (void)x; return 0; }
float sgla_f16_to_f32(uint16_t h) { (void)h; return 0; }
uint16_t sgla_f32_to_bf16(float x) { (void)x; return 0; }
float sgla_bf16_to_f32(uint16_t b) { (void)b; return 0; }
uint16_t sgla_f64_to_f16(double x) { (void)x; return 0; }
uint16_t sgla_f64_to_bf16(double x) { (void)x; return 0; }
