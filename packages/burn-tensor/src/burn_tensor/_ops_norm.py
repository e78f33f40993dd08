"""Layer normalization (Burn's `layer_norm` module op) and its backward primitive.

`layer_norm(x, gamma, beta, epsilon)`: (x - mean) / sqrt(var + epsilon) * gamma (+ beta) over the
last dim, var biased. As one op, a training step's layer norm is one recorded node instead of
about ten (mean, sub, square, mean, add, sqrt, div, mul, add and their backward graphs), and a
backend can run each row in one pass.

`layer_norm_backward(x, gamma, output_grad, epsilon) -> (dx, dgamma, dbeta)` recomputes the
row statistics from x (one pass; nothing but x is kept): with xhat = (x - mean) * rstd and
gg = output_grad * gamma, dx = rstd * (gg - mean(gg) - xhat * mean(gg * xhat)),
dgamma = sum over rows of output_grad * xhat, dbeta = sum over rows of output_grad.
Shapes: x [..., d], gamma/beta [d] (beta None: no bias), output_grad [..., d].
"""

from __future__ import annotations

import math


class NormOps:
    def layer_norm(self, x, gamma, beta, epsilon):
        """Layer norm of x [..., d] over its last dim, scaled by gamma [d] (+ beta [d])."""
        xhat, _ = self._layer_norm_xhat(x, epsilon)
        out = self.float_mul(xhat, self._row_param(gamma, x))
        return out if beta is None else self.float_add(out, self._row_param(beta, x))

    def layer_norm_backward(self, x, gamma, output_grad, epsilon):
        """(dx [..., d], dgamma [d], dbeta [d]) of `layer_norm` for output_grad [..., d]."""
        last = len(x.shape) - 1
        xhat, rstd = self._layer_norm_xhat(x, epsilon)
        gg = self.float_mul(output_grad, self._row_param(gamma, x))
        mean_gg = self.float_mean_dim(gg, last)
        mean_ggx = self.float_mean_dim(self.float_mul(gg, xhat), last)
        inner = self.float_sub(self.float_sub(gg, mean_gg), self.float_mul(xhat, mean_ggx))
        dx = self.float_mul(inner, rstd)
        d = x.shape[-1]
        n = math.prod(x.shape[:-1])
        gx = self.float_reshape(self.float_mul(output_grad, xhat), (n, d))
        dgamma = self.float_reshape(self.float_sum_dim(gx, 0), (d,))
        g2 = self.float_reshape(output_grad, (n, d))
        dbeta = self.float_reshape(self.float_sum_dim(g2, 0), (d,))
        return dx, dgamma, dbeta

    def _layer_norm_xhat(self, x, epsilon):
        """((x - mean) * rstd, rstd) with rstd = 1 / sqrt(var + epsilon) along the last dim."""
        last = len(x.shape) - 1
        centered = self.float_sub(x, self.float_mean_dim(x, last))
        var = self.float_mean_dim(self.float_mul(centered, centered), last)
        rstd = self.float_recip(self.float_sqrt(self.float_add_scalar(var, epsilon)))
        return self.float_mul(centered, rstd), rstd

    def _row_param(self, p, x):
        """A [d] parameter as [1, ..., 1, d] to broadcast against x."""
        return self.float_reshape(p, (1,) * (len(x.shape) - 1) + (x.shape[-1],))
