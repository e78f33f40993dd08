"""onnx-inference: the guide's digits model as an ONNX file, imported with ModelGen at first run."""

from .classify import MODEL_DIR, classify, generate, guide_result

__all__ = ["MODEL_DIR", "classify", "generate", "guide_result"]
