"""One training step of a transformer encoder (Burn's `transformer_encoder` suite name).

d_model 512, 8 heads, d_ff 2048, 6 pre-norm (`norm_first`) layers, GELU, batch 32 x 128 tokens,
float32: forward + mean-squared error against a fixed target + backward + Adam step (burn:
`TransformerEncoder` on `Autodiff(backend)`, `AdamConfig().init().step`; torch:
`nn.TransformerEncoder` of `TransformerEncoderLayer(batch_first=True, norm_first=True,
activation="gelu")`, `torch.optim.Adam(eps=1e-5)`). Dropout is 0 on both sides (with attention
dropout on, burn's `MultiHeadAttention` composes its attention; torch's too).

Also the inference forward alone (`forward` on the inner backend / under `torch.no_grad`).
"""

from __future__ import annotations

from .._harness import Case, Suite, Target
from ._common import rand

D_MODEL, HEADS, D_FF, LAYERS, BATCH, SEQ = 512, 8, 2048, 6, 32, 128
LR = 1e-4


def _burn_step(device, x, y, sizes):
    from burn_nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
    from burn_optim import AdamConfig, GradientsParams
    from burn_tensor import Tensor

    d, h, ff, n = sizes
    device.seed(0)
    model = TransformerEncoderConfig(d, ff, h, n, dropout=0.0, norm_first=True).init(device)
    xt, yt = Tensor.from_data(x, device), Tensor.from_data(y, device)
    optim = AdamConfig().init()
    state = {"model": model}

    def step():
        m = state["model"]
        out = m.forward(TransformerEncoderInput.new(xt))
        loss = (out - yt).powf_scalar(2.0).mean()
        grads = GradientsParams.from_grads(loss.backward(), m)
        state["model"] = optim.step(LR, m, grads)
        return loss

    def forward():
        return state["model"].valid().forward(TransformerEncoderInput.new(xt.inner()))

    return step, forward


def _torch_step(torch, x, y, sizes, dev):
    d, h, ff, n = sizes
    nn = torch.nn
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d, h, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    # enable_nested_tensor only matters with padding masks (none here); off avoids its warning
    model = nn.TransformerEncoder(layer, n, enable_nested_tensor=False).to(dev).train()
    xt, yt = torch.from_numpy(x.copy()).to(dev), torch.from_numpy(y.copy()).to(dev)
    optim = torch.optim.Adam(model.parameters(), lr=LR, eps=1e-5)

    def step():
        optim.zero_grad(set_to_none=True)
        loss = ((model(xt) - yt) ** 2).mean()
        loss.backward()
        optim.step()
        return loss

    def forward():
        with torch.no_grad():
            return model(xt)

    return step, forward


def build(ctx: dict, quick: bool) -> list[Case]:
    sizes = (16, 2, 32, 2) if quick else (D_MODEL, HEADS, D_FF, LAYERS)
    b, s = (2, 8) if quick else (BATCH, SEQ)
    x, y = rand((b, s, sizes[0]), 0), rand((b, s, sizes[0]), 1)
    burn_step, burn_fwd = _burn_step(ctx["ad_device"], x, y, sizes)
    torch = ctx.get("torch")
    tdev = ctx.get("torch_device", "cpu")
    t_step, t_fwd = (None, None) if torch is None else _torch_step(torch, x, y, sizes, tdev)
    params = {"d_model": sizes[0], "heads": sizes[1], "d_ff": sizes[2], "layers": sizes[3],
              "batch": b, "seq": s, "norm_first": True, "dropout": 0.0}  # fmt: skip
    return [
        Case(f"train step b{b} s{s} d{sizes[0]}", dict(params, optimizer="adam"),
             {"burn": burn_step, "numpy": None, "torch": t_step}),  # fmt: skip
        Case(f"forward b{b} s{s} d{sizes[0]}", params,
             {"burn": burn_fwd, "numpy": None, "torch": t_fwd}),  # fmt: skip
    ]


SUITE = Suite(
    "transformer_encoder",
    "transformer encoder (6 pre-norm layers, d_model 512, 8 heads, b32 x 128) train step, f32",
    build,
    [Target("train step <= 1.2x torch CPU", "burn/torch", 1.2, ["train step b32 s128 d512"])],
    gpu_targets=[Target("train step <= 1.2x torch eager", "burn/torch", 1.2)],
    env={"OMP_WAIT_POLICY": "PASSIVE"},
)
