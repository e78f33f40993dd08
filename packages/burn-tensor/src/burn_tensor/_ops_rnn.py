"""`rnn_sequence`: a whole ONNX RNN / GRU / LSTM layer (every time step, every direction) as one
backend op, with a default from existing backend ops so every backend runs it.

Shapes (ONNX's layout 0; G gates: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c)):
x [seq, batch, in], w [dirs, G*H, in], r [dirs, G*H, H], b [dirs, 2*G*H] (Wb then Rb) or None,
h0, c0 [dirs, batch, H] or None (zeros), p [dirs, 3H] (LSTM peepholes i, o, f) or None
-> (y [seq, dirs, batch, H], y_h [dirs, batch, H], y_c [dirs, batch, H] for LSTM else None).
`direction`: "forward", "reverse" or "bidirectional" (dirs 2: forward then reverse);
`activations`: a tuple of names ("sigmoid", "tanh", "relu"), the kind's count per direction;
`clip`: None or the bound of the pre-activation clamp; `linear_before_reset` (GRU),
`input_forget` (LSTM: f = 1 - i). The default projects the input of all steps with one matmul
per direction and runs each step as one matmul of h with R^T and the gate math.
"""

from __future__ import annotations

from ._dtype import DType

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ACTS = ("sigmoid", "tanh", "relu")
DEFAULT_ACTS = {"RNN": ("tanh",), "GRU": ("sigmoid", "tanh"), "LSTM": ("sigmoid", "tanh", "tanh")}


class RnnOps:
    """The default of `rnn_sequence` (a mixin of the backend contract)."""

    def rnn_sequence(
        self, x, w, r, b, h0, c0, p, kind, direction, activations, clip, linear_before_reset,
        input_forget,
    ):  # fmt: skip
        seq, batch, n_in = x.shape
        dirs, gh, hs = r.shape
        g = GATES[kind]
        per = len(DEFAULT_ACTS[kind])
        x2 = self.float_reshape(x, (seq * batch, n_in))

        def part(t, d, lo, hi):  # t[d, lo:hi] (rank 2 or 3) without the leading dim
            sl = (slice(d, d + 1, 1), slice(lo, hi, 1)) + tuple(
                slice(0, n, 1) for n in t.shape[2:]
            )
            return self.float_reshape(self.float_slice(t, sl), (hi - lo,) + tuple(t.shape[2:]))

        def cols(t, lo, hi):  # t[:, lo:hi] of a rank-2 tensor
            return self.float_slice(t, (slice(0, t.shape[0], 1), slice(lo, hi, 1)))

        def zeros():
            return self.float_zeros((batch, hs), self.device_of(x), DType.from_np(x.dtype))

        fns = {"sigmoid": self.sigmoid, "tanh": self.float_tanh, "relu": self.relu}

        def clip_(t):
            return t if clip is None else self.float_clamp(t, -clip, clip)

        ys, yh, yc = [], [], []
        for d in range(dirs):
            f = [fns[a] for a in activations[d * per : (d + 1) * per]]
            wd = part(w, d, 0, gh)
            rd_t = self.float_swap_dims(part(r, d, 0, gh), 0, 1)  # [H, G*H]
            xw = self.float_matmul(x2, self.float_swap_dims(wd, 0, 1))  # [seq*batch, G*H]
            rb = None
            if b is not None:
                xw = self.float_add(xw, self.float_reshape(part(b, d, 0, gh), (1, gh)))
                rb = self.float_reshape(part(b, d, gh, 2 * gh), (1, gh))
            h = part(h0, d, 0, batch) if h0 is not None else zeros()
            c = None
            if kind == "LSTM":
                c = part(c0, d, 0, batch) if c0 is not None else zeros()
            if p is not None:
                pi, po, pf = (self.float_reshape(part(p, d, k * hs, (k + 1) * hs), (1, hs)) for k in range(3))
            reverse = direction == "reverse" or d == 1
            out = [None] * seq
            for t in range(seq - 1, -1, -1) if reverse else range(seq):
                xt = self.float_slice(xw, (slice(t * batch, (t + 1) * batch, 1), slice(0, gh, 1)))
                hr = self.float_matmul(h, rd_t)  # [batch, G*H]
                if rb is not None:
                    hr = self.float_add(hr, rb)
                if kind == "RNN":
                    h = f[0](clip_(self.float_add(xt, hr)))
                elif kind == "GRU":
                    zr = self.float_add(cols(xt, 0, 2 * hs), cols(hr, 0, 2 * hs))
                    z = f[0](clip_(cols(zr, 0, hs)))
                    rg = f[0](clip_(cols(zr, hs, 2 * hs)))
                    if linear_before_reset:
                        hh = self.float_add(cols(xt, 2 * hs, 3 * hs), self.float_mul(rg, cols(hr, 2 * hs, 3 * hs)))
                    else:
                        rh_t = cols(rd_t, 2 * hs, 3 * hs)  # [H, H]
                        hh = self.float_matmul(self.float_mul(rg, h), rh_t)
                        if rb is not None:
                            hh = self.float_add(hh, cols(rb, 2 * hs, 3 * hs))
                        hh = self.float_add(cols(xt, 2 * hs, 3 * hs), hh)
                    hh = f[1](clip_(hh))
                    h = self.float_add(hh, self.float_mul(z, self.float_sub(h, hh)))
                else:
                    gates = self.float_add(xt, hr)
                    gi, go, gf, gc = (cols(gates, k * hs, (k + 1) * hs) for k in range(4))
                    if p is not None:
                        gi = self.float_add(gi, self.float_mul(pi, c))
                        gf = self.float_add(gf, self.float_mul(pf, c))
                    i = f[0](clip_(gi))
                    fg = self.float_neg(self.float_sub_scalar(i, 1.0)) if input_forget else f[0](clip_(gf))
                    c = self.float_add(self.float_mul(fg, c), self.float_mul(i, f[1](clip_(gc))))
                    if p is not None:
                        go = self.float_add(go, self.float_mul(po, c))
                    h = self.float_mul(f[0](clip_(go)), f[2](c))
                out[t] = self.float_reshape(h, (1, 1, batch, hs))
            if seq == 0:  # no steps: an empty y, the initial states as the last ones
                ys.append(self.float_zeros((0, 1, batch, hs), self.device_of(x), DType.from_np(x.dtype)))
            else:
                ys.append(self.float_cat(out, 0))
            yh.append(self.float_reshape(h, (1, batch, hs)))
            if c is not None:
                yc.append(self.float_reshape(c, (1, batch, hs)))
        y = ys[0] if dirs == 1 else self.float_cat(ys, 1)
        h_out = yh[0] if dirs == 1 else self.float_cat(yh, 0)
        c_out = None if kind != "LSTM" else (yc[0] if dirs == 1 else self.float_cat(yc, 0))
        return y, h_out, c_out
