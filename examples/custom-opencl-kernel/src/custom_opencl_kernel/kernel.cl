// The book's fused matmul + add + ReLU kernel (kernel.wgsl), in OpenCL C.
// `{{ elem }}`, `{{ workgroup_size_x }}` and `{{ workgroup_size_y }}` are filled by
// SourceTemplate.register before compilation; `info` is build_info([lhs, rhs, output]).
// One work-item per output element: a straightforward matmul, no tiling, as in the book.

#define BLOCK_SIZE {{ workgroup_size_x }}u

__kernel __attribute__((reqd_work_group_size({{ workgroup_size_x }}, {{ workgroup_size_y }}, 1)))
void fused_matmul_add_relu(
    __global const {{ elem }}* lhs,
    __global const {{ elem }}* rhs,
    __global const {{ elem }}* bias,
    __global {{ elem }}* output,
    __global const uint* info
) {
    // Indices
    uint local_idx = get_local_id(1) * BLOCK_SIZE + get_local_id(0);
    uint row = get_group_id(0) * BLOCK_SIZE + (local_idx / BLOCK_SIZE);
    uint col = get_group_id(1) * BLOCK_SIZE + (local_idx % BLOCK_SIZE);
    uint batch = get_global_id(2);

    // Basic information
    uint dim = info[0];
    uint n_rows = info[6u * dim - 1u];
    uint n_cols = info[6u * dim];
    uint K = info[5u * dim - 1u];

    // Returns if outside the output dimension
    if (row >= n_rows || col >= n_cols) {
        return;
    }

    // Calculate the corresponding offsets with support for broadcasting.
    uint offset_output = batch * n_rows * n_cols;
    uint offset_lhs = 0u;
    uint offset_rhs = 0u;

    uint batch_dims = dim - 2u;
    for (uint b = 1u; b <= batch_dims; b++) {
        uint stride_lhs = info[b];
        uint stride_rhs = info[b + dim];
        uint stride_output = info[b + 2u * dim];
        uint shape_lhs = info[b + 3u * dim];
        uint shape_rhs = info[b + 4u * dim];

        offset_lhs += offset_output / stride_output % shape_lhs * stride_lhs;
        offset_rhs += offset_output / stride_output % shape_rhs * stride_rhs;
    }

    // Basic matmul implementation
    {{ elem }} sum = 0;
    for (uint k = 0u; k < K; k++) {
        uint lhs_index = row * K + k;
        uint rhs_index = k * n_cols + col;

        sum += lhs[offset_lhs + lhs_index] * rhs[offset_rhs + rhs_index];
    }

    uint output_index = row * n_cols + col;
    uint index = offset_output + output_index;

    // Add and ReLU
    output[index] = max(sum + bias[index], ({{ elem }})0);
}
