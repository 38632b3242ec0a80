"""The arithmetic a model runs in, torch-free so that the command lines' parsers can offer it without loading
torch: float32, or bfloat16 autocast with the weights kept in float32 (`--precision` of `dtmr anonymize`,
`dtmr train` and the benchmarks; `ModelRunner`, the DisentangledTMR trainer).
"""

PRECISIONS = ("fp32", "bf16")
