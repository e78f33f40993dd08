"""float64 references of the module ops, written as nested loops over the definitions (never by a
backend): `conv` (convolutions, transposed ones, their gradients, unfold), `pool` (max/avg/adaptive
pools and their backward passes), `interp` (nearest/bilinear/bicubic interpolation), `grid`
(grid_sample_2d, affine_grid_2d), `ctc` (the CTC loss's alpha recursion), `volume` (3-D convolutions and pools, deform_conv2d)."""
