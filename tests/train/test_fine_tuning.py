"""`dtmr.train.fine_tuning`: the settings a run started from a checkpoint must share with it (issue 42)."""

import pytest

from dtmr.errors import DtmrError
from dtmr.models.checkpoints.header import read_checkpoint_header
from dtmr.resources import MODELS_DIR, resource_path
from dtmr.train.fine_tuning import fine_tuning

MODELS = resource_path(*MODELS_DIR)


def test_the_bundled_models_name_their_preset_and_model_options():
    tuning = fine_tuning(read_checkpoint_header(MODELS / "dtmr_small_beta0.2.pt"))
    assert (tuning.method, tuning.preset, tuning.beta) == ("dtmr", "small", 0.2)
    assert tuning.model_options == (("output_head", "kinematic"), ("residual", "naive"))
    full = fine_tuning(read_checkpoint_header(MODELS / "dtmr_small_beta1.0.pt"))
    assert full.model_options == (("output_head", "kinematic"),)


def test_a_fitted_model_is_not_a_start():
    with pytest.raises(DtmrError, match="k-same model is not trained by `dtmr train`"):
        fine_tuning(read_checkpoint_header(MODELS / "ksame_k20_means.pt"))

