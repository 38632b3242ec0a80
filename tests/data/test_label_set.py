"""Labels by name (dtmr.data.label_set): the three mismatches of issue 18 on small synthetic label sets."""

from dtmr.data.label_set import LabelSet, RecognizerClasses, TrainedOn, match_classes, normalize_name, record_label_set


def library(action_names, subjects=(1, 2), name="lib") -> LabelSet:
    return LabelSet.build(name, "ntu25", range(len(action_names)), action_names, subjects)


def test_classes_match_by_name_not_by_number():
    """A recognizer trained on ["wave", "clap", "walk in place"] shown a library whose label 0 is "clap"."""
    recognizer = RecognizerClasses("action", (0, 1, 2), ("wave", "clap", "walk in place"))
    match = match_classes(recognizer, library(["Clap", "walk_in place"]))
    assert match.class_of(0) == 1 and match.class_of(1) == 2 and match.withheld == "" and match.missing_note(0) == ""


def test_a_few_shared_names_do_not_make_another_data_sets_recognizer_a_prediction():
    """N-UCLA and the synthetic set both have "throw": the synthetic recognizer still shows no prediction."""
    synthetic = RecognizerClasses("action", (1, 2, 3), ("walk in place", "wave", "throw"), TrainedOn("synthetic"))
    match = match_classes(synthetic, library(["pick up with one hand", "throw"]))
    assert match.covers_nothing and match.class_of(1) is None
    assert match.withheld == match.missing_note(1) == ("action recognizer trained on another label set (synthetic, "
                                                       "3 actions; 1 of this library's 2 among them): no prediction")


def test_a_recognizer_of_another_data_set_covers_nothing_and_says_so():
    """N-UCLA's "pick up with two hands" is label 1, the synthetic set's "walk in place" too: no ✔."""
    synthetic = RecognizerClasses("action", (1, 2), ("walk in place", "wave"), TrainedOn("synthetic"))
    match = match_classes(synthetic, library(["pick up with one hand", "pick up with two hands"]))
    assert match.covers_nothing and match.class_of(1) is None
    assert match.withheld == "action recognizer trained on another label set (synthetic, 2 actions): no prediction"
    assert match.missing_note(1) == match.withheld


def test_subjects_match_only_within_the_same_data_set():
    labels = library(["wave"], subjects=(1, 2, 3))
    same = match_classes(RecognizerClasses("subject", (3, 1), ("s3", "s1"), TrainedOn("lib", labels.fingerprint)), labels)
    assert same.class_of(1) == 1 and same.class_of(3) == 0 and same.class_of(2) is None
    assert same.withheld == "" and "1 of the library's 3 subject labels" in same.missing_note(2)
    other = match_classes(RecognizerClasses("subject", (1, 2), ("s1", "s2"), TrainedOn("synthetic", "0" * 16)), labels)
    assert other.withheld == "subject recognizer trained on other people (synthetic, 2 subjects): no prediction"
    unknown = match_classes(RecognizerClasses("subject", (1, 2), ("s1", "s2")), labels)
    assert unknown.class_of(1) is None and "without recorded training subjects" in unknown.withheld


def trained_on(labels: LabelSet) -> TrainedOn:
    """What a checkpoint trained on `labels` records (`record_label_set` of its trainer's description)."""
    data = {"path": f"{labels.name}.h5", "topology": labels.topology, "subjects": list(labels.subjects),
            "actions": [a for a, _ in labels.actions], "action_names": [n or f"action {a}" for a, n in labels.actions]}
    return TrainedOn.of_checkpoint_data(record_label_set(data))


def test_a_part_of_the_training_data_set_is_that_data_set():
    """The bundled demo is subjects 1-10 of the synthetic set's 40: the same people, the same actions."""
    synthetic = trained_on(LabelSet.build("synthetic", "ntu25", [1, 2], ["", "wave", "clap"], range(1, 41)))
    assert synthetic.same_data_set(LabelSet.build("demo", "ntu25", [1, 2], ["", "wave", "clap"], range(1, 11)))
    assert synthetic.same_data_set(LabelSet.build("demo", "ntu25", [2], ["", "wave", "clap"], [3]))
    for other in (LabelSet.build("x", "ntu25", [1, 2], ["", "wave", "kick"], [1]),  # another action name
                  LabelSet.build("x", "ntu25", [1, 2], ["", "wave", "clap"], [0, 1]),  # a subject it never saw
                  LabelSet.build("x", "ntu25", [1, 3], ["", "wave", "clap", "jump"], [1])):  # an action it lacks
        assert synthetic.same_data_set(other) is False
    # ids alone are no identity: an unnamed library is its own data set only by an equal fingerprint
    unnamed = trained_on(LabelSet.build("u", "ntu25", [1, 2], None, range(1, 41)))
    assert unnamed.same_data_set(LabelSet.build("v", "ntu25", [1, 2], None, [1, 2])) is False
    assert unnamed.same_data_set(LabelSet.build("v", "ntu25", [1, 2], None, range(1, 41))) is True
    assert synthetic.same_data_set(LabelSet.build("v", "ntu25", [], None, [1])) is None  # no action labels


def test_a_checkpoint_that_predates_the_record_is_read_from_its_description():
    """The bundled recognizers list actions, names and subjects but were written before `label_set`."""
    description = {"path": "synthetic.h5", "subjects": [1, 2], "actions": [1, 2], "action_names": ["wave", "clap"]}
    assert TrainedOn.of_checkpoint_data(description) == TrainedOn.of_checkpoint_data(record_label_set(description))
    assert TrainedOn.of_checkpoint_data(description).fingerprint is not None
    assert TrainedOn.of_checkpoint_data({"path": "x.h5", "subjects": "?", "actions": 3}) == TrainedOn("x")


def test_the_bundled_demo_is_the_data_set_of_every_bundled_model():
    """The ⚠ "not on this library's data" of every bundled model on the bundled demo (issue 42)."""
    from dtmr.io.sources import open_clip_source
    from dtmr.models.checkpoints.header import read_checkpoint_header
    from dtmr.resources import DEMO_LIBRARY, MODELS_DIR, resource_path

    source = open_clip_source(resource_path(*DEMO_LIBRARY))
    try:
        demo = LabelSet.of_source(source)
    finally:
        source.close()
    headers = [read_checkpoint_header(p) for p in sorted(resource_path(*MODELS_DIR).glob("*.pt"))]
    assert len(headers) >= 4
    for header in headers:
        assert header.trained_on.same_data_set(demo) is True, header.path.name
        if header.classes is not None:
            match = match_classes(header.classes, demo)
            assert match.withheld == "" and match.note == "", header.path.name
            assert match.class_of(demo.actions[0][0] if header.task == "action" else demo.subjects[0]) is not None


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
