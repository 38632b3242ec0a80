"""Model checkpoints: `checkpoint` saves and loads them (and builds the model a file names through the
registered method builders); `header` reads what a file is without its weights (torch-free until a file is read)."""
