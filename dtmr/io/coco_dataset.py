"""COCO's own dataset layout, `{"images", "annotations", "categories"}` (the COCO keypoint files
`person_keypoints_*.json`, pycocotools, PoseTrack), cut into image sequences: the keypoint readers of
`dtmr.io.coco_json` turn each sequence into one person's keypoints over time. Rules: docs/io.md ("COCO
dataset layout").

- Images are grouped by `video_id` (PoseTrack 2018 names it `vid_id`) when they have one, else by the folder of
  their `file_name` (frames of one video in one folder); a group is ordered by `frame_id` when every image has
  an integer one, else by the last number in the file name when every name has one, else as listed.
- A group whose annotations carry `track_id` gives one sequence per track; otherwise one sequence per group
  (the reader follows its main person).
- Keypoints are matched to COCO-17 by the person category's `keypoints` names (PoseTrack's `head_bottom` and
  `head_top` have no COCO counterpart; its eyes are then missing); without names, 17 (or COCO-WholeBody's 133,
  whose first 17 are COCO's) in COCO order. `v` = 0 ("not labelled") is a missing keypoint.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..skeleton import COCO17
from .json_numbers import check_count, numbers_array

#: images per file: COCO train2017 has 64 115 with people; a long PoseTrack set a few hundred thousand
MAX_IMAGES = 2_000_000
MAX_ANNOTATIONS = 2_000_000
#: a group of images longer than this is refused (it is one clip: 200 000 frames is 1 h 51 min at 30 fps)
MAX_SEQUENCE_FRAMES = 200_000
MAX_PEOPLE_PER_IMAGE = 1000
WHOLEBODY_KEYPOINTS = 133
#: the joints a category's names must include: the lifter and every mapping need hips and shoulders
REQUIRED_NAMES = ("left_shoulder", "right_shoulder", "left_hip", "right_hip")


@dataclass(eq=False)
class ImageSequence:
    """One video (or one track of it): `frames[i]` lists the (points (17, 2), scores (17,)) of the people
    annotated in its i-th image, in order; images without annotations are empty frames."""

    name: str
    frames: list[list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=list)


def is_coco_dataset(doc) -> bool:
    """Whether a parsed JSON document has COCO's dataset layout."""
    return isinstance(doc, dict) and "images" in doc and "annotations" in doc


def dataset_sequences(doc: dict, path: str) -> list[ImageSequence]:
    """The sequences of a dataset-layout document (see the module's rules); sequences without any
    annotation (unlabelled videos) are left out. InputError naming `path` for anything malformed."""
    category, columns = _person_category(doc.get("categories"), path)
    images = _images(doc["images"], path)
    annotations = doc["annotations"]
    if not isinstance(annotations, list):
        raise InputError(path, "'annotations' must be a list")
    check_count(len(annotations), MAX_ANNOTATIONS, "annotations", path)
    people: dict[object, list[tuple[object, np.ndarray, np.ndarray]]] = {}
    for i, entry in enumerate(annotations):
        if not isinstance(entry, dict) or "image_id" not in entry:
            raise InputError(path, f"annotation {i} is not an object with 'image_id'")
        if category is not None and entry.get("category_id", category) != category:
            continue  # another category (COCO's instance files hold all 80)
        if "keypoints" not in entry:
            raise InputError(path, f"annotation {i} of the person category has no 'keypoints'")
        image = _image_key(entry["image_id"], f"annotation {i} 'image_id'", path)
        if image not in images:
            raise InputError(path, f"annotation {i} refers to image {str(image)[:40]}, which 'images' does not list")
        points, scores = _keypoints(entry["keypoints"], columns, f"annotation {i}", path)
        track = entry.get("track_id")
        if track is not None and (isinstance(track, bool) or not isinstance(track, (int, str))):
            raise InputError(path, f"annotation {i}: 'track_id' must be an integer or a string")
        found = people.setdefault(image, [])
        found.append((track, points, scores))
        check_count(len(found), MAX_PEOPLE_PER_IMAGE, f"people in image {str(image)[:40]!r}", path)
    return _sequences(images, people, path)


# -- categories and keypoints -------------------------------------------------------------------------------


def _person_category(categories, path: str) -> tuple[object, np.ndarray | None]:
    """(the category id annotations must have, or None for any; for each COCO-17 joint its column in an
    annotation's keypoints, -1 when the category does not name it, or None: COCO order)."""
    if categories is None:
        return None, None
    if not isinstance(categories, list) or not all(isinstance(c, dict) for c in categories):
        raise InputError(path, "'categories' must be a list of objects")
    with_points = [c for c in categories if isinstance(c.get("keypoints"), list) and c["keypoints"]]
    if not with_points:
        return None, None
    person = next((c for c in with_points if c.get("name") == "person"), with_points[0])
    names = person["keypoints"]
    if not all(isinstance(n, str) for n in names):
        raise InputError(path, "the person category's 'keypoints' must be names")
    check_count(len(names), WHOLEBODY_KEYPOINTS, "keypoint names in the person category", path)
    missing = [n for n in REQUIRED_NAMES if n not in names]
    if missing:
        raise InputError(path, f"the person category's keypoints lack {', '.join(missing)}: not a COCO-17 body")
    columns = np.array([names.index(n) if n in names else -1 for n in COCO17.joint_names])
    if not isinstance(person.get("id"), (int, str)) or isinstance(person.get("id"), bool):
        raise InputError(path, "the person category has no integer or string 'id'")
    return person["id"], columns


def _keypoints(value, columns: np.ndarray | None, what: str, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(17, 2) pixels and (17,) visibilities (0: not labelled) of one annotation's `[x, y, v] * K`."""
    flat = numbers_array(value, (-1,), f"{what} 'keypoints'", path)
    if flat.size % 3:
        raise InputError(path, f"{what}: 'keypoints' must be (x, y, v) triples, got {flat.size} numbers")
    triples = flat.reshape(-1, 3)
    count = triples.shape[0]
    if columns is None:
        if count not in (COCO17.num_joints, WHOLEBODY_KEYPOINTS):
            raise InputError(path, f"{what} has {count} keypoints; COCO-17 (17) or COCO-WholeBody (133) expected")
        rows = triples[: COCO17.num_joints]
    else:
        if count <= columns.max():
            raise InputError(path, f"{what} has {count} keypoints; the person category names {columns.max() + 1}+")
        rows = np.where((columns >= 0)[:, None], triples[np.maximum(columns, 0)], 0.0)
    return rows[:, :2].copy(), rows[:, 2].copy()


# -- images and grouping ------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Image:
    position: int
    group: str
    frame_id: int | None
    name_number: int | None


def _image_key(value, what: str, path: str):
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(path, f"{what} must be an integer or a string, got {str(value)[:40]}")
    return value


def _images(images, path: str) -> dict[object, _Image]:
    if not isinstance(images, list):
        raise InputError(path, "'images' must be a list")
    check_count(len(images), MAX_IMAGES, "images", path)
    found: dict[object, _Image] = {}
    for i, image in enumerate(images):
        if not isinstance(image, dict) or "id" not in image:
            raise InputError(path, f"image {i} is not an object with 'id'")
        key = _image_key(image["id"], f"image {i} 'id'", path)
        if key in found:
            raise InputError(path, f"image id {str(key)[:40]!r} appears twice")
        video = image.get("video_id", image.get("vid_id"))
        name = image.get("file_name")
        name = name.replace("\\", "/") if isinstance(name, str) else ""
        if video is not None:
            group = f"video {str(video)[:80]}"
        else:
            folder = posixpath.dirname(name)
            group = folder[-80:]
        frame_id = image.get("frame_id")
        frame_id = frame_id if isinstance(frame_id, int) and not isinstance(frame_id, bool) else None
        digits = re.findall(r"\d+", posixpath.basename(name))
        found[key] = _Image(position=i, group=group, frame_id=frame_id,
                            name_number=int(digits[-1][-18:]) if digits else None)
    return found


def _ordered(members: list[tuple[object, _Image]]) -> list[object]:
    """Image keys of one group in frame order (module docstring)."""
    if all(image.frame_id is not None for _, image in members):
        members = sorted(members, key=lambda m: (m[1].frame_id, m[1].position))
    elif all(image.name_number is not None for _, image in members):
        members = sorted(members, key=lambda m: (m[1].name_number, m[1].position))
    return [key for key, _ in members]


def _sequences(images: dict[object, _Image], people: dict, path: str) -> list[ImageSequence]:
    groups: dict[str, list[tuple[object, _Image]]] = {}
    for key, image in images.items():
        groups.setdefault(image.group, []).append((key, image))
    sequences = []
    for group, members in groups.items():
        order = _ordered(members)
        if not any(people.get(key) for key in order):
            continue  # an unlabelled video
        check_count(len(order), MAX_SEQUENCE_FRAMES, f"images in {group or 'the image list'}", path)
        tracks = sorted({str(t) for key in order for t, _, _ in people.get(key, []) if t is not None},
                        key=lambda t: (len(t), t))
        if not tracks:
            frames = [[(p, s) for _, p, s in people.get(key, [])] for key in order]
            sequences.append(ImageSequence(name=group, frames=frames))
            continue
        for track in tracks:
            frames = [[(p, s) for t, p, s in people.get(key, []) if str(t) == track] for key in order]
            sequences.append(ImageSequence(name=f"{group} track {track}".strip(), frames=frames))
    if not sequences:
        raise InputError(path, "no annotation of a person in any image")
    return sequences
