"""The benchmark suites, by name (Burn's suite names)."""

from __future__ import annotations

from . import (
    attention,
    autodiff,
    binary,
    conv2d,
    conv3d,
    custom_gelu,
    launch_overhead,
    matmul,
    max_pool2d,
    reduce,
    softmax,
    surface,
    training_step,
    transformer_encoder,
    transformer_precision,
    unary,
)

SUITES = {
    m.SUITE.name: m.SUITE
    for m in (
        launch_overhead,
        binary,
        unary,
        matmul,
        conv2d,
        conv3d,
        max_pool2d,
        reduce,
        softmax,
        training_step,
        autodiff,
        custom_gelu,
        attention,
        transformer_encoder,
        transformer_precision,
        surface,
    )
}
