"""Lab 07's graded tests: your op lists against what wick.autocast does, your loss scaler
against wick.amp.GradScaler, and a float16 gradient underflow repaired by loss scaling."""

import wick
from labkit import figure, impl

A = impl(__file__, "amp")
F = wick.nn.functional
Y = wick.tensor([0, 1, 2, 3])
OPS = {
    "matmul": lambda a: a @ a, "mm": lambda a: wick.mm(a, a), "bmm": lambda a: wick.bmm(a[None], a[None]),
    "linear": lambda a: F.linear(a, a), "softmax": lambda a: F.softmax(a, 1),
    "log_softmax": lambda a: F.log_softmax(a, 1), "cross_entropy": lambda a: F.cross_entropy(a, Y),
    "exp": lambda a: a.exp(), "log": lambda a: a.abs().log(), "sum": lambda a: a.sum(),
    "mean": lambda a: a.mean(), "pow": lambda a: a.pow(2), "mse_loss": lambda a: F.mse_loss(a, a),
    "layer_norm": lambda a: F.layer_norm(a, (4,)), "relu": lambda a: F.relu(a),
    "add": lambda a: a + a, "tanh": lambda a: a.tanh(),
}


def test_op_lists_match_wick_autocast():
    x = wick.randn(4, 4)
    for lower in (wick.float16, wick.bfloat16):
        for name, fn in OPS.items():
            for inp in (x, x.to(lower)):
                with wick.autocast("cpu", dtype=lower):
                    got = fn(inp).dtype
                assert A.autocast_dtype(name, inp.dtype, lower) == got, (name, inp.dtype, lower)


def test_lists_are_disjoint_and_cover_the_products():
    assert not (A.LOWER & A.FP32)
    assert {"matmul", "linear", "conv2d"} <= A.LOWER
    assert {"softmax", "log_softmax", "cross_entropy", "exp", "sum"} <= A.FP32


def make_model():
    wick.manual_seed(3)
    return wick.nn.Linear(4, 2)


def test_loss_scaler_matches_grad_scaler():
    mine_model, ref_model = make_model(), make_model()
    mine_opt = wick.optim.SGD(mine_model.parameters(), lr=0.1)
    ref_opt = wick.optim.SGD(ref_model.parameters(), lr=0.1)
    mine = A.LossScaler(init_scale=1024.0, growth_interval=3)
    ref = wick.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    scales = []
    for step in range(9):
        x = wick.randn(3, 4)
        if step in (2, 6):
            x[0, 0] = float("inf")  # an overflow: the step must be skipped and the scale halved
        for model, opt, scaler in ((mine_model, mine_opt, mine), (ref_model, ref_opt, ref)):
            opt.zero_grad()
            scaler.scale(model(x).pow(2).mean()).backward()
            scaler.step(opt)
            scaler.update()
        assert mine.get_scale() == ref.get_scale(), step
        scales.append(mine.get_scale())
        for p, q in zip(mine_model.parameters(), ref_model.parameters()):
            assert wick.allclose(p, q, atol=1e-6)
    figure("loss scale over 9 steps (overflow at steps 2 and 6, growth interval 3)",
           " ".join(f"{s:g}" for s in scales))
    assert mine.skipped == 2


def test_fp16_underflow_and_its_repair():
    wick.manual_seed(0)
    x = wick.randn(64, 32) * 1e-3  # small activations ...
    w = wick.randn(32, 16)
    target = x @ w + 1e-3 * wick.randn(64, 16)  # ... and a nearly fitted model: tiny gradients
    xd, wd, td = x.double(), w.double().requires_grad_(True), target.double()
    ((xd @ wd - td) ** 2).mean().backward()
    reference = wd.grad.float()
    plain = A.fp16_weight_grad(x, w, target)
    # 2^16, GradScaler's start, overflows: the loss's own gradient (the scale) is above float16's
    # largest value, 65504. The dynamic scaler backs off once, to 2^15:
    overflow = A.fp16_weight_grad(x, w, target, scale=2.0**16)
    assert not (overflow - overflow == 0).all().item()
    scaled = A.fp16_weight_grad(x, w, target, scale=2.0**15)
    lost = A.underflow_fraction(plain, reference)
    lost_scaled = A.underflow_fraction(scaled, reference)
    err = ((scaled - reference).abs().max() / reference.abs().max()).item()
    figure("float16 gradients flushed to zero without scaling", f"{100 * lost:.1f}%")
    figure("with loss scale 32768 (65536 overflowed)", f"{100 * lost_scaled:.1f}% zero, max error {100 * err:.2f}% of max |grad|")
    figure("largest |reference gradient| vs float16's smallest subnormal",
           f"{reference.abs().max().item():.2e} vs {A.fp16_min_subnormal():.2e}")
    assert lost > 0.5
    assert lost_scaled < 0.01
    assert err < 0.05
