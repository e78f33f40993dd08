"""Stop mid-run, save model + optimizer + scheduler, resume in a new process: bit-for-bit equal."""

import runpy
import subprocess
import sys
import textwrap

import numpy as np
import pytest

# Runs in this process and in the child: the same fixed problem and loop.
SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray
    from burn_nn import LinearConfig, Module, Relu
    from burn_record import NamedMpkFileRecorder
    from burn_tensor import Tensor
    from burn_optim import AdamConfig, GradientClippingConfig, GradientsParams, RmsPropConfig, SgdConfig, MomentumConfig
    from burn_optim.lr_scheduler import (ComposedLrSchedulerConfig, CosineAnnealingLrSchedulerConfig,
                                         ExponentialLrSchedulerConfig)

    class Mlp(Module):
        a: Module
        b: Module
        def forward(self, x):
            return self.b.forward(Relu().forward(self.a.forward(x)))

    OPTIMS = {
        "adam": lambda: AdamConfig(amsgrad=True).with_grad_clipping(GradientClippingConfig.Norm(1.0)).init(),
        "rmsprop": lambda: RmsPropConfig(centered=True).init(),
        "sgd": lambda: SgdConfig(momentum=MomentumConfig(nesterov=True)).init(),
    }

    def scheduler():
        return (ComposedLrSchedulerConfig()
                .cosine(CosineAnnealingLrSchedulerConfig(0.05, 7))
                .exponential(ExponentialLrSchedulerConfig(0.9, 0.97)).init())

    def run(kind, start, stop, ckpt, resume):
        device = Autodiff(NdArray()).device()
        device.seed(7)
        model = Mlp(a=LinearConfig(3, 8).init(device), b=LinearConfig(8, 2).init(device))
        optim, sched = OPTIMS[kind](), scheduler()
        rec = NamedMpkFileRecorder()
        if resume:
            model = model.load_file(ckpt + "/model", rec, device)
            optim = optim.load_record(rec.load(ckpt + "/optim"))
            sched = sched.load_record(rec.load(ckpt + "/sched")["s"])
        rng = np.random.default_rng(0)
        xs = rng.normal(size=(20, 16, 3)).astype(np.float32)
        ys = rng.normal(size=(20, 16, 2)).astype(np.float32)
        for i in range(start, stop):
            lr = sched.step()
            r = model.forward(Tensor.from_data(xs[i], device)) - Tensor.from_data(ys[i], device)
            grads = GradientsParams.from_grads((r * r).mean().backward(), model)
            model = optim.step(lr, model, grads)
        return model, optim, sched

    if __name__ == "__main__":
        kind, ckpt, out = sys.argv[1:4]
        model, _, _ = run(kind, 10, 20, ckpt, resume=True)
        np.savez(out, *[p.val().numpy() for p in model.parameters()])
""")


@pytest.mark.parametrize("kind", ["adam", "rmsprop", "sgd"])
def test_resume_in_new_process_is_bit_exact(kind, tmp_path):
    from burn_record import NamedMpkFileRecorder

    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    run = runpy.run_path(str(script), run_name="train")["run"]

    full, _, _ = run(kind, 0, 20, None, resume=False)
    model, optim, sched = run(kind, 0, 10, None, resume=False)
    rec = NamedMpkFileRecorder()
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    model.save_file(ckpt / "model", rec)
    rec.record(optim.to_record(), ckpt / "optim")
    rec.record({"s": sched.to_record()}, ckpt / "sched")

    out = tmp_path / "resumed.npz"
    proc = subprocess.run(
        [sys.executable, str(script), kind, str(ckpt), str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    resumed = np.load(out)
    params = [p.val().numpy() for p in full.parameters()]
    assert len(resumed.files) == len(params)
    for i, want in enumerate(params):
        np.testing.assert_array_equal(resumed[f"arr_{i}"], want)
    # And the run actually trained past the checkpoint.
    assert not np.array_equal(params[0], model.parameters()[0].val().numpy())
