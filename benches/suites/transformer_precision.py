"""A transformer training step in three precisions: fp32, pure bf16, mixed bf16 (issue 34).

The model (issue 34's): token embedding (vocab 1000) -> d_model, pre-norm `TransformerEncoder`
(8 heads, d_ff = 4 d_model, GELU, dropout 0.1), mean over the sequence, Linear to 8 classes,
cross-entropy, Adam. GPU size (`--sizes gpu`, the default on a GPU backend): d_model 512,
6 layers, batch 32 x 128 tokens. CPU size (`--sizes cpu` / `--small`): d_model 64, 2 layers,
batch 8 x 32.

Cases, each one full step that updates the model:
- `fp32`: burn on `Autodiff(B)`; torch eager float32.
- `bf16 pure`: burn on `Autodiff(B(float_dtype="bfloat16"))` (every tensor bf16, Adam's moments
  too); torch eager with the model `.to(torch.bfloat16)`.
- `bf16 mixed`: burn on `Autodiff(B)` under `burn_train.MixedPrecision("bf16")` (f32 parameters
  and Adam state, matmul/linear in bf16); torch `autocast(dtype=torch.bfloat16)` with f32
  parameters.
A backend that cannot build bfloat16 tensors reports its bf16 cases as `not implemented`.
On a Fusion backend (`--backend fusion-cuda`) each mode also runs captured (`<mode> captured`:
the step recorded once by `burn_fusion.capture` and replayed), beside the same torch step.
torch's model has the same architecture and its own random initial weights: only times compare.
"""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite, Target

VOCAB, CLASSES, LR = 1000, 8, 1e-4
SIZES = {
    "gpu": {"d_model": 512, "layers": 6, "batch": 32, "seq": 128},
    "cpu": {"d_model": 64, "layers": 2, "batch": 8, "seq": 32},
    "quick": {"d_model": 16, "layers": 1, "batch": 2, "seq": 8},
}


def _data(size: dict) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, size=(size["batch"], size["seq"])).astype(np.int64)
    return tokens, rng.integers(0, CLASSES, size=size["batch"]).astype(np.int64)


def with_float_dtype(backend, dtype: str):
    """`backend` rebuilt with `float_dtype=dtype` at its innermost backend (decorators kept);
    NotImplementedError when the backend refuses the dtype."""
    opts = backend.options()
    try:
        if backend.inner is not None and "inner" in opts:
            return type(backend)(**{**opts, "inner": with_float_dtype(backend.inner, dtype)})
        return type(backend)(**{**opts, "float_dtype": dtype})
    except ValueError as e:
        raise NotImplementedError(f"{backend!r} with float_dtype={dtype}: {e}") from e


def _burn_step(device, size: dict, tokens, targets, mixed: bool, capture: bool = False):
    from burn_nn import (
        CrossEntropyLossConfig,
        EmbeddingConfig,
        LinearConfig,
        TransformerEncoderConfig,
    )
    from burn_nn.transformer import TransformerEncoderInput
    from burn_optim import AdamConfig, GradientsParams
    from burn_tensor import Tensor
    from burn_train import MixedPrecision

    d = size["d_model"]
    device.seed(0)
    emb = EmbeddingConfig(VOCAB, d).init(device)
    enc = TransformerEncoderConfig(d, 4 * d, 8, size["layers"], norm_first=True).init(device)
    out = LinearConfig(d, CLASSES).init(device)
    state = {"model": {"emb": emb, "enc": enc, "out": out}}
    x = Tensor.from_data(tokens, device)
    y = Tensor.from_data(targets, device)
    loss_fn = CrossEntropyLossConfig().init(device)
    optims = {k: AdamConfig().init() for k in state["model"]}
    mp = MixedPrecision("bf16") if mixed else None

    def forward(model, x, y):
        h = model["enc"].forward(TransformerEncoderInput.new(model["emb"].forward(x)))
        return loss_fn.forward(model["out"].forward(h.mean_dim(1).squeeze_dim(1)), y)

    def train(model, optims, x, y, lr):
        # a function of (model, optimizers, batch, lr): what `burn_fusion.capture` records
        if mp is None:
            loss = forward(model, x, y)
        else:
            with mp.autocast():
                loss = forward(model, x, y)
        grads = loss.backward()
        new = {}
        for k, m in model.items():
            g = GradientsParams.from_grads(grads, m)
            new[k] = optims[k].step(lr, m, g) if mp is None else mp.step(optims[k], lr, m, g)
        return new, loss

    if capture:
        from burn_fusion import capture as capture_step

        train = capture_step(train, name="transformer_precision")

    def step():
        state["model"], loss = train(state["model"], optims, x, y, LR)
        return loss

    step.captured = train if capture else None
    return step


def _torch_step(torch, size: dict, tokens, targets, dev: str, mode: str):
    nn = torch.nn
    d = size["d_model"]
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d, 8, 4 * d, dropout=0.1, activation="gelu", batch_first=True, norm_first=True
    )
    model = nn.ModuleDict({
        "emb": nn.Embedding(VOCAB, d),
        "enc": nn.TransformerEncoder(layer, size["layers"], enable_nested_tensor=False),
        "out": nn.Linear(d, CLASSES),
    }).to(dev).train()  # fmt: skip
    if mode == "bf16 pure":
        model = model.to(torch.bfloat16)
    x = torch.from_numpy(tokens.copy()).to(dev)
    y = torch.from_numpy(targets.copy()).to(dev)
    optim = torch.optim.Adam(model.parameters(), lr=LR, eps=1e-5)
    ce = nn.functional.cross_entropy
    device_type = "cuda" if dev.startswith("cuda") else "cpu"

    def forward():
        h = model["enc"](model["emb"](x))
        return ce(model["out"](h.mean(1)), y)

    def step():
        optim.zero_grad(set_to_none=True)
        if mode == "bf16 mixed":
            with torch.autocast(device_type=device_type, dtype=torch.bfloat16):
                loss = forward()
        else:
            loss = forward()
        loss.backward()
        optim.step()
        return loss

    return step


def _half_refused(device):
    """A callable raising NotImplementedError when `device` cannot hold bfloat16 tensors
    (the mixed step casts to it), else None."""
    from burn_tensor import Tensor

    try:
        Tensor.ones([1], device).cast("bfloat16")
    except TypeError as e:
        msg = f"{device.backend!r} cannot hold bfloat16 tensors: {e}"

        def refused():
            raise NotImplementedError(msg)

        return refused
    return None


def _burn_case(ctx: dict, size: dict, tokens, targets, mode: str, capture: bool = False):
    from burn_autodiff import Autodiff

    if mode == "bf16 pure":
        try:
            inner = with_float_dtype(ctx["backend"], "bfloat16")
        except NotImplementedError as e:
            msg = str(e)

            def refused():
                raise NotImplementedError(msg)

            return refused
        device = Autodiff(inner).device(ctx["device"].index)
        # the harness syncs ctx's device after a timed loop: sync this backend's as well
        syncs, own = ctx["sync"], device.sync
        if not getattr(syncs["burn"], "_bf16", False):
            first = syncs["burn"]

            def both() -> None:
                first()
                own()

            both._bf16 = True
            syncs["burn"] = both
    else:
        device = ctx["ad_device"]
        if mode == "bf16 mixed":
            refused = _half_refused(ctx["device"])
            if refused is not None:
                return refused
    return _burn_step(device, size, tokens, targets, mode == "bf16 mixed", capture)


def build(ctx: dict, quick: bool) -> list[Case]:
    size = SIZES["quick" if quick else ctx.get("sizes", "cpu")]
    tokens, targets = _data(size)
    torch = ctx.get("torch")
    tdev = ctx.get("torch_device", "cpu")
    cases = []
    for mode in ("fp32", "bf16 pure", "bf16 mixed"):
        ref = None if torch is None else _torch_step(torch, size, tokens, targets, tdev, mode)
        burn = _burn_case(ctx, size, tokens, targets, mode)
        params = {**size, "vocab": VOCAB, "classes": CLASSES, "heads": 8, "mode": mode,
                  "backend": repr(ctx["backend"]), "torch_device": tdev}  # fmt: skip
        cases.append(Case(mode, params, {"burn": burn, "numpy": None, "torch": ref}))
        if _captures(ctx["backend"]):
            # the same step recorded once and replayed (`burn_fusion.capture`): beside the
            # same torch eager step (torch's own CUDA graph is the training_step suite's)
            burn = _burn_case(ctx, size, tokens, targets, mode, capture=True)
            cases.append(Case(f"{mode} captured", {**params, "captured": True},
                              {"burn": burn, "numpy": None, "torch": ref}))
    return cases


def _captures(backend) -> bool:
    """Whether steps on `backend` can be captured: a Fusion backend (`burn_fusion.capture`)."""
    return type(backend).__name__ == "Fusion"


SUITE = Suite(
    "transformer_precision",
    "transformer step (embedding, pre-norm encoder, GELU, mean, Linear, CE, Adam) in fp32, "
    "pure bf16 and mixed bf16 (f32 master weights) beside torch eager and torch.autocast",
    build,
    [],
    gpu_targets=[
        Target("pure bf16 step <= 1.0x torch eager bf16", "burn/torch", 1.0, ["bf16 pure"]),
        Target("mixed bf16 step <= 1.1x torch autocast bf16", "burn/torch", 1.1, ["bf16 mixed"]),
        Target("pure bf16 step, captured, <= 1.0x torch eager bf16", "burn/torch", 1.0,
               ["bf16 pure captured"]),
        Target("mixed bf16 step, captured, <= 1.1x torch autocast bf16", "burn/torch", 1.1,
               ["bf16 mixed captured"]),
    ],
    env={"OMP_WAIT_POLICY": "PASSIVE"},
    interleave_gpu=True,  # host-bound eager steps: burn and torch timed in turns
)
