"""What anonymizes a release's clips: a checkpoint (through `Anonymizer`) or a parameter-free method of
dtmr/eval/methods.py, behind one call, and `MethodInfo`, what a release records about it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import DtmrError
from ..eval.methods import EvalMethod
from ..methods import method as registered_method
from ..methods import names

#: the model batches of `--batch auto` on the CPU (and of every run before `--batch` existed)
AUTO = "auto"


@dataclass(frozen=True)
class MethodInfo:
    """The method as the run's settings, the release's attributes and its key name it (picklable: a
    `--workers` process sends it to the parent, which never loads the model)."""

    name: str
    beta: float | None
    model: str
    topology: str
    uses_references: bool


def parameter_free_info(method: str, topology: str) -> MethodInfo:
    """The MethodInfo of a parameter-free method, refused when unknown."""
    free = names("parameter-free")
    if method not in free:
        raise DtmrError(f"unknown method {method!r} (parameter-free methods: {', '.join(free)})")
    return MethodInfo(name=method, beta=None, model=method, topology=topology,
                      uses_references=registered_method(method).needs_references)


class Method:
    """A checkpoint on `device` (in model batches of `batch`, "auto" or a clip count, at `precision`, with
    the decode in a CUDA graph when `cuda_graph`; `sharing` processes of the run on the same device), or the
    parameter-free `method`."""

    def __init__(self, model: str | Path | None, method: str | None, device: str | None, topology: str, *,
                 batch: int | str = AUTO, precision: str = "fp32", cuda_graph: bool = False, sharing: int = 1):
        if (model is None) == (method is None):
            raise DtmrError("give a model checkpoint or a parameter-free method, not both")
        self.batch, self.sharing = batch, sharing
        if model is not None:
            from ..models.anonymizer import Anonymizer

            self.anonymizer = Anonymizer.from_checkpoint(model, device=device, precision=precision,
                                                         cuda_graph=cuda_graph)
            self.info = MethodInfo(name=self.anonymizer.method, beta=self.anonymizer.beta, model=Path(model).name,
                                   topology=self.anonymizer.topology.name, uses_references=True)
        else:
            if precision != "fp32" or cuda_graph:
                raise DtmrError("--precision and --cuda-graph apply to a model checkpoint, not to a parameter-free "
                                "method")
            self.anonymizer = None
            self.info = parameter_free_info(method, topology)

    def model_batch(self, chunk: int) -> int:
        """The model batch for chunks of `chunk` clips: `batch`, or for "auto" what `Anonymizer.auto_batch_size`
        picks (32 on the CPU), never more than a chunk."""
        if self.batch == AUTO:
            return self.anonymizer.auto_batch_size(chunk, self.sharing) if self.anonymizer is not None else chunk
        return min(int(self.batch), chunk)

    def run(self, clips: Sequence[Clip], references: Sequence[Clip], indices: Sequence[int], seed: int,
            batch: int, action_names: Sequence[str] | None = None) -> list[Clip]:
        """The released clips; `action_names` are the sources' (see `Anonymizer.anonymize_batch`)."""
        if self.anonymizer is not None:
            return self.anonymizer.anonymize_batch(clips, references, batch_size=batch, action_names=action_names)
        method = EvalMethod(self.info.name)
        # one call per clip, seeded by its source index, so the noise does not depend on the release order
        return [method.anonymize([clip], [ref], clip_seed(seed, i))[0]
                for clip, ref, i in zip(clips, references, indices)]


def clip_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])
