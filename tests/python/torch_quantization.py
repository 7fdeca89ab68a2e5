"""PyTorch's eager-mode quantization as the tests' reference (None without python3-torch), with
torch 1.13's HistogramObserver fixed where it truncates its range."""

from reference import torch

tq = tobs = FixedTorchHistogramObserver = None
if torch is not None:
    import torch.ao.quantization as tq  # noqa: F401  (the tests import it from here)
    import torch.ao.quantization.observer as tobs

    class FixedTorchHistogramObserver(tobs.HistogramObserver):
        """torch 1.13's HistogramObserver.forward without its int() truncation of the histogram
        range (pytorch/pytorch#83672, removed in later PyTorch); the rest is inherited."""

        def forward(self, x_orig):
            x = x_orig.detach()
            min_val, max_val = self.min_val, self.max_val
            same_values = min_val.item() == max_val.item()
            uninitialized = min_val == float("inf") and max_val == float("-inf")
            if uninitialized or same_values:
                min_val, max_val = torch.aminmax(x)
                self.min_val.resize_(min_val.shape)
                self.min_val.copy_(min_val)
                self.max_val.resize_(max_val.shape)
                self.max_val.copy_(max_val)
                torch.histc(x, self.bins, min=min_val.item(), max=max_val.item(),
                            out=self.histogram)
                return x_orig
            new_min, new_max = torch.aminmax(x)
            combined_min, combined_max = torch.min(new_min, min_val), torch.max(new_max, max_val)
            combined_min, combined_max, downsample_rate, start_idx = self._adjust_min_max(
                combined_min, combined_max, self.upsample_rate)
            combined = torch.histc(x, self.bins, min=combined_min.item(), max=combined_max.item())
            if combined_min == min_val and combined_max == max_val:
                combined += self.histogram
            else:
                combined = self._combine_histograms(combined, self.histogram, self.upsample_rate,
                                                    downsample_rate, start_idx, self.bins)
            self.histogram.detach_().resize_(combined.shape)
            self.histogram.copy_(combined)
            self.min_val.detach_().resize_(combined_min.shape)
            self.min_val.copy_(combined_min)
            self.max_val.detach_().resize_(combined_max.shape)
            self.max_val.copy_(combined_max)
            return x_orig


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# Note [PyTorch's int8 reference without VNNI]
# Without VNNI (a Zen 3, or an x86 before Cascade Lake), PyTorch's x86 int8 kernels (oneDNN and
# FBGEMM) multiply uint8 by int8 with vpmaddubsw, which saturates each pair's sum to int16:
# 255 * -128 * 2 does not fit, so their outputs are off by many steps where wick's are exact
# (checked against the int64 formula in test_quantized_ops.py). This is why PyTorch advises
# reduce_range on such processors. There the comparisons with PyTorch use 7-bit weights, whose
# pair sums fit, so both sides compute the exact result and still meet. A symmetric observer gets
# [-63, 63] rather than [-64, 63]: its scale is then max|w| / 63, and the largest weight lands on
# 63 exactly instead of on a rounding tie at 63.5 that float32 and float64 break differently.
TORCH_INT8_EXACT = bool(_cpu_flags() & {"avx512_vnni", "avx_vnni", "amx_int8"})
WEIGHT_QMIN, WEIGHT_QMAX = (-128, 127) if TORCH_INT8_EXACT else (-63, 63)


def torch_safe_weights(w):
    """int8 weights PyTorch's kernels multiply without saturating on this processor: as they are
    with VNNI, halved without (Note [PyTorch's int8 reference without VNNI])."""
    import numpy as np

    return w if TORCH_INT8_EXACT else (w.astype(np.int16) // 2).astype(np.int8)
