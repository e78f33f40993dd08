"""The custom training loop, data-parallel on several devices of one process.

Each device is a rank with its own thread, model replica and optimizer. Per step, every rank
takes its share of the global batch (`loader.iter_shards(devices)`), computes its loss and
gradients, weights them by its share of the items, and all-reduces them with the other ranks
(`burn_tensor.collective.all_reduce`); every rank then applies the same update, so the replicas
stay identical and the step equals one device's on the whole batch.
"""

from __future__ import annotations

import threading

from burn_dataset import DataLoaderBuilder
from burn_nn import CrossEntropyLossConfig
from burn_optim import GradientsParams
from burn_tensor.collective import ThreadGroup, all_reduce

from .data import DigitsBatcher
from .model import Model
from .training import EpochMetrics, TrainingConfig, _Mean, _step


def run_data_parallel(
    config: TrainingConfig, devices: list, train_set, valid_set, log=print
) -> tuple[Model, list[EpochMetrics]]:
    """`run` on several autodiff devices (one thread each); returns rank 0's model."""
    devices[0].seed(config.seed)
    model = config.model.init(devices[0])
    group = ThreadGroup(devices)
    replicas = [model.fork(d) for d in devices]  # the same initial parameters everywhere
    optims = [config.optimizer.init() for _ in devices]
    loader = (
        DataLoaderBuilder(DigitsBatcher())
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .build(train_set)
    )
    valid_loader = (
        DataLoaderBuilder(DigitsBatcher())
        .batch_size(config.batch_size)
        .set_device(devices[0].inner())
        .build(valid_set)
    )
    loss_fns = [CrossEntropyLossConfig().init(d) for d in devices]
    history: list[EpochMetrics] = []

    def rank_step(rank: int, shard, sums: list) -> None:
        model = replicas[rank]
        comm = group.communicator(rank)
        loss, acc = _step(model, loss_fns[rank], shard.batch)
        sums[rank] = (float(loss.into_scalar()), acc, shard.items)
        grads = GradientsParams.from_grads(loss.backward(), model)
        weight = shard.items / shard.total
        reduced = GradientsParams()
        for _, param in model.named_parameters():  # the same order on every rank
            reduced.register(param.id, all_reduce(grads.get(param.id) * weight, comm, "sum"))
        replicas[rank] = optims[rank].step(config.lr, model, reduced)

    for epoch in range(1, config.num_epochs + 1):
        train_mean = _Mean()
        for shards in loader.iter_shards(devices):
            if any(s.items == 0 for s in shards):
                raise ValueError("run_data_parallel: batch_size must be >= the number of devices")
            sums: list = [None] * len(devices)
            threads = [
                threading.Thread(target=rank_step, args=(r, s, sums)) for r, s in enumerate(shards)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if any(s is None for s in sums):
                group.abort("a rank failed")
                raise RuntimeError("a rank failed; see its traceback above")
            for loss, acc, n in sums:
                train_mean.add(loss, acc, n)
        model_valid = replicas[0].valid()
        valid_mean = _Mean()
        for batch in valid_loader:
            loss, acc = _step(model_valid, loss_fns[0], batch)
            valid_mean.add(float(loss.into_scalar()), acc, batch.targets.dims()[0])
        for metrics in (train_mean.result(epoch, "Train"), valid_mean.result(epoch, "Valid")):
            history.append(metrics)
            log(str(metrics))
    return replicas[0], history
