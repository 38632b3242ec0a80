"""k-same motion (dtmr/models/motion/ksame.py) on tiny synthetic pools."""

import numpy as np
import pytest
import torch

from dtmr.data.synthetic import generate_clips
from dtmr.errors import CheckpointError
from dtmr.models import Anonymizer, Retargeter
from dtmr.models.baselines import NaiveRetargeter
from dtmr.models.checkpoints.checkpoint import (
    build_model_from_checkpoint,
    load_checkpoint,
    save_checkpoint,
)
from dtmr.models.motion import KSameMotion, Retimer, TemplateBank, fit_motion_model
from dtmr.models.motion.dtw import bone_direction_features, pair_distances, warp_onto
from dtmr.skeleton import NTU25, normalize
from dtmr.train.data import prepare_clips


@pytest.fixture(scope="module")
def pool():
    """4 subjects x 3 actions x 2 repetitions, normalized."""
    return prepare_clips(generate_clips(subjects=4, actions=3, repetitions=2, seed=0), "ntu25")


def fit(pool, k, timing="source"):
    return fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=k, timing=timing)


def test_k_1_is_the_naive_retarget(pool):
    model = fit(pool, 1)
    src, ref = torch.from_numpy(pool.joints[:4]), torch.from_numpy(pool.joints[10:14])
    assert isinstance(model, Retargeter) and model.method == "ksame" and model.beta == 1.0
    assert torch.equal(model.retarget(src, ref), NaiveRetargeter("ntu25")(src, ref))
    # on the template's timing, k = 1 is the re-timed naive retarget
    expected = Retimer("ntu25", model.bank, naive=True)(src, ref)
    torch.testing.assert_close(fit(pool, 1, "template").retarget(src, ref), expected)


def test_k_2_of_two_identical_clips_returns_that_clip(pool):
    clip = torch.from_numpy(pool.joints[2])
    twins = torch.stack([clip, clip])  # the same performance, filed under two subjects
    bank = TemplateBank("ntu25", clip[None], torch.tensor([7]))
    model = KSameMotion("ntu25", bank, twins, torch.tensor([7, 7]), torch.tensor([1, 2]), k=2)
    src, ref = clip[None], torch.from_numpy(pool.joints[9:10])
    for subjects in (torch.tensor([1]), None):
        assert torch.equal(model.average(src, subjects=subjects), src)
    assert torch.equal(model.retarget(src, ref, subjects=torch.tensor([1])), NaiveRetargeter("ntu25")(src, ref))


def test_partners_are_the_nearest_clips_of_k_minus_1_other_subjects_of_the_same_action(pool):
    model = fit(pool, 3)
    src = torch.from_numpy(pool.joints[[0, 9]])  # subject 1 action 1 rep 0, subject 2 action 2 rep 1
    subjects = torch.from_numpy(pool.subjects[[0, 9]])
    partners, template = model.partners(src, actions=torch.from_numpy(pool.actions[[0, 9]]), subjects=subjects)
    assert partners.shape == (2, 2) and model.bank.actions[template].tolist() == [1, 2]
    for b in range(2):
        chosen = partners[b].numpy()
        assert (pool.actions[chosen] == pool.actions[[0, 9]][b]).all()
        assert len(set(pool.subjects[chosen])) == 2 and int(subjects[b]) not in pool.subjects[chosen]
        # brute force: every other subject's nearest clip of the action, the two nearest subjects kept
        candidates = np.flatnonzero((pool.actions == pool.actions[[0, 9]][b]) & (pool.subjects != int(subjects[b])))
        dist = pair_distances(bone_direction_features(src[b:b + 1], NTU25),
                              bone_direction_features(torch.from_numpy(pool.joints), NTU25),
                              np.stack([np.zeros_like(candidates), candidates], axis=1))
        best = {}
        for c in candidates[np.argsort(dist, kind="stable")]:
            best.setdefault(pool.subjects[c], c)
        assert list(chosen) == list(best.values())[:2]
    # unlabelled: the action is the nearest template's and the source's own clip may be its nearest partner
    unlabelled, _ = model.partners(src)
    assert unlabelled.shape == (2, 2) and int(unlabelled[0, 0]) == 0


def test_the_average_has_the_sources_timing_or_the_templates(pool):
    src, ref = torch.from_numpy(pool.joints[:2]), torch.from_numpy(pool.joints[5:7])
    for timing in ("source", "template"):
        model = fit(pool, 3, timing)
        out = model.retarget(src, ref, subjects=torch.from_numpy(pool.subjects[:2]))
        assert out.shape == src.shape and torch.isfinite(out).all()
        assert not torch.allclose(out, NaiveRetargeter("ntu25")(src, ref))  # the partners moved it


def test_a_pool_without_k_subjects_per_action_is_refused(pool):
    with pytest.raises(ValueError, match="k = 5 needs 5 subjects per action in the pool; action 1 has 4"):
        fit(pool, 5)
    with pytest.raises(ValueError, match="timing must be one of source, template"):
        fit(pool, 2, "reference")
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        fit(pool, 0)
    model = fit(pool, 2)
    with pytest.raises(ValueError, match=r"the pool's actions \[1, 2\] are not the templates' \[1, 2, 3\]"):
        keep = model.pool_actions != 3
        KSameMotion("ntu25", model.bank, model.pool[keep], model.pool_actions[keep], model.pool_subjects[keep], k=2)


def test_file_round_trip_and_the_anonymizer_passes_the_subjects(pool, tmp_path):
    model = fit(pool, 3, "template")
    path = save_checkpoint(tmp_path / "ksame_k3.pt", model, data={"dataset": "toy"}, metrics={})
    checkpoint = torch.load(path, weights_only=True)  # tensors and plain types only
    assert checkpoint["config"] == {"k": 3, "timing": "template"}
    assert set(checkpoint["state_dict"]) == {"bank.templates", "bank.actions", "pool", "pool_actions",
                                             "pool_subjects"}
    loaded = build_model_from_checkpoint(load_checkpoint(path), source=path)
    src, ref = torch.from_numpy(pool.joints[:3]), torch.from_numpy(pool.joints[3:6])
    assert type(loaded) is KSameMotion and loaded.config_dict() == model.config_dict()
    torch.testing.assert_close(loaded.retarget(src, ref), model.retarget(src, ref))

    anonymizer = Anonymizer.from_checkpoint(path, device="cpu")
    source, reference = pool.clips[0], pool.clips[7]  # subject 1, whose clips are in the pool
    retargeted, released = anonymizer.retarget_pair(source, reference)
    assert anonymizer.method == "ksame" and released.num_frames == source.num_frames
    np.testing.assert_allclose(released.joints, retargeted.joints, atol=1e-5)
    (src_n, transform), (ref_n, _) = normalize(source.joints, NTU25), normalize(reference.joints, NTU25)
    src_n, ref_n = torch.from_numpy(src_n)[None], torch.from_numpy(ref_n)[None]
    expected = loaded.retarget(src_n, ref_n, subjects=torch.tensor([1]))  # its own clips excluded
    np.testing.assert_allclose(released.joints, transform.invert(expected[0].numpy()), atol=1e-5)
    assert not torch.allclose(expected, loaded.retarget(src_n, ref_n))  # unlabelled, it is its own partner


def test_a_file_without_its_pool_or_with_too_few_subjects_is_one_checkpoint_error(pool, tmp_path):
    path = save_checkpoint(tmp_path / "ksame.pt", fit(pool, 2), data={}, metrics={})
    checkpoint = load_checkpoint(path)
    del checkpoint["state_dict"]["pool_subjects"]
    with pytest.raises(CheckpointError, match=r"ksame\.pt: invalid ksame configuration: the file holds no k-same pool"):
        build_model_from_checkpoint(checkpoint, source=path)
    checkpoint = load_checkpoint(path)
    checkpoint["config"]["k"] = 4
    checkpoint["state_dict"]["pool_subjects"][:] = 1
    with pytest.raises(CheckpointError, match="k = 4 needs 4 subjects per action"):
        build_model_from_checkpoint(checkpoint, source=path)


def test_the_anonymizer_passes_an_action_label_only_where_library_and_file_name_it_alike(pool, tmp_path):
    from dtmr.data.label_set import record_label_set
    from dtmr.data.synthetic import SYNTHETIC_ACTION_NAMES

    names = ["", *SYNTHETIC_ACTION_NAMES[:3]]  # a library's action_names, indexed by the 1-based label
    data = record_label_set({"path": "toy.h5", "topology": "ntu25", "actions": [1, 2, 3],
                             "action_names": names[1:], "subjects": [1, 2, 3, 4]})
    path = save_checkpoint(tmp_path / "ksame_k2.pt", fit(pool, 2), data=data, metrics={})
    anonymizer = Anonymizer.from_checkpoint(path, device="cpu")
    loaded = anonymizer.model
    source = pool.clips[0].replace(action=2)  # an action-1 performance filed as action 2: the label decides
    reference = pool.clips[7]
    (src_n, transform), (ref_n, _) = normalize(source.joints, NTU25), normalize(reference.joints, NTU25)
    src_n, ref_n = torch.from_numpy(src_n)[None], torch.from_numpy(ref_n)[None]
    subject = torch.tensor([source.subject])
    labelled = transform.invert(loaded.retarget(src_n, ref_n, actions=torch.tensor([2]), subjects=subject)[0].numpy())
    nearest = transform.invert(loaded.retarget(src_n, ref_n, subjects=subject)[0].numpy())
    assert not np.allclose(labelled, nearest, atol=1e-3)

    released = anonymizer.anonymize_batch([source], [reference], action_names=names)[0]
    np.testing.assert_allclose(released.joints, labelled, atol=1e-5)
    renamed = ["", "walk in place", "jump", "clap"]  # label 2 means another action in this library
    for action_names in (renamed, None):
        released = anonymizer.anonymize_batch([source], [reference], action_names=action_names)[0]
        np.testing.assert_allclose(released.joints, nearest, atol=1e-5)


def _embedder(labels=(1, 2, 3), task="action", topology="ntu25"):
    """An untrained action recognizer (fixed seed): its embedding is still a fixed function of the clip."""
    from dtmr.models.recognizers import Recognizer

    torch.manual_seed(0)
    return Recognizer.create(task, list(labels), topology=topology).eval()


def test_with_an_embedder_an_unlabelled_source_takes_the_nearest_pool_clips_in_the_embedding(pool):
    plain = fit(pool, 3)
    model = fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=3, embedder=_embedder())
    src = torch.from_numpy(pool.joints[[0, 9]])
    subjects = torch.from_numpy(pool.subjects[[0, 9]])
    vectors = model.embedder.embed([pool.clips[0].replace(joints=pool.joints[i]) for i in range(len(pool.joints))])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    partners, template = model.partners(src, subjects=subjects)  # no action labels
    for b, row in enumerate((0, 9)):
        distance = 1 - vectors[row] @ vectors.T
        expected, seen = [], {int(pool.subjects[row])}  # the source's own subject is never a partner
        for i in np.lexsort((np.arange(len(distance)), distance)):
            if int(pool.subjects[i]) not in seen:
                expected.append(int(i))
                seen.add(int(pool.subjects[i]))
        assert partners[b].tolist() == expected[:2]
        assert int(model.bank.actions[template[b]]) == int(pool.actions[expected[0]])
    # a labelled source is averaged as without the embedder, and its embedding is never computed
    actions = torch.from_numpy(pool.actions[[0, 9]])
    model.embedder = None  # would fail if used
    labelled = model.partners(src, actions=actions, subjects=subjects)
    expected = plain.partners(src, actions=actions, subjects=subjects)
    assert torch.equal(labelled[0], expected[0]) and torch.equal(labelled[1], expected[1])


def test_an_embedder_travels_in_the_file_and_must_be_an_action_recognizer_of_the_topology(pool, tmp_path):
    model = fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=2, embedder=_embedder())
    path = save_checkpoint(tmp_path / "ksame_embedded.pt", model, data={}, metrics={})
    checkpoint = load_checkpoint(path)
    assert checkpoint["config"]["embedder"]["labels"] == [1, 2, 3] and "pool_embeddings" in checkpoint["state_dict"]
    loaded = build_model_from_checkpoint(checkpoint, source=path)
    src, ref = torch.from_numpy(pool.joints[:3]), torch.from_numpy(pool.joints[3:6])
    torch.testing.assert_close(loaded.retarget(src, ref), model.retarget(src, ref))
    every, subjects = torch.from_numpy(pool.joints), torch.from_numpy(pool.subjects)
    by_embedding = loaded.partners(every, subjects=subjects)[0]
    assert not torch.equal(by_embedding, fit(pool, 2).partners(every, subjects=subjects)[0])  # the embedding chose
    del checkpoint["state_dict"]["pool_embeddings"]
    with pytest.raises(CheckpointError, match="holds no pool embeddings"):
        build_model_from_checkpoint(checkpoint, source=path)
    with pytest.raises(ValueError, match="must be an action recognizer of ntu25"):
        fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=2,
                         embedder=_embedder(task="subject"))
    with pytest.raises(ValueError, match="k-same only"):
        fit_motion_model("retime", "ntu25", pool.joints, pool.actions, pool.subjects, embedder=_embedder())


def test_subject_clusters_are_fixed_groups_of_k_in_label_order_the_remainder_joining_the_last():
    from dtmr.models.motion.ksame import subject_clusters

    clusters = subject_clusters(np.array([10, 3, 1, 2, 4, 5, 6, 7, 8, 9, 1]), 3)
    assert [clusters[s].tolist() for s in (1, 3, 5, 7, 10)] == [[1, 2, 3], [1, 2, 3], [4, 5, 6], [7, 8, 9, 10],
                                                                [7, 8, 9, 10]]
    fours = subject_clusters(np.arange(1, 11), 4)
    assert fours[4].tolist() == [1, 2, 3, 4] and fours[5].tolist() == [5, 6, 7, 8, 9, 10]
    assert subject_clusters(np.arange(1, 5), 4)[2].tolist() == [1, 2, 3, 4]


def test_cluster_partners_come_from_the_sources_cluster_only(pool, tmp_path):
    model = fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=2, partners="cluster")
    nearest = fit(pool, 2)
    every, subjects = torch.from_numpy(pool.joints), torch.from_numpy(pool.subjects)
    actions = torch.from_numpy(pool.actions)
    chosen = model.partners(every, actions=actions, subjects=subjects)[0].numpy()[:, 0]
    partner_subjects = pool.subjects[chosen]
    mate = {1: 2, 2: 1, 3: 4, 4: 3}  # clusters {1, 2} and {3, 4}
    assert partner_subjects.tolist() == [mate[int(s)] for s in pool.subjects]
    assert (pool.actions[chosen] == pool.actions).all()
    assert not np.array_equal(chosen, nearest.partners(every, actions=actions, subjects=subjects)[0].numpy()[:, 0])
    # a subject the pool does not hold, or an unknown one, has no cluster: the nearest other subject
    unknown = torch.full_like(subjects, -1)
    assert torch.equal(model.partners(every, actions=actions, subjects=unknown)[0],
                       nearest.partners(every, actions=actions, subjects=unknown)[0])
    path = save_checkpoint(tmp_path / "cluster.pt", model, data={}, metrics={})
    loaded = build_model_from_checkpoint(load_checkpoint(path), source=path)
    assert loaded.config_dict() == {"k": 2, "timing": "source", "partners": "cluster"}
    assert torch.equal(loaded.partners(every, actions=actions, subjects=subjects)[0][:, 0], torch.from_numpy(chosen))
    # a cluster whose members lack an action could not give k - 1 partners: refused when fitted
    lacking = (pool.subjects != 2) | (pool.actions != 1)
    with pytest.raises(ValueError, match="the cluster of subjects 1, 2 has 1 with clips of action 1"):
        fit_motion_model("ksame", "ntu25", pool.joints[lacking], pool.actions[lacking], pool.subjects[lacking], k=2,
                         partners="cluster")
    with pytest.raises(ValueError, match="partners must be one of nearest, cluster"):
        fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=2, partners="random")


def test_cluster_means_give_every_member_of_a_cluster_the_same_clip_of_an_action(pool, tmp_path):
    model = fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=2, timing="template",
                             partners="cluster-mean")
    every, subjects = torch.from_numpy(pool.joints), torch.from_numpy(pool.subjects)
    actions = torch.from_numpy(pool.actions)
    means = model.average(every, actions=actions, subjects=subjects)
    for a in np.unique(pool.actions):
        firsts = []
        for members in ([1, 2], [3, 4]):
            rows = np.flatnonzero((pool.actions == a) & np.isin(pool.subjects, members))
            assert len(rows) == 4 and all(torch.equal(means[rows[0]], means[r]) for r in rows)  # 2 people x 2 reps
            firsts.append(rows[0])
        assert not torch.allclose(means[firsts[0]], means[firsts[1]])  # two clusters, two means
    # the mean is of each member's pool clip nearest the template, warped onto it: none of the source's own
    template = model.bank.choose(every[:1], actions[:1])
    partners, _ = model.partners(every[:1], actions=actions[:1], subjects=subjects[:1])
    members = np.flatnonzero((pool.actions == pool.actions[0]) & np.isin(pool.subjects, [1, 2]))
    features = bone_direction_features(torch.from_numpy(pool.joints[members]), NTU25)
    timing = model.bank.templates[template]
    distance = pair_distances(bone_direction_features(timing, NTU25), features,
                              np.stack([np.zeros(len(members), dtype=int), np.arange(len(members))], axis=1))
    chosen = [members[pool.subjects[members] == s][np.argmin(distance[pool.subjects[members] == s])] for s in (1, 2)]
    expected = warp_onto(torch.from_numpy(pool.joints[chosen]), timing.expand(2, -1, -1, -1), NTU25).mean(dim=0)
    torch.testing.assert_close(means[0], expected)
    assert pool.subjects[0] == 1 and partners[0].tolist() == [chosen[1], -1, -1]  # the other member, padded
    # a subject the pool does not hold takes the cluster of the nearest pool clip's subject
    unknown = model.average(every[:1], actions=actions[:1], subjects=torch.tensor([-1]))
    assert torch.equal(unknown[0], means[0]) or torch.equal(unknown[0], means[np.flatnonzero(
        (pool.actions == pool.actions[0]) & (pool.subjects == 3))[0]])
    path = save_checkpoint(tmp_path / "means.pt", model, data={}, metrics={})
    loaded = build_model_from_checkpoint(load_checkpoint(path), source=path)
    assert loaded.config_dict() == {"k": 2, "timing": "template", "partners": "cluster-mean"}
    assert torch.equal(loaded.average(every, actions=actions, subjects=subjects), means)
    with pytest.raises(ValueError, match="cluster-mean partners average on the action template's timing"):
        fit_motion_model("ksame", "ntu25", pool.joints, pool.actions, pool.subjects, k=2, partners="cluster-mean")
    with pytest.raises(ValueError, match="cluster means take the action from the label or the nearest template"):
        KSameMotion("ntu25", model.bank, *(torch.from_numpy(a) for a in (pool.joints, pool.actions, pool.subjects)),
                    k=2, timing="template", partners="cluster-mean", embedder=object())
