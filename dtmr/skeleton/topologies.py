"""The registered joint sets: NTU-25 (canonical), Kinect v1 20 (N-UCLA), UI-PRMD 22, COCO-17, Human3.6M-17 and
MediaPipe-33.

NTU-25 uses the Kinect v2 joint order (SPEC_NOTES §5.1) and the pelvis-rooted tree ("Convention B" of
SPEC_NOTES §5.2): the hand tip and the thumb both hang off the hand. See docs/topologies.md.
"""

from __future__ import annotations

from .topology import Topology, register_topology

NTU25 = register_topology(
    Topology(
        name="ntu25",
        description="NTU RGB+D / Kinect v2, 25 joints",
        joint_names=(
            "spine_base", "spine_mid", "neck", "head",
            "left_shoulder", "left_elbow", "left_wrist", "left_hand",
            "right_shoulder", "right_elbow", "right_wrist", "right_hand",
            "left_hip", "left_knee", "left_ankle", "left_foot",
            "right_hip", "right_knee", "right_ankle", "right_foot",
            "spine_shoulder", "left_hand_tip", "left_thumb", "right_hand_tip", "right_thumb",
        ),
        parents=(-1, 0, 20, 2, 20, 4, 5, 6, 20, 8, 9, 10, 0, 12, 13, 14, 0, 16, 17, 18, 1, 7, 7, 11, 11),
        # feet, hand tips, thumbs, head: the 7 end-effectors of PMR and DisentangledTMR
        end_effectors=(19, 15, 23, 24, 21, 22, 3),
        feet=((14, 15), (18, 19)),
        left_hip=12,
        right_hip=16,
    )
)

KINECT_V1_20 = register_topology(
    Topology(
        name="kinect_v1_20",
        description="Kinect v1, 20 joints (N-UCLA order)",
        joint_names=(
            "hip_center", "spine", "shoulder_center", "head",
            "left_shoulder", "left_elbow", "left_wrist", "left_hand",
            "right_shoulder", "right_elbow", "right_wrist", "right_hand",
            "left_hip", "left_knee", "left_ankle", "left_foot",
            "right_hip", "right_knee", "right_ankle", "right_foot",
        ),
        parents=(-1, 0, 1, 2, 2, 4, 5, 6, 2, 8, 9, 10, 0, 12, 13, 14, 0, 16, 17, 18),
        end_effectors=(19, 15, 11, 7, 3),
        feet=((14, 15), (18, 19)),
        left_hip=12,
        right_hip=16,
    )
)

UIPRMD22 = register_topology(
    Topology(
        name="uiprmd22",
        description="UI-PRMD Kinect v2 segments, 22 joints",
        joint_names=(
            "waist", "spine", "chest", "neck", "head", "head_tip",
            "left_collar", "left_upper_arm", "left_forearm", "left_hand",
            "right_collar", "right_upper_arm", "right_forearm", "right_hand",
            "left_upper_leg", "left_lower_leg", "left_foot", "left_leg_toes",
            "right_upper_leg", "right_lower_leg", "right_foot", "right_leg_toes",
        ),
        parents=(-1, 0, 1, 2, 3, 4, 2, 6, 7, 8, 2, 10, 11, 12, 0, 14, 15, 16, 0, 18, 19, 20),
        end_effectors=(21, 17, 13, 9, 5),
        feet=((16, 17), (20, 21)),
        left_hip=14,
        right_hip=18,
    )
)

COCO17 = register_topology(
    Topology(
        name="coco17",
        description="COCO keypoints, 17 joints (tree rooted at the left hip)",
        joint_names=(
            "nose", "left_eye", "right_eye", "left_ear", "right_ear",
            "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
            "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
        ),
        # COCO has no pelvis or spine joints: the tree is rooted at the left hip, the torso is the
        # quadrilateral left hip - right hip / left hip - left shoulder - right shoulder.
        parents=(5, 0, 0, 1, 2, 11, 5, 5, 6, 7, 8, -1, 11, 11, 12, 13, 14),
        end_effectors=(16, 15, 10, 9, 0),
        feet=((15,), (16,)),
        left_hip=11,
        right_hip=12,
    )
)

H36M17 = register_topology(
    Topology(
        name="h36m17",
        description="Human3.6M, 17 joints (VideoPose3D / MMPose lifter output)",
        # MMPose's names and order (configs/_base_/datasets/h36m.py), the same 17 joints in the same order as
        # VideoPose3D and 3d-pose-baseline (Hip, RHip, RKnee, RFoot, LHip, LKnee, LFoot, Spine, Thorax,
        # Neck/Nose, Head, LShoulder, ...). H36M's "foot" is the ankle, "neck_base" sits at the chin/nose
        # and "head" is the top of the head.
        joint_names=(
            "root", "right_hip", "right_knee", "right_foot", "left_hip", "left_knee", "left_foot",
            "spine", "thorax", "neck_base", "head",
            "left_shoulder", "left_elbow", "left_wrist", "right_shoulder", "right_elbow", "right_wrist",
        ),
        parents=(-1, 0, 1, 2, 0, 4, 5, 0, 7, 8, 9, 8, 11, 12, 8, 14, 15),
        end_effectors=(3, 6, 16, 13, 10),
        feet=((6,), (3,)),
        left_hip=4,
        right_hip=1,
    )
)

MEDIAPIPE33 = register_topology(
    Topology(
        name="mediapipe33",
        description="MediaPipe Pose / BlazePose, 33 landmarks (FreeMoCap body; tree rooted at the left hip)",
        # MediaPipe's PoseLandmark order, names lower-cased as FreeMoCap writes them
        joint_names=(
            "nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye",
            "right_eye_outer", "left_ear", "right_ear", "mouth_left", "mouth_right",
            "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
            "left_pinky", "right_pinky", "left_index", "right_index", "left_thumb", "right_thumb",
            "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
            "left_heel", "right_heel", "left_foot_index", "right_foot_index",
        ),
        # No pelvis or spine, as in COCO: rooted at the left hip, the right hip and the left shoulder hang off
        # it, the right shoulder and the nose off the left shoulder; the eyes run nose -> inner -> eye ->
        # outer -> ear (MediaPipe's own connections); fingers, heels and toes hang off wrists and ankles.
        parents=(
            11, 0, 1, 2, 0, 4, 5, 3, 6, 0, 0,
            23, 11, 11, 12, 13, 14,
            15, 16, 15, 16, 15, 16,
            -1, 23, 23, 24, 25, 26,
            27, 28, 27, 28,
        ),
        end_effectors=(32, 31, 20, 22, 19, 21, 0),
        feet=((27, 29, 31), (28, 30, 32)),
        left_hip=23,
        right_hip=24,
    )
)
