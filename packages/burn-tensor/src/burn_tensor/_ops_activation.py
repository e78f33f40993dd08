"""Activation ops, all with defaults composed from float ops (backends may override for speed)."""

from __future__ import annotations

import math


class ActivationOps:
    def relu(self, x):
        return self.float_mask_fill(x, self.float_lower_equal_elem(x, 0.0), 0.0)

    def relu_backward(self, output, grad):
        return self.float_mask_fill(grad, self.float_lower_equal_elem(output, 0.0), 0.0)

    def leaky_relu(self, x, negative_slope):
        return self.float_mask_where(
            x, self.float_lower_elem(x, 0.0), self.float_mul_scalar(x, negative_slope)
        )

    def prelu(self, x, alpha):
        return self.float_mask_where(x, self.float_lower_elem(x, 0.0), self.float_mul(x, alpha))

    def gelu(self, x):
        # x * 0.5 * (1 + erf(x / sqrt(2)))
        cdf = self.float_add_scalar(self.float_erf(self.float_div_scalar(x, math.sqrt(2.0))), 1.0)
        return self.float_mul(self.float_mul_scalar(x, 0.5), cdf)

    def gelu_backward(self, x, grad):
        cdf = self.float_mul_scalar(
            self.float_add_scalar(self.float_erf(self.float_div_scalar(x, math.sqrt(2.0))), 1.0),
            0.5,
        )
        pdf = self.float_mul_scalar(
            self.float_exp(self.float_mul_scalar(self.float_mul(x, x), -0.5)),
            1.0 / math.sqrt(2.0 * math.pi),
        )
        return self.float_mul(grad, self.float_add(cdf, self.float_mul(x, pdf)))

    def sigmoid(self, x):
        # exp(-log(1 + exp(-x))) with the sign split so no exp overflows.
        neg = self.float_lower_elem(x, 0.0)
        e = self.float_exp(self.float_neg(self.float_abs(x)))  # in (0, 1]
        one_plus = self.float_add_scalar(e, 1.0)
        pos_val = self.float_recip(one_plus)
        neg_val = self.float_div(e, one_plus)
        return self.float_mask_where(pos_val, neg, neg_val)

    def sigmoid_backward(self, output, grad):
        return self.float_mul(
            grad, self.float_mul(output, self.float_add_scalar(self.float_neg(output), 1.0))
        )

    def silu(self, x):
        # x * sigmoid(x); a backend may do it in one pass (NdArray's native kernel)
        return self.float_mul(x, self.sigmoid(x))

    def hard_swish(self, x):
        # x * hard_sigmoid(x, 1/6, 1/2); a backend may do it in one pass (NdArray's native kernel)
        return self.float_mul(x, self.hard_sigmoid(x, 1.0 / 6.0, 0.5))

    def hard_sigmoid(self, x, alpha, beta):
        return self.float_clamp(
            self.float_add_scalar(self.float_mul_scalar(x, alpha), beta), 0.0, 1.0
        )

    def log_sigmoid(self, x):
        # -softplus(-x) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
        m = self.float_clamp_max(x, 0.0)
        return self.float_sub(
            m, self.float_log1p(self.float_exp(self.float_neg(self.float_abs(x))))
        )

    def log_sigmoid_backward(self, x, grad):
        # d/dx log(sigmoid(x)) = 1 - sigmoid(x) = sigmoid(-x)
        return self.float_mul(grad, self.sigmoid(self.float_neg(x)))

    # -- softmax family: one op each so a backend can run a row in one pass (NdArray's native
    # kernel, one CUDA/OpenCL kernel) instead of five ops over the whole tensor. `dim` is a
    # validated non-negative int; the Tensor layer returns empty reductions before calling these.
    def softmax(self, x, dim):
        # exp(x - max) / sum(exp(x - max)): the shift keeps exp from overflowing.
        e = self.float_exp(self.float_sub(x, self.float_max_dim(x, dim)))
        return self.float_div(e, self.float_sum_dim(e, dim))

    def log_softmax(self, x, dim):
        # (x - max) - log(sum(exp(x - max)))
        shifted = self.float_sub(x, self.float_max_dim(x, dim))
        return self.float_sub(
            shifted, self.float_log(self.float_sum_dim(self.float_exp(shifted), dim))
        )

    def softmax_backward(self, output, grad, dim):
        # dL/dx = y * (g - sum(g * y)) along dim, from the softmax output y.
        dot = self.float_sum_dim(self.float_mul(grad, output), dim)
        return self.float_mul(output, self.float_sub(grad, dot))

    def log_softmax_backward(self, output, grad, dim):
        # dL/dx = g - exp(y) * sum(g) along dim, from the log-softmax output y.
        total = self.float_sum_dim(grad, dim)
        return self.float_sub(grad, self.float_mul(self.float_exp(output), total))
