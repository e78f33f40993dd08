"""`MlflowMetricLogger`: one MLflow run per logger (extra `mlflow`, the mlflow-skinny client)."""

from __future__ import annotations

from ._scalar import ScalarMetricLogger


class MlflowMetricLogger(ScalarMetricLogger):
    """Logs metrics to an MLflow run through `MlflowClient` (no global active-run state).

    Metric keys are `<split>/<Metric>` (per item) and `epoch/<split>/<Metric>` (epoch means).
    The run ends `FINISHED` at `close()` (the Learner closes its loggers after training).

    Args:
        experiment: experiment name (created when missing).
        tracking_uri: e.g. `"file:/tmp/mlruns"`, `"http://host:5000"`; None uses MLflow's default
            (`MLFLOW_TRACKING_URI`).
        run_name: the run's name; `run_id` is readable after construction.
        params: run parameters logged once at start (the training config, say).

    Raises:
        ImportError: mlflow is missing (install `burn-train[mlflow]`).
    """

    def __init__(
        self,
        experiment: str = "burn",
        tracking_uri: str | None = None,
        run_name: str | None = None,
        params: dict | None = None,
    ) -> None:
        try:
            from mlflow.tracking import MlflowClient
        except ImportError as e:
            raise ImportError(
                "MlflowMetricLogger needs mlflow: pip install 'burn-train[mlflow]'"
            ) from e
        super().__init__()
        self.client = MlflowClient(tracking_uri=tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        exp_id = found.experiment_id if found else self.client.create_experiment(experiment)
        self.run_id = self.client.create_run(exp_id, run_name=run_name).info.run_id
        for key, value in (params or {}).items():
            self.client.log_param(self.run_id, key, value)
        self._closed = False

    def _scalar(self, key: str, value: float, step: int) -> None:
        self.client.log_metric(self.run_id, key, value, step=step)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.client.set_terminated(self.run_id, "FINISHED")
