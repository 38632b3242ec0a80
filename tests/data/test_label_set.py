"""Labels by name (dtmr.data.label_set): the three mismatches of issue 18 on small synthetic label sets."""

from dtmr.data.label_set import LabelSet, RecognizerClasses, TrainedOn, match_classes, normalize_name


def library(action_names, subjects=(1, 2), name="lib") -> LabelSet:
    return LabelSet.build(name, "ntu25", range(len(action_names)), action_names, subjects)


def test_classes_match_by_name_not_by_number():
    """A recognizer trained on ["wave", "clap"] shown a library whose label 0 is "clap"."""
    match = match_classes(RecognizerClasses("action", (0, 1), ("wave", "clap")), library(["Clap", "walk_in place"]))
    assert match.class_of(0) == 1 and match.class_of(1) is None
    assert match.missing_note(1) == "no class of the action recognizer is named 'walk_in place': the true action is not marked"
    assert match.missing_note(0) == "" and "1 of the library's 2 action labels" in match.note


def test_a_recognizer_of_another_data_set_covers_nothing_and_says_so():
    """N-UCLA's "pick up with two hands" is label 1, the synthetic set's "walk in place" too: no ✔."""
    synthetic = RecognizerClasses("action", (1, 2), ("walk in place", "wave"), TrainedOn("synthetic"))
    match = match_classes(synthetic, library(["pick up with one hand", "pick up with two hands"]))
    assert match.covers_nothing and match.class_of(1) is None
    assert match.missing_note(1) == "action recognizer trained on the synthetic set: its classes are not this library's"


def test_subjects_match_only_within_the_same_data_set():
    labels = library(["wave"], subjects=(1, 2, 3))
    same = match_classes(RecognizerClasses("subject", (3, 1), ("s3", "s1"), TrainedOn("lib", labels.fingerprint)), labels)
    assert same.class_of(1) == 1 and same.class_of(3) == 0 and same.class_of(2) is None
    other = match_classes(RecognizerClasses("subject", (1, 2), ("s1", "s2"), TrainedOn("synthetic", "0" * 16)), labels)
    assert other.class_of(1) is None and "not this library's people" in other.missing_note(1)
    unknown = match_classes(RecognizerClasses("subject", (1, 2), ("s1", "s2")), labels)
    assert unknown.class_of(1) is None and "cannot be checked" in unknown.missing_note(1)


def test_same_data_set_matches_unnamed_labels_by_id():
    labels = LabelSet.build("x", "ntu25", [4, 5], None, [1])
    match = match_classes(RecognizerClasses("action", (5, 4), ("action 5", "action 4"), TrainedOn("x", labels.fingerprint)),
                          labels)
    assert match.class_of(4) == 1 and match.class_of(5) == 0
    assert match_classes(RecognizerClasses("action", (4,), ("action 4",)), labels).covers_nothing  # no names


def test_the_fingerprint_is_the_label_set_not_the_file():
    a = LabelSet.build("a", "ntu25", [0, 1, 1], ["Wave", "clap"], [1, 2])
    assert a.fingerprint == LabelSet.build("b", "kinect_v1_20", [1, 0], ["wave", "Clap"], [2, 1, -1]).fingerprint
    assert a.fingerprint != LabelSet.build("a", "ntu25", [0, 1], ["wave", "clap"], [1, 3]).fingerprint
    assert a.fingerprint != LabelSet.build("a", "ntu25", [0, 1], ["wave", "kick"], [1, 2]).fingerprint
    assert normalize_name("  Walk_In   place ") == "walk in place"
    assert match_classes(RecognizerClasses("action", (0,), ("wave",)), None).covers_nothing


def test_shared_action_labels_keep_a_label_only_where_both_sides_name_it_alike():
    from dtmr.data.label_set import fitted_action_names, record_label_set, shared_action_labels

    data = record_label_set({"path": "a.h5", "topology": "ntu25", "actions": [0, 1, 2],
                             "action_names": ["Pick_up", "wave", "action 2"], "subjects": [1]})
    fitted = fitted_action_names(data)
    assert fitted == {0: "pick up", 1: "wave"}  # "action 2" is the trainer's stand-in for an unnamed label
    library = {0: "pick up", 1: "clap", 2: "throw"}
    assert shared_action_labels([0, 1, 2, None, -1], library, fitted).tolist() == [0, -1, -1, -1, -1]
    assert fitted_action_names({}) == {} and fitted_action_names(None) == {}
