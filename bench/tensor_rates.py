"""The matrix ceilings a kernel's FLOP floor is counted against, measured by torch on this device:
bf16, TF32 (fp32 inputs with allow_tf32) and fp32, 8192^3 and 4096^3 products, medians of
triton.testing.do_bench.  3xTF32 costs three TF32 products, so its floor is the TF32 rate / 3.
    python3 bench/tensor_rates.py"""
import torch
import triton


def rate(dtype, m, tf32):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    x = torch.randn(m, m, device="cuda", dtype=dtype)
    y = torch.randn(m, m, device="cuda", dtype=dtype)
    ms = triton.testing.do_bench(lambda: x @ y, warmup=50, rep=300, return_mode="median")
    del x, y
    return 2 * m ** 3 / (ms * 1e-3) / 1e12


def main():
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    for m in (8192, 4096):
        bf = rate(torch.bfloat16, m, False)
        tf = rate(torch.float32, m, True)
        f32 = rate(torch.float32, m, False)
        print(f"{m}^3: bf16 {bf:.0f} TFLOP/s, TF32 {tf:.0f} (3xTF32 {tf / 3:.0f}), fp32 {f32:.1f}")


if __name__ == "__main__":
    main()
