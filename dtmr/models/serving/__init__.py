"""Inference serving: what runs a trained model fast without changing the function it computes.

- `prepare.prepare_for_inference(model)`: the CPU speed paths put in place (BatchNorm folded into the
  convolutions, the shifted-view max-pool, the MixFormer batch in chunks, the decoder's rearranged step layers);
- `runner.ModelRunner`: batches on the CPU or a CUDA device (pinned copies, bf16 autocast, automatic batch);
- `cuda_graph.GraphedRetarget`: the cached decode replayed from a CUDA graph.

The paper's modules (`dtmr.models.mixformer`, `dtmr.models.decoder`) know nothing of these.
"""
