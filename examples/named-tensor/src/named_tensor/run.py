"""The program of Burn's `examples/named-tensor`, in burn-py.

Burn declares `NamedDim!(Batch)` etc. and types the tensors `NamedTensor<B, (Batch, SeqLength,
DModel)>`; two lines of its program are commented out because they do not compile. Here the
names are checked when the op runs, so those two lines are run too and their `TensorCheckError`
is printed: the same mistakes, caught at run time with both name lists in the message.
"""

from __future__ import annotations

from burn_tensor import Distribution, NamedDim, NamedTensor, TensorCheckError

Batch = NamedDim("Batch")
SeqLength = NamedDim("SeqLength")
DModel = NamedDim("DModel")


def _refused(label: str, attempt) -> str:
    """Run `attempt` (a mistake Burn's compiler rejects) and return its error message."""
    try:
        attempt()
    except TensorCheckError as err:
        return f"{label} => refused: {err}"
    raise AssertionError(f"{label} should have been refused by the dim-name check")


def run(device, batch_size: int = 32, seq_length: int = 48, d_model: int = 24) -> dict:
    """Burn's sizes by default (32, 48, 24). Prints the four tensors and the two refusals;
    returns them (the tensors and the messages) so a caller can check them."""
    weights = NamedTensor.random(
        [1, d_model, d_model], Distribution.default(), device, (Batch, DModel, DModel)
    )
    inputs = NamedTensor.random(
        [batch_size, seq_length, d_model], Distribution.default(), device, (Batch, SeqLength, DModel)
    )
    # Burn: "expected `&NamedTensor<B, (Batch, DModel, _)>`, found `(Batch, SeqLength, DModel)`"
    refused_matmul = _refused("weights.matmul(input)", lambda: weights.matmul(inputs))
    # (Batch, SeqLength, DModel) @ (Batch, DModel, DModel) -> (Batch, SeqLength, DModel);
    # the weights' batch of 1 broadcasts over the input's batch, as in Burn.
    output = inputs.matmul(weights)
    # Burn: "expected `(Batch, SeqLength, DModel)`, found `(Batch, DModel, DModel)`"
    refused_mul = _refused("output.mul(weights)", lambda: output.mul(weights))
    output = output.mul(inputs)
    permut = output.swap_dims(1, 2)

    print(f"Weights => {weights}")
    print(f"Input   => {inputs}")
    print(f"Output  => {output}")
    print(f"Permut  => {permut}")
    print(refused_matmul)
    print(refused_mul)
    return {
        "weights": weights, "input": inputs, "output": output, "permut": permut,
        "refused": [refused_matmul, refused_mul],
    }  # fmt: skip
